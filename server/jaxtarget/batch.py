"""`jaxtarget check` over many files: the result cache, then a process pool for the rest.

Results come back in the order the files were found (a stable, path order) whatever
the number of workers, and equal a sequential run's. Each worker checks one file at a
time and sends back its result without the file's text (kept only where SARIF needs it
for UTF-16 columns), so memory does not grow with the tree.

The garbage collector: after a file that needed jedi (the heap jedi keeps alive grows
with the JAX modules it has read), the worker collects once and freezes what is left
(``gc.freeze``), so that later collections, many during each ``ast.parse``, no longer
walk jedi's heap.
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import os
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import perfile
from .cache import ResultCache, context_key, decode_result, file_key
from .config import Layer, Problem, Settings, load_project
from .engine import Engine
from .environment import forget_environments
from .files import SourceError, decode_source_file
from .formats import FileResult
from .project import Engines, settings_for
from .semantics.pins import conftest_pin, is_test_module
from .semantics.project_files import recording_reads

#: checks one file; appends its diff (``--diff``) to the list
CheckFile = Callable[[Path, Engine, argparse.Namespace, list[str]], FileResult]

#: files each extra worker must have to be worth starting: a worker reads JAX's modules
#: through jedi once for itself, which costs about as much as checking this many files
FILES_PER_WORKER = 24
#: a file that took longer than this probably grew jedi's heap: collect, then freeze it
_FREEZE_AFTER_S = 0.05


@dataclass(frozen=True)
class Item:
    """A file to check, with the settings that apply to it."""

    path: Path
    settings: Settings


class FolderSettings:
    """``settings_for`` each file, computed once per folder where no per-file table can differ."""

    def __init__(self, overrides: Layer) -> None:
        self.overrides = overrides
        self._memo: dict[Path, tuple[Settings, tuple[Problem, ...]]] = {}

    def __call__(self, path: Path) -> tuple[Settings, tuple[Problem, ...]]:
        folder = path.parent
        found = self._memo.get(folder)
        if found is None and not (folder / "pyproject.toml").exists():
            # the same pyproject.toml as the folder above, if that one is known
            found = self._memo.get(folder.parent)
            if found is not None:
                self._memo[folder] = found
        if found is None:
            found = settings_for(path, self.overrides)
            # for a folder, a per-file table the project has is present and empty
            tables = load_project(folder).layer.values
            if perfile.TARGETS not in tables and perfile.IGNORES not in tables:
                self._memo[folder] = found
        return found


@dataclass
class _Worker:
    check_file: CheckFile
    args: argparse.Namespace
    settings: Sequence[Settings]
    engines: Engines = field(default_factory=Engines)


_STATE: _Worker | None = None


def _start(
    check_file: CheckFile, args: argparse.Namespace, settings: Sequence[Settings], fresh: bool
) -> None:
    global _STATE
    if fresh:
        # a forked worker: jedi's subprocess for another interpreter belongs to the parent
        forget_environments()
    _STATE = _Worker(check_file, args, settings)
    gc.collect()
    gc.freeze()


def _work(task: tuple[str, int]) -> tuple[FileResult, str, bool]:
    """Check one file: its result (without its text unless SARIF needs it), its diff, cacheable."""
    state = _STATE
    assert state is not None, "worker not started"
    name, index = task
    path = Path(name)
    engine = state.engines.engine(state.settings[index])
    diffs: list[str] = []
    began = time.perf_counter()
    with recording_reads() as reads:
        result = state.check_file(path, engine, state.args, diffs)
    if reads:
        result = replace(result, reads=tuple(sorted((str(p), stamp) for p, stamp in reads.items())))
    if result.source and not (result.findings and state.args.format == "sarif"):
        result = replace(result, source="")
    if time.perf_counter() - began > _FREEZE_AFTER_S:
        gc.collect()
        gc.freeze()
    changed = bool(result.fixed) or bool(diffs) or (result.error or "").startswith("fixes not applied")
    return result, "".join(diffs), result.cacheable and not changed


def workers_for(misses: int, jobs: int | None) -> int:
    """Processes for ``misses`` files: ``jobs`` if given, else all cores, fewer for a small tree."""
    if jobs is not None:
        return max(1, min(jobs, misses))
    return max(1, min(os.cpu_count() or 1, misses // FILES_PER_WORKER))


def _usable(data: dict[str, Any], args: argparse.Namespace) -> bool:
    """A cached result without findings always serves; with findings, only when no fix is wanted."""
    if not data["findings"]:
        return True
    return not (args.fix or args.diff or args.format == "json")


class _Planner:
    """The cache key of each file (in the parent), per settings and folder computed once."""

    def __init__(self, engines: Engines) -> None:
        self.engines = engines
        self.settings: list[Settings] = []
        self._index: dict[tuple[object, ...], int] = {}
        self._contexts: list[str] = []
        self._pins: dict[tuple[str, bool], str] = {}

    def index(self, settings: Settings) -> int:
        key = (settings.analysis_key(), settings.pyproject)
        found = self._index.get(key)
        if found is None:
            found = self._index[key] = len(self.settings)
            self.settings.append(settings)
            engine = self.engines.engine(settings)
            env = engine.environment
            self._contexts.append(
                context_key(
                    env.python, env.jax_version, env.plugins, sorted(engine.targets), settings.analysis_key()
                )
            )
        return found

    def context(self, index: int, path: str) -> str:
        folder = (os.path.dirname(path), is_test_module(path))
        pin = self._pins.get(folder)
        if pin is None:
            found = conftest_pin(path)
            pin = self._pins[folder] = ",".join(sorted(found)) if found is not None else "-"
        return f"{self._contexts[index]}:{pin}"


def check_files(
    items: Sequence[Item],
    check_file: CheckFile,
    args: argparse.Namespace,
    cache: ResultCache | None,
    jobs: int | None = None,
    engines: Engines | None = None,
) -> Iterator[tuple[FileResult, str]]:
    """Each file's result and diff, in the order of ``items``."""
    planner = _Planner(engines or Engines())
    plan: list[FileResult | tuple[str, int, str | None]] = []
    for item in items:
        index = planner.index(item.settings)
        name = os.path.abspath(item.path)
        hit, key = _lookup(cache, item.path, name, planner.context(index, name), args)
        plan.append(hit if hit is not None else (str(item.path), index, key))
    tasks = [(p[0], p[1]) for p in plan if isinstance(p, tuple)]
    workers = workers_for(len(tasks), jobs)
    results = _results(tasks, workers, check_file, args, planner.settings)
    try:
        for step in plan:
            if isinstance(step, FileResult):
                yield step, ""
                continue
            result, diff, cacheable = next(results)
            if cache is not None and step[2] is not None and cacheable:
                cache.put(Path(os.path.abspath(step[0])), step[2], result)
            yield result, diff
    finally:
        results.close()
    if cache is not None:
        cache.save()


def _lookup(
    cache: ResultCache | None, path: Path, name: str, context: str, args: argparse.Namespace
) -> tuple[FileResult | None, str | None]:
    """A cached result that serves for this file (None: check it), and the file's key."""
    if cache is None or path.suffix == ".ipynb":
        return None, None
    try:
        data = path.read_bytes()
    except OSError:
        return None, None
    key = file_key(data, Path(name), context)
    found = cache.get(Path(name), key)
    if found is None or not _usable(found, args):
        return None, key
    source = ""
    if found["findings"] and args.format == "sarif":
        try:
            source = decode_source_file(data).text
        except SourceError:
            return None, key
    return decode_result(path, found, source), key


def _results(
    tasks: list[tuple[str, int]],
    workers: int,
    check_file: CheckFile,
    args: argparse.Namespace,
    settings: Sequence[Settings],
) -> Generator[tuple[FileResult, str, bool], None, None]:
    if not tasks:
        return
    if workers <= 1:
        _start(check_file, args, settings, fresh=False)
        for task in tasks:
            yield _work(task)
        return
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    chunk = max(1, min(8, len(tasks) // (workers * 16)))
    with context.Pool(workers, _start, (check_file, args, settings, True)) as pool:
        yield from pool.imap(_work, tasks, chunksize=chunk)
