"""Engine speed on a 5,000-line module: warm full check vs ast.parse vs jedi goto on every name.

Run: python bench/check_bench.py
"""

from __future__ import annotations

import ast
import gc
import statistics
import sys
import time
from pathlib import Path

import jedi

sys.path.insert(0, str(Path(__file__).parent))
from generate import module

from jaxtarget.config import Layer, resolve
from jaxtarget.engine import Engine
from jaxtarget.environment import load_environment
from jaxtarget.semantics.jedi_resolver import JediResolver
from jaxtarget.semantics.source import ChunkCache


def median_time(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    source = module()
    n_lines = source.count("\n")
    env = load_environment(None)
    engine = Engine(resolve(Layer(target_backends=("cpu", "tpu"))), env)
    cold_start = time.perf_counter()
    first = engine.check(source, "bench.py")
    cold = time.perf_counter() - cold_start
    uses = len(first.references)
    t_check = median_time(lambda: engine.check(source, "bench.py"), 30)
    t_parse = median_time(lambda: ast.parse(source), 30)
    cache = ChunkCache()
    engine.check(source, "bench.py", sparse=True, cache=cache)
    t_sparse = median_time(lambda: engine.check(source, "bench.py", sparse=True, cache=cache), 30)
    # one keystroke in the middle of the module, then the language server's check
    lines = source.splitlines(keepends=True)
    edits = iter(range(10**6))

    def keystroke() -> None:
        lines[len(lines) // 2] = f"x_{next(edits)} = 1\n"
        engine.check("".join(lines), "bench.py", sparse=True, cache=cache)

    t_keystroke = median_time(keystroke, 30)
    gc.disable()
    t_check_nogc = median_time(lambda: engine.check(source, "bench.py"), 30)
    t_parse_nogc = median_time(lambda: ast.parse(source), 30)
    gc.enable()

    assert isinstance(env.resolver, JediResolver)
    names = [n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.Name, ast.Attribute))]

    print(
        f"module: {n_lines} lines, {uses} psend/precv references, {len(first.findings)} findings, "
        f"{len(names)} names",
        flush=True,
    )
    print(f"cold first check (jedi caches empty):   {cold * 1000:8.1f} ms")
    print(f"warm full check, median of 30:          {t_check * 1000:8.1f} ms")
    print(f"ast.parse, median of 30:                {t_parse * 1000:8.1f} ms")
    print(f"check / ast.parse:                      {t_check / t_parse:8.2f} x   (goal <= 3)")
    print(
        f"  garbage collector off: check {t_check_nogc * 1000:.1f} ms, "
        f"ast.parse {t_parse_nogc * 1000:.1f} ms, ratio {t_check_nogc / t_parse_nogc:.2f} x"
    )
    print(f"sparse check (language server's mode, chunk cache warm): {t_sparse * 1000:.1f} ms")
    print(
        f"sparse check after a one-line edit mid-module, median of 30: {t_keystroke * 1000:.1f} ms",
        flush=True,
    )

    # jedi goto on every name: measured on an evenly spaced sample, scaled to all names
    sample = names[:: max(1, len(names) // 200)]
    script = jedi.Script(source, path="bench.py", environment=env.resolver.environment)

    def goto(nodes: list[ast.expr]) -> None:
        for node in nodes:
            if isinstance(node, ast.Attribute):
                line, col = (
                    node.end_lineno or node.lineno,
                    (node.end_col_offset or 0) - len(node.attr),
                )
            else:
                line, col = node.lineno, node.col_offset
            script.goto(line, col, follow_imports=True)

    goto(sample)  # warm jedi's caches for this script
    t_sample = median_time(lambda: goto(sample), 3)
    t_goto = t_sample / len(sample) * len(names)
    print(
        f"jedi goto, {len(sample)} sampled names:        {t_sample * 1000:8.1f} ms "
        f"({t_sample / len(sample) * 1000:.2f} ms per name)"
    )
    print(f"jedi goto on all {len(names)} names (scaled): {t_goto * 1000:8.1f} ms")
    print(f"goto-every-name / check:                {t_goto / t_check:8.1f} x   (goal >= 10)")


if __name__ == "__main__":
    main()
