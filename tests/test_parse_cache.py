"""The parse cache that jedi's parser (parso) keeps on disk (under jedi's cache folder), shared by processes.

jaxtarget's `check` runs a process pool and may run beside the language server, all
reading and writing parso's pickles of the jax modules jedi resolves names in. Read here,
with real subprocesses on a fresh cache folder:

- pickles are written whole (to a temporary file renamed into place): no temporary file
  is left behind, and every module jedi read is cached;
- a pickle that cannot be read (cut short, as one being written by another process
  would be) is a cache miss: the names are resolved again and no finding is lost.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .conftest import run_cli

# psend is public only from some release, so a name jedi finds nowhere may still be read as it
# (an absent name); schur is in every release, so it is found only where jedi reads its module
SOURCE = """\
from jax import lax
from jax.scipy import linalg


def send(x):
    return lax.psend(x, 'i', [(0, 1)])


def decompose(a):
    return linalg.schur(a)
"""


def _check(folder: Path, cache: Path) -> list[str]:
    out = run_cli(
        "check",
        "--no-cache",
        "--target",
        "tpu",
        "send.py",
        cwd=folder,
        env={"XDG_CACHE_HOME": str(cache), "JAXTARGET_CACHE_HOME": str(cache / "jaxtarget")},
    )
    assert out.returncode == 1, out.stdout + out.stderr
    return [line for line in out.stdout.splitlines() if line.startswith("send.py:")]


def test_pickles_are_written_whole_and_a_cut_one_is_a_miss(tmp_path: Path) -> None:
    folder, cache = tmp_path / "project", tmp_path / "cache"
    folder.mkdir()
    (folder / "send.py").write_text(SOURCE)
    first = _check(folder, cache)
    assert [line.split(" ", 2)[1] for line in first] == ["JT001", "JT002", "JT003"], first
    pickles = sorted((cache / "jedi").rglob("*.pkl"))
    assert pickles, sorted(p.name for p in (cache / "jedi").rglob("*"))
    assert not list((cache / "jedi").rglob("*.tmp"))
    # every pickle cut in half, and the resolved names forgotten: jedi must read the modules again
    for pickle in pickles:
        data = pickle.read_bytes()
        pickle.write_bytes(data[: len(data) // 2])
    shutil.rmtree(cache / "jaxtarget")
    assert _check(folder, cache) == first
