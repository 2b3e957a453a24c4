"""Quick fixes for one finding: built from the held analysis, beside a whole-file parse.

The language server answers ``textDocument/codeAction`` with the fixes of the findings
under the cursor, built from the analysis it holds for that document version. This prints,
round by round, the time to build every fix of one finding mid-module after a one-line
edit: from the held (sparse) analysis, as the server does, and from a context that parses
and tokenizes the whole file (how fixes were built before), at 1,000, 5,000 and 50,000
lines. Run from the repository root::

    .venv/bin/python bench/fix_bench.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

from generate import module

from jaxtarget.config import Layer, resolve
from jaxtarget.engine import Engine
from jaxtarget.environment import load_environment
from jaxtarget.fixes.layout import FixContext
from jaxtarget.semantics.source import ChunkCache


def source_of(n_lines: int) -> str:
    base = module()
    copies = max(1, round(n_lines / base.count("\n")))
    text = "".join(base.replace("block_", f"b{i}_") if i else base for i in range(copies))
    if n_lines < base.count("\n"):
        text = "".join(text.splitlines(keepends=True)[:n_lines])
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    engine = Engine(resolve(Layer(target_backends=("cpu", "tpu"))), load_environment(None))
    head = f"{'lines':>7} {'held analysis (min/median/max ms)':>36}"
    print(f"{head} {'whole-file parse (min/median/max ms)':>38}")
    for n in (1_000, 5_000, 50_000):
        lines = source_of(n).splitlines(keepends=True)
        cache = ChunkCache()
        held: list[float] = []
        whole: list[float] = []
        for r in range(args.rounds):
            lines[len(lines) // 2] = f"x_{r} = 1\n"
            text = "".join(lines)
            analysis = engine.check(text, "bench.py", sparse=True, cache=cache)
            finding = analysis.findings[len(analysis.findings) // 2]
            start = time.perf_counter()
            analysis.fixes(finding)
            held.append((time.perf_counter() - start) * 1000)
            # the same fixes from a context that parses and tokenizes the whole text
            v = analysis.violations[finding.id]
            tree = analysis.module.tree if analysis.module is not None else None
            ctx = FixContext(text, "bench.py", analysis.version, tree)
            start = time.perf_counter()
            for spec in v.rule.fixes:
                spec.build(ctx, v)
            whole.append((time.perf_counter() - start) * 1000)

        def cell(values: list[float]) -> str:
            return f"{min(values):.1f}/{statistics.median(values):.1f}/{max(values):.1f}"

        print(f"{n:>7} {cell(held):>36} {cell(whole):>38}", flush=True)


if __name__ == "__main__":
    main()
