"""`jaxtarget check` side by side with ruff and with ast.parse, round by round, in one run.

Run: .venv/bin/python bench/cli_bench.py [--rounds N] [--files N]

Installs nothing: ruff is the virtual environment's (a dev dependency). Each round runs,
one after the other on the same inputs:

- cold check of the installed jax package (``--no-cache``, an empty resolved-name store) vs
  ``ruff check --select E9,F --no-cache``, then the same check again with the names from the store;
- re-check of the unchanged package (jaxtarget's cache primed) vs ruff with its cache primed;
- ``check one.py`` (5,000 generated lines, ``--no-cache``) vs ``python -c "import ast; ast.parse(...)"``;
- peak RSS of ``check --no-cache`` on a generated 10,000-file tree (80 lines a file) (and of ruff on it), read
  with ``resource.getrusage(RUSAGE_CHILDREN)`` in a fresh helper process per run.

It prints min/median/max of each and of the ratios taken round by round. Not a test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from generate import module

BIN = Path(sys.executable).parent
JAXTARGET = [sys.executable, "-m", "jaxtarget", "check", "--target", "cpu,tpu"]
RUFF = [str(BIN / "ruff"), "check", "--select", "E9,F", "--quiet", "--exit-zero"]
JAX = Path(sysconfig.get_paths()["purelib"]) / "jax"

#: spellings that turn the generated JAX module into code that uses no API the rules report
_PLAIN = [("jnp.", "np."), ("jax.", "nn."), ("lax.", "ops."), ("dot", "mul"), ("einsum", "contract")]


def tree(folder: Path, files: int) -> Path:
    """``files`` modules of 80 generated lines in folders of 100; one in 10 uses psend/precv."""
    uses = module(80, 2)
    plain = module(80, 0)
    for old, new in _PLAIN:
        plain = plain.replace(old, new)
    for i in range(files):
        sub = folder / f"pkg{i // 100:03}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"m{i:05}.py").write_text((uses if i % 10 == 0 else plain) + f"VERSION = {i}\n")
    return folder


def timed(cmd: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    began = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - began


def peak_rss_mb(cmd: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    """The largest resident set of the command and its descendants, in a fresh helper process."""
    helper = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", helper, *cmd], cwd=cwd, env=env, capture_output=True, text=True
    )
    return int(out.stdout.strip()) / 1024


def spread(values: Sequence[float], unit: str, digits: int = 2) -> str:
    lo, mid, hi = min(values), statistics.median(values), max(values)
    return f"{lo:.{digits}f} / {mid:.{digits}f} / {hi:.{digits}f} {unit}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument(
        "--before",
        type=Path,
        help="also run an earlier jaxtarget's server/ folder (e.g. from git archive) on the same inputs",
    )
    opts = parser.parse_args()
    # jaxtarget runs from its compiled modules, as an installed package does (the checkout's
    # modules are compiled once, by the first run)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    work = Path(tempfile.mkdtemp(prefix="cli-bench-"))
    try:
        one = work / "one.py"
        one.write_text(module())
        many = tree(work / "many", opts.files)
        cached = work / "cached"
        cached.mkdir()
        ruff_cache = work / "ruff-cache"
        py_files = sum(1 for _ in JAX.rglob("*.py"))
        print(f"jax package: {JAX} ({py_files} files); cores: {os.cpu_count()}; rounds: {opts.rounds}")
        rows: dict[str, list[float]] = {}
        for r in range(opts.rounds):
            # a resolved-name store of this round's own, empty before the cold check
            store = {**os.environ, "JAXTARGET_CACHE_HOME": str(work / f"store-{r}")}
            got = {
                "cold jaxtarget": timed([*JAXTARGET, "--no-cache", str(JAX)], work, store),
                "cold ruff": timed([*RUFF, "--no-cache", str(JAX)], work),
                "store jaxtarget": timed([*JAXTARGET, "--no-cache", str(JAX)], work, store),
                # each cache primed right before (a development checkout's edits invalidate jaxtarget's)
                "prime jaxtarget": timed([*JAXTARGET, str(JAX)], cached, store),
                "prime ruff": timed([*RUFF, "--cache-dir", str(ruff_cache), str(JAX)], work),
                "cached jaxtarget": timed([*JAXTARGET, str(JAX)], cached, store),
                "cached ruff": timed([*RUFF, "--cache-dir", str(ruff_cache), str(JAX)], work),
                "one jaxtarget": timed([*JAXTARGET, "--no-cache", str(one)], work, store),
                "one ast.parse": timed(
                    [sys.executable, "-c", f"import ast; ast.parse(open({str(one)!r}).read())"], work
                ),
                "rss jaxtarget": peak_rss_mb([*JAXTARGET, "--no-cache", str(many)], work, store),
                "rss ruff": peak_rss_mb([*RUFF, "--no-cache", str(many)], work),
            }
            if opts.before is not None:
                env = {**os.environ, "PYTHONPATH": str(opts.before.resolve())}
                got["before cold"] = timed([*JAXTARGET, str(JAX)], work, env)
                got["before one"] = timed([*JAXTARGET, str(one)], work, env)
                before_cached = work / f"before-cached-{r}"
                before_cached.mkdir()
                timed([*JAXTARGET, str(JAX)], before_cached, env)
                got["before cached"] = timed([*JAXTARGET, str(JAX)], before_cached, env)
                got["before rss"] = peak_rss_mb([*JAXTARGET, str(many)], work, env)
                print(
                    f"round {r + 1}, before: cold {got['before cold']:.2f} s, "
                    f"one.py {got['before one']:.2f} s, cached {got['before cached']:.2f} s, "
                    f"peak RSS {got['before rss']:.0f} MB"
                )
            got["cold ratio"] = got["cold jaxtarget"] / got["cold ruff"]
            got["store ratio"] = got["store jaxtarget"] / got["cold ruff"]
            got["cached ratio"] = got["cached jaxtarget"] / got["cached ruff"]
            got["one ratio"] = got["one jaxtarget"] / got["one ast.parse"]
            for k, v in got.items():
                rows.setdefault(k, []).append(v)
            print(
                f"round {r + 1}: cold {got['cold jaxtarget']:.2f} s vs ruff {got['cold ruff']:.2f} s "
                f"({got['cold ratio']:.1f}x); names from the store {got['store jaxtarget']:.2f} s "
                f"({got['store ratio']:.1f}x); cached {got['cached jaxtarget']:.2f} s vs ruff "
                f"{got['cached ruff']:.2f} s ({got['cached ratio']:.1f}x); "
                f"one.py {got['one jaxtarget']:.2f} s vs ast.parse {got['one ast.parse']:.3f} s "
                f"({got['one ratio']:.1f}x); peak RSS at {opts.files} files "
                f"{got['rss jaxtarget']:.0f} MB (ruff {got['rss ruff']:.0f} MB)"
            )
        print("\nmin / median / max")
        print(f"cold check of jax, jaxtarget      {spread(rows['cold jaxtarget'], 's')}")
        print(f"cold check of jax, ruff E9,F      {spread(rows['cold ruff'], 's')}")
        print(f"  ratio (goal <= 5x)              {spread(rows['cold ratio'], 'x', 1)}")
        print(f"--no-cache, names from the store  {spread(rows['store jaxtarget'], 's')}")
        print(f"  ratio to ruff --no-cache        {spread(rows['store ratio'], 'x', 1)}")
        print(f"re-check, jaxtarget cache         {spread(rows['cached jaxtarget'], 's')}")
        print(f"re-check, ruff cache              {spread(rows['cached ruff'], 's')}")
        print(f"  ratio (goal <= 10x)             {spread(rows['cached ratio'], 'x', 1)}")
        print(f"check one.py (5,000 lines)        {spread(rows['one jaxtarget'], 's')}")
        print(f"python + ast.parse of it          {spread(rows['one ast.parse'], 's', 3)}")
        print(f"  ratio (goal <= 15x)             {spread(rows['one ratio'], 'x', 1)}")
        rss = spread(rows["rss jaxtarget"], "MB", 0)
        print(f"peak RSS, {opts.files} files, jaxtarget {rss} (goal <= 150 MB)")
        print(f"peak RSS, {opts.files} files, ruff      {spread(rows['rss ruff'], 'MB', 0)}")
        if opts.before is not None:
            print(f"before: cold check of jax               {spread(rows['before cold'], 's')}")
            print(f"before: check one.py                    {spread(rows['before one'], 's')}")
            print(f"before: re-check, its cache             {spread(rows['before cached'], 's')}")
            print(f"before: peak RSS, {opts.files} files    {spread(rows['before rss'], 'MB', 0)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
