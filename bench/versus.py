"""This checkout's engine and server side by side with another checkout's, in one run.

Runs each checkout's own ``bench/check_bench.py`` and ``bench/lsp_bench.py`` in turn,
round by round (A B A B ...), so that drift in the machine's speed falls on both, and
prints each figure for both with the ratio A/B per round and its median. The other
checkout is any folder holding jaxtarget's ``server/`` and ``bench/`` at some commit
(``git worktree add /tmp/base <commit>``); both run with this checkout's interpreter.

Usage (from the repository root)::

    .venv/bin/python bench/versus.py /tmp/base [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: label -> (script, pattern of the figure in its output)
FIGURES: dict[str, tuple[str, str]] = {
    "full check, warm (ms)": ("check_bench.py", r"warm full check, median of 30:\s+([\d.]+) ms"),
    "sparse check after an edit (ms)": ("check_bench.py", r"one-line edit mid-module.*?: ([\d.]+) ms"),
    "open -> first diagnostics, cold (ms)": ("lsp_bench.py", r"open -> first diagnostics.*?:\s+([\d.]+) ms"),
    "didChange -> diagnostics, median (ms)": ("lsp_bench.py", r"over 50 edits: median ([\d.]+) ms"),
    "server RSS after 20 files (MB)": ("lsp_bench.py", r"server RSS after opening 20 files.*?: ([\d.]+) MB"),
}


def run(tree: Path, script: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree / "server")}
    proc = subprocess.run(
        [sys.executable, str(tree / "bench" / script)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{tree / 'bench' / script} failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("baseline", type=Path, help="the other checkout (B)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    trees = {"A": ROOT, "B": args.baseline.resolve()}
    scripts = sorted({s for s, _ in FIGURES.values()})
    got: dict[str, dict[str, list[float]]] = {label: {"A": [], "B": []} for label in FIGURES}
    for n in range(args.rounds):
        for side, tree in trees.items():
            for script in scripts:
                out = run(tree, script)
                for label, (s, pattern) in FIGURES.items():
                    match = re.search(pattern, out) if s == script else None
                    if match:
                        got[label][side].append(float(match.group(1)))
        print(f"round {n + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    print(f"A: {trees['A']}\nB: {trees['B']}\n")
    head = f"{'figure':40} {'A (min/median/max)':>24} {'B (min/median/max)':>24}"
    print(f"{head} {'A/B per round, median':>22}")
    for label, sides in got.items():
        a, b = sides["A"], sides["B"]
        if not a or not b:
            print(f"{label:40} {'n/a':>24} {'n/a':>24}")
            continue
        ratios = [x / y for x, y in zip(a, b, strict=False) if y]
        cell = lambda v: f"{min(v):.1f}/{statistics.median(v):.1f}/{max(v):.1f}"  # noqa: E731
        print(f"{label:40} {cell(a):>24} {cell(b):>24} {statistics.median(ratios):>22.2f}")


if __name__ == "__main__":
    main()
