"""`check`'s result cache, ``.jaxtarget_cache/`` in the folder `check` runs in (like ruff's).

One entry per checked file, under its absolute path: the key it was computed for and
the result. The key covers everything the result depends on: the file's bytes, the
file's path and the conftest.py pin above it, the settings that affect analysis (the
settings table's ``analysis`` column), the interpreter and its jax version and PJRT
plugins, the targets ``auto`` expands to, and jaxtarget itself (version and the
fingerprint of its own modules), Python and jedi. An entry also lists the other files of
the project its analysis read (a guard predicate, a test base class or a tracing helper
defined in another module), each with its modification time and size then: it serves
only while each is still so (or still absent). A result whose analysis searched the
whole project (``Module.reads_project``) is not stored. Entries of files that are gone
are dropped when the cache is saved.

The entries are one JSON file, written whole to a temporary file that is renamed over
the old one (``os.replace``): two runs sharing the cache each read a complete file and
the last to finish wins; an entry one of them loses is recomputed by the next run.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .files import write_atomically
from .fingerprint import own_fingerprint
from .formats import FileResult
from .model import Finding, Span
from .semantics.project_files import stamp_of

FOLDER = ".jaxtarget_cache"
#: the layout of the entries; a new one starts an empty cache beside the old
FORMAT = "v1"


#: another file a result was read from, with its (modification time, size) then; None: absent
Read = tuple[str, tuple[int, int] | None]


@dataclass(frozen=True)
class Entry:
    key: str
    result: dict[str, Any]
    reads: tuple[Read, ...] = ()

    def current(self) -> bool:
        """Whether every other file the result was read from is as it was."""
        return all(stamp_of(Path(name)) == stamp for name, stamp in self.reads)

    def encode(self) -> list[Any]:
        reads = [[name, *stamp] if stamp is not None else [name] for name, stamp in self.reads]
        return [self.key, self.result, reads] if reads else [self.key, self.result]


def _decode_entry(raw: list[Any]) -> Entry:
    reads = tuple(
        (str(r[0]), (int(r[1]), int(r[2])) if len(r) == 3 else None) for r in (raw[2] if len(raw) > 2 else [])
    )
    return Entry(str(raw[0]), raw[1], reads)


def file_key(data: bytes, path: Path, context: str) -> str:
    """The key of one file's result: its bytes, its absolute path, and ``context``."""
    h = hashlib.sha256(data)
    h.update(b"\0" + str(path).encode("utf-8", "surrogateescape") + b"\0" + context.encode())
    return h.hexdigest()


def context_key(*parts: object) -> str:
    """A stable digest of the settings and environment a result depends on."""
    return hashlib.sha256(repr((_OWN, *parts)).encode()).hexdigest()


_OWN = own_fingerprint()


def _span(s: Span) -> list[int]:
    return [s.line, s.col, s.end_line, s.end_col]


def encode_result(r: FileResult) -> dict[str, Any]:
    """A result as JSON (no fixes: files whose fixes are wanted are recomputed)."""
    return {
        "error": r.error,
        "error_line": r.error_line,
        "error_col": r.error_col,
        "note": r.note,
        "findings": [
            [
                f.code,
                f.message,
                f.severity,
                _span(f.span),
                f.api,
                list(f.failing),
                [[_span(s), text] for s, text in f.related],
                f.resolved_by,
                f.id,
            ]
            for f in r.findings
        ],
    }


def decode_result(path: Path, data: dict[str, Any], source: str = "") -> FileResult:
    findings = [
        Finding(
            code,
            message,
            severity,
            Span(*span),
            api,
            tuple(failing),
            tuple((Span(*s), text) for s, text in related),
            resolved_by,
            fid,
        )
        for code, message, severity, span, api, failing, related, resolved_by, fid in data["findings"]
    ]
    return FileResult(
        path,
        findings,
        [None] * len(findings),
        error=data["error"],
        error_line=data["error_line"],
        error_col=data["error_col"],
        source=source,
        note=data["note"],
    )


class ResultCache:
    """The entries of one cache folder, loaded once, saved once at the end of a run."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.file = folder / FORMAT / "results.json"
        self.entries = self._load()
        self.fresh: dict[str, Entry] = {}
        self.seen: set[str] = set()

    def _load(self) -> dict[str, Entry]:
        try:
            raw = json.loads(self.file.read_text(encoding="utf-8"))
            return {p: _decode_entry(e) for p, e in raw.items()}
        except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
            return {}

    def get(self, path: Path, key: str) -> dict[str, Any] | None:
        name = str(path)
        self.seen.add(name)
        entry = self.entries.get(name)
        return entry.result if entry is not None and entry.key == key and entry.current() else None

    def put(self, path: Path, key: str, result: FileResult) -> None:
        self.fresh[str(path)] = Entry(key, encode_result(result), tuple(result.reads))

    def save(self) -> None:
        """Merge with what is on disk now (another run may have saved), drop files that are gone, write."""
        on_disk = self._load()
        merged: dict[str, Entry] = {}
        gone = False
        for name, entry in _chain(on_disk, self.entries):
            if name in merged or name in self.fresh:
                continue
            if name in self.seen or os.path.exists(name):
                merged[name] = entry
            else:
                gone = True
        if not self.fresh and not gone and merged.keys() == on_disk.keys():
            return
        merged.update(self.fresh)
        try:
            self._prepare()
            data = json.dumps({p: e.encode() for p, e in merged.items()}, separators=(",", ":"))
            write_atomically(self.file, data.encode("utf-8"))
        except OSError:
            return  # a read-only folder: no cache, the results stand

    def _prepare(self) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        ignore = self.folder / ".gitignore"
        if not ignore.exists():
            write_atomically(ignore, b"# created by jaxtarget\n*\n")


def _chain(*maps: dict[str, Entry]) -> Iterable[tuple[str, Entry]]:
    for m in maps:
        yield from m.items()
