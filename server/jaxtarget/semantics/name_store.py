"""Resolved names kept on disk, one file per environment, so a later start asks jedi nothing
it was asked before.

What jedi answered for a query (an import statement and the dotted expression it binds,
against the set of wanted public names) depends on the installed packages, on jedi and on
jaxtarget itself; the file's name is a digest of all of that: the interpreter, the jax
version, the standard library's and each ``site-packages`` folder with its modification
time (installing, upgrading or removing a package adds or removes a ``.dist-info`` folder
there, which changes it) and jaxtarget's own fingerprint. Only queries whose module lies in
one of those folders are kept: a relative import, or a module of the user's own project, can change
with any edit and is asked of jedi each time. An answer jedi could not give (it raised) is
not kept.

The files live in ``$JAXTARGET_CACHE_HOME`` or, without it, ``$XDG_CACHE_HOME/jaxtarget``
(``~/.cache/jaxtarget``), under ``names/``. Each is JSON, written whole to a temporary file
renamed over the old one after merging what another process wrote meanwhile; a file that
cannot be read or written leaves the store empty or unsaved, never an error. The folder
keeps the ``KEEP`` most recently started files. With
``JAXTARGET_NO_NAME_STORE=1`` in the environment it is neither read nor written (``check
--no-cache`` is about the result cache; like jedi's own cache, the store cannot give a
stale answer, so it is kept).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..files import write_atomically
from ..fingerprint import own_fingerprint
from .resolver import Query

#: the layout of the files; a new one starts afresh beside the old
FORMAT = "n1"
#: set (to anything but "0") in the environment: neither read nor write the store
NO_STORE = "JAXTARGET_NO_NAME_STORE"
#: how many store files the folder keeps (the most recently started ones)
KEEP = 32
_SUFFIXES = (".py", ".pyi", ".so", ".pyd")
_STDLIB_OR_PACKAGES = re.compile(r"site-packages|dist-packages|python3\.\d+|lib-dynload|Lib|DLLs")


def cache_home() -> Path:
    """Where jaxtarget keeps what it caches per user."""
    own = os.environ.get("JAXTARGET_CACHE_HOME")
    if own:
        return Path(own)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "jaxtarget"


def _installed_folders(sys_path: Iterable[str]) -> list[Path]:
    """The environment's folders of installed code: the standard library and ``site-packages``."""
    folders = [Path(p) for p in sys_path if p]
    return [f for f in folders if _STDLIB_OR_PACKAGES.fullmatch(f.name) and f.is_dir()]


def _top_level_names(folder: Path) -> set[str]:
    """The importable top-level names a package folder holds (packages, modules, extensions)."""
    names: set[str] = set()
    try:
        children = list(os.scandir(folder))
    except OSError:
        return names
    for child in children:
        name = child.name
        if child.is_dir():
            if "." not in name and name != "__pycache__":
                names.add(name)
        elif name.endswith(_SUFFIXES):
            names.add(name.split(".", 1)[0])
    return names


def _prune(folder: Path, keep: int) -> None:
    """Leave the ``keep`` most recently written stores in ``folder`` (each environment, jax
    or jaxtarget release, or edit of a development checkout, starts a file of its own)."""
    try:
        stores = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    except OSError:
        return  # a file went meanwhile: another process prunes
    for old in stores[keep:]:
        old.unlink(missing_ok=True)


class NameStore:
    """Persisted answers for the queries of one environment."""

    def __init__(self, file: Path | None, modules: frozenset[str]) -> None:
        self.file = file
        self.modules = modules  # top-level names whose queries are kept
        self._lock = threading.Lock()
        self._answers: dict[str, str | None] | None = None
        self._wanted_ids: dict[tuple[frozenset[str], frozenset[str]], str] = {}

    @classmethod
    def for_environment(cls, executable: str, sys_path: Sequence[str], jax_version: str | None) -> NameStore:
        if os.environ.get(NO_STORE, "0") != "0":
            return cls(None, frozenset())
        folders = _installed_folders(sys_path)
        parts = [FORMAT, own_fingerprint(), os.path.realpath(executable), str(jax_version)]
        modules: set[str] = set()
        for folder in folders:
            try:
                stamp = folder.stat().st_mtime_ns
            except OSError:
                continue
            parts.append(f"{folder}:{stamp}")
            modules |= _top_level_names(folder)
        digest = hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]
        return cls(cache_home() / "names" / f"{digest}.json", frozenset(modules))

    def key(self, query: Query, wanted: frozenset[str], lacking: frozenset[str] = frozenset()) -> str | None:
        """The stored key of a query, or None for one that is never kept."""
        binding = query.binding
        if binding.level or binding.module.split(".", 1)[0] not in self.modules:
            return None
        wanted_id = self._wanted_ids.get((wanted, lacking))
        if wanted_id is None:
            names = "\n".join(sorted(wanted)) + "\n\n" + "\n".join(sorted(lacking))
            wanted_id = hashlib.sha256(names.encode()).hexdigest()[:16]
            self._wanted_ids[(wanted, lacking)] = wanted_id
        return f"{wanted_id} {binding.statement()} {query.dotted}"

    def answer(
        self,
        queries: list[Query],
        wanted: frozenset[str],
        lacking: frozenset[str],
        into: dict[tuple[Query, frozenset[str], frozenset[str]], str | None],
    ) -> list[Query]:
        """Put the answers held for ``queries`` into ``into``; the queries still to ask jedi."""
        left = []
        for q in queries:
            key = self.key(q, wanted, lacking)
            found, answer = self.lookup(key) if key is not None else (False, None)
            if found:
                into[(q, wanted, lacking)] = answer
            else:
                left.append(q)
        return left

    def lookup(self, key: str) -> tuple[bool, str | None]:
        """(found, answer): an answer of None is a stored "none of the wanted names"."""
        with self._lock:
            answers = self._load()
            if key in answers:
                return True, answers[key]
            return False, None

    def save(self, new: dict[str, str | None]) -> None:
        """Add answers and write the file (merged with what is on disk now)."""
        if not new or self.file is None:
            return
        with self._lock:
            answers = self._load()
            answers.update(new)
            on_disk = self._read()
            merged = {**on_disk, **answers}
            self._answers = merged
            try:
                self.file.parent.mkdir(parents=True, exist_ok=True)
                new_file = not self.file.exists()
                write_atomically(self.file, json.dumps(merged, sort_keys=True).encode())
            except OSError:
                return  # a read-only or full cache folder: answers stay in this process only
            if new_file:
                _prune(self.file.parent, KEEP)

    def _load(self) -> dict[str, str | None]:
        if self._answers is None:
            self._answers = self._read()
        return self._answers

    def _read(self) -> dict[str, str | None]:
        if self.file is None:
            return {}
        try:
            data = json.loads(self.file.read_bytes())
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and (v is None or isinstance(v, str))}


def unanswered(
    queries: Sequence[Query],
    wanted: frozenset[str],
    lacking: frozenset[str],
    cache: dict[tuple[Query, frozenset[str], frozenset[str]], str | None],
    store: NameStore | None,
) -> list[Query]:
    """The queries (once each) that neither ``cache`` nor ``store`` answers; the store's
    answers are put into the cache."""
    missing = [q for q in dict.fromkeys(queries) if (q, wanted, lacking) not in cache]
    return store.answer(missing, wanted, lacking, cache) if missing and store is not None else missing
