"""Precision and recall of `jaxtarget check` on real public JAX code.

The corpus (``bench/realworld/corpus.json``) names files of public repositories by
repository, commit and path, with the findings a careful reader expects for each
target (see ``bench/realworld/README.md`` for the judging rule). No third-party
code is stored in this project: the script reads each file at its pinned commit
from a local copy, writes it under a temporary folder keeping its repository-
relative path (beside every other Python file of the repository at that commit, which a
check of the whole repository could read), runs ``jaxtarget check --format json`` once
per target over the listed files, and compares the findings with the expected ones.

A local copy of a repository is either

* a git directory found under ``--mirror`` (``MIRROR/owner+name/repo``,
  ``MIRROR/owner+name`` or ``MIRROR/owner+name.git``, bare or not), read with
  ``git show COMMIT:PATH``; or
* a plain checkout folder ``CHECKOUT_DIR/owner+name/`` (``--checkout-dir``),
  assumed to be at the pinned commit (when it is a git work tree, the pinned
  commit is read from its history instead when available).

Repositories, commits or files that cannot be found are reported and skipped.

Usage (from the repository root)::

    .venv/bin/python bench/realworld.py --mirror /work/.mirror
    .venv/bin/python bench/realworld.py --checkout-dir ~/src --targets tpu --show-misses

A finding matches an expected one when code and line agree, and the API too
when both name one (the tool's JSON names the API by its display name in the
message; it is mapped back to the qualified name through the rule registry).
A file error (a file that does not parse as committed) is printed on its own
and is not a finding.
This script is a benchmark, not a test: the pytest suite does not run it.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "realworld" / "corpus.json"
DEFAULT_TOOL = ROOT / ".venv" / "bin" / "jaxtarget"


@dataclass(frozen=True)
class Expected:
    code: str
    line: int
    api: str | None


@dataclass
class Entry:
    repo: str
    commit: str
    path: str
    idioms: list[str]
    expected: dict[str, list[Expected]]
    notes: str
    #: where the file was written, relative to the work folder
    local: str = ""
    lines: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.repo}:{self.path}"


@dataclass(frozen=True)
class Finding:
    code: str
    line: int
    api: str | None
    message: str


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, other: Tally) -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


@dataclass(frozen=True)
class Miss:
    kind: str  # "FP" or "FN"
    target: str
    entry: Entry
    code: str
    line: int
    api: str | None
    message: str = ""


# ---------------------------------------------------------------- corpus and sources


def load_corpus(path: Path) -> list[Entry]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    entries: list[Entry] = []
    for item in raw:
        expected = {
            target: [Expected(str(f["code"]), int(f["line"]), f.get("api")) for f in findings]
            for target, findings in item.get("expected", {}).items()
        }
        entries.append(
            Entry(
                repo=str(item["repo"]),
                commit=str(item["commit"]),
                path=str(item["path"]),
                idioms=[str(x) for x in item.get("modelled_idioms", [])],
                expected=expected,
                notes=str(item.get("notes", "")),
            )
        )
    return entries


def _slug(repo: str) -> str:
    return repo.replace("/", "+")


def _git(git_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True, check=False)


def _git_dir(folder: Path) -> Path | None:
    """The git directory of ``folder`` (bare repository or work tree), if it is one."""
    if not folder.is_dir():
        return None
    dot_git = folder / ".git"
    if dot_git.is_dir():
        return dot_git
    if (folder / "HEAD").is_file() and (folder / "objects").is_dir():
        return folder
    return None


def find_sources(repo: str, mirror: Path | None, checkout: Path | None) -> tuple[Path | None, Path | None]:
    """(git dir, plain checkout folder) for ``repo``; either may be None."""
    slug = _slug(repo)
    git_dir: Path | None = None
    if mirror is not None:
        for candidate in (mirror / slug / "repo", mirror / slug, mirror / f"{slug}.git"):
            git_dir = _git_dir(candidate)
            if git_dir is not None:
                break
    plain: Path | None = None
    if checkout is not None and (checkout / slug).is_dir():
        plain = checkout / slug
        if git_dir is None:
            git_dir = _git_dir(plain)
    return git_dir, plain


def read_source(entry: Entry, mirror: Path | None, checkout: Path | None) -> tuple[bytes | None, str]:
    """The file's bytes at the pinned commit, or None and the reason it could not be read."""
    git_dir, plain = find_sources(entry.repo, mirror, checkout)
    if git_dir is None and plain is None:
        return None, "repository not found locally"
    if git_dir is not None:
        shown = _git(git_dir, "show", f"{entry.commit}:{entry.path}")
        if shown.returncode == 0:
            return shown.stdout, ""
        has_commit = _git(git_dir, "cat-file", "-e", f"{entry.commit}^{{commit}}").returncode == 0
        reason = "file not found at the pinned commit" if has_commit else "pinned commit not found"
        if plain is None:
            return None, reason
    assert plain is not None
    file = plain / entry.path
    if file.is_file():
        return file.read_bytes(), ""
    return None, "file not found in the checkout folder"


#: files pytest and the checker read besides the module: conftest.py on its path, the root markers
_ROOT_FILES = ("pyproject.toml", "setup.cfg", "setup.py")


def _imported_paths(source: bytes, path: str) -> list[str]:
    """Where the project modules a file imports would be in its repository (candidates):
    ``from pkg.sub import mod`` -> pkg/sub.py, pkg/sub/__init__.py, pkg/sub/mod.py, under the
    root and under src/; relative imports from the file's folder."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    absolute = [Path(), Path("src")]
    out: list[str] = []

    def module_at(bases: list[Path], module: list[str], names: list[str]) -> None:
        for base in bases:
            here = base.joinpath(*module)
            if module:
                out.extend((str(here.with_suffix(".py")), str(here / "__init__.py")))
            out.extend(str(here / f"{name}.py") for name in names)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                module_at(absolute, alias.name.split("."), [])
        elif isinstance(node, ast.ImportFrom):
            module = node.module.split(".") if node.module else []
            names = [a.name for a in node.names if a.name != "*"]
            up = [Path(path).parent.joinpath(*[".."] * (node.level - 1))]
            module_at(up if node.level else absolute, module, names)
    return [os.path.normpath(p) for p in dict.fromkeys(out) if not os.path.normpath(p).startswith("..")]


def context_files(
    entry: Entry, mirror: Path | None, checkout: Path | None, source: bytes = b""
) -> dict[str, bytes]:
    """The files around the module that a check of the whole repository would read, at the
    pinned commit: the conftest.py files and package ``__init__.py`` files on its path, the
    project modules it imports (predicates defined there), and the root markers."""
    git_dir, plain = find_sources(entry.repo, mirror, checkout)
    parts = Path(entry.path).parts[:-1]
    wanted = [
        *(str(Path(*parts[:k], "conftest.py")) for k in range(len(parts) + 1)),
        *(str(Path(*parts[:k], "__init__.py")) for k in range(1, len(parts) + 1)),
        *_imported_paths(source, entry.path),
        *_ROOT_FILES,
    ]
    wanted = [rel for rel in dict.fromkeys(wanted) if rel != entry.path]
    out: dict[str, bytes] = {}
    for rel in wanted:
        if git_dir is not None:
            shown = _git(git_dir, "show", f"{entry.commit}:{rel}")
            if shown.returncode == 0:
                out[rel] = shown.stdout
                continue
        if plain is not None and (plain / rel).is_file():
            out[rel] = (plain / rel).read_bytes()
    return out


#: the largest project file written beside the checked ones (the checker reads no larger one)
_MAX_PROJECT_BYTES = 2 * 1024 * 1024


def project_files(entry: Entry, mirror: Path | None, checkout: Path | None) -> dict[str, bytes]:
    """Every Python file of the repository at the pinned commit: a check of the whole
    repository could read any of them (whether another module names a private function)."""
    git_dir, plain = find_sources(entry.repo, mirror, checkout)
    out: dict[str, bytes] = {}
    if git_dir is not None:
        archive = subprocess.run(
            ["git", "--git-dir", str(git_dir), "archive", "--format=tar", entry.commit],
            capture_output=True,
            check=False,
        )
        if archive.returncode == 0:
            with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
                for member in tar:
                    if member.isfile() and member.name.endswith(".py") and member.size <= _MAX_PROJECT_BYTES:
                        data = tar.extractfile(member)
                        if data is not None:
                            out[os.path.normpath(member.name)] = data.read()
            return out
    if plain is not None:
        for path in plain.rglob("*.py"):
            rel = path.relative_to(plain)
            if ".git" not in rel.parts and path.is_file() and path.stat().st_size <= _MAX_PROJECT_BYTES:
                out[rel.as_posix()] = path.read_bytes()
    return out


# ---------------------------------------------------------------- running the tool


def display_to_qualname() -> dict[str, str]:
    """Display name -> qualified name of every catalogued API (empty if the project is not importable)."""
    sys.path.insert(0, str(ROOT / "server"))
    try:
        from jaxtarget.rules.registry import APIS
    except Exception:  # the comparison then falls back to (code, line)
        return {}
    return {api.display: api.qualname for api in APIS.values()}


_DISPLAY = re.compile(r"`([^`]+)`")


def run_tool(tool: Path, target: str, work: Path, files: list[str]) -> list[dict[str, object]]:
    """All findings of one ``jaxtarget check`` run, raw JSON objects."""
    cmd = [str(tool), "check", "--target", target, "--format", "json", *files]
    proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"jaxtarget exited with {proc.returncode}:\n{proc.stderr.strip()}")
    try:
        data = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError as exc:
        raise RuntimeError(
            f"jaxtarget printed no JSON ({exc}):\n{proc.stdout[:500]}{proc.stderr[:500]}"
        ) from exc
    return list(data)


def findings_by_file(
    raw: list[dict[str, object]], work: Path, names: dict[str, str], errors: dict[str, list[str]]
) -> dict[str, list[Finding]]:
    """Each file's findings; its file errors go to ``errors``."""
    out: dict[str, list[Finding]] = defaultdict(list)
    for item in raw:
        filename = Path(str(item.get("filename", "")))
        if not filename.is_absolute():
            filename = work / filename
        try:
            rel = filename.resolve().relative_to(work.resolve()).as_posix()
        except ValueError:
            rel = filename.as_posix()
        location = item.get("location")
        row = int(location.get("row", 0)) if isinstance(location, dict) else 0
        message = str(item.get("message", ""))
        api: str | None = None
        shown = _DISPLAY.search(message)
        if shown is not None:
            api = names.get(shown.group(1))
        if item.get("code") is None:
            # a file error (a SyntaxError in the file as committed), not a rule's finding
            errors[rel].append(f"{row}: {message}")
            continue
        out[rel].append(Finding(str(item.get("code", "")), row, api, message))
    return out


# ---------------------------------------------------------------- comparing


def compare(entry: Entry, target: str, found: list[Finding]) -> tuple[dict[str, Tally], list[Miss]]:
    """Per-rule tallies and misses of one file for one target."""
    tallies: dict[str, Tally] = defaultdict(Tally)
    misses: list[Miss] = []
    left = list(entry.expected.get(target, []))
    for f in found:
        match = next(
            (
                e
                for e in left
                if e.code == f.code
                and e.line == f.line
                and (e.api is None or f.api is None or e.api == f.api)
            ),
            None,
        )
        if match is not None:
            left.remove(match)
            tallies[f.code].tp += 1
        else:
            tallies[f.code].fp += 1
            misses.append(Miss("FP", target, entry, f.code, f.line, f.api, f.message))
    for e in left:
        tallies[e.code].fn += 1
        misses.append(Miss("FN", target, entry, e.code, e.line, e.api))
    return tallies, misses


def _pct(value: float | None) -> str:
    return "   n/a" if value is None else f"{100 * value:5.1f}%"


def _row(name: str, t: Tally) -> str:
    counts = f"TP {t.tp:3d}  FP {t.fp:3d}  FN {t.fn:3d}"
    return f"  {name:<8} {counts}   precision {_pct(t.precision)}   recall {_pct(t.recall)}"


def _source_line(entry: Entry, line: int) -> str:
    return entry.lines[line - 1].strip() if 0 < line <= len(entry.lines) else ""


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--mirror", type=Path, help="folder holding git copies as owner+name[/repo]")
    parser.add_argument("--checkout-dir", type=Path, help="folder holding plain checkouts as owner+name/")
    parser.add_argument("--targets", default="cpu,tpu", help="comma-separated targets (default: cpu,tpu)")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="corpus file (default: %(default)s)")
    parser.add_argument("--jaxtarget", type=Path, default=DEFAULT_TOOL, help="jaxtarget executable")
    parser.add_argument("--show-misses", action="store_true", help="list every false positive and negative")
    parser.add_argument("--keep", type=Path, help="write the files here (kept) instead of a temporary folder")
    args = parser.parse_args(argv)

    if args.mirror is None and args.checkout_dir is None:
        parser.error("give --mirror and/or --checkout-dir")
    if not args.jaxtarget.exists():
        print(f"error: jaxtarget not found at {args.jaxtarget}", file=sys.stderr)
        return 2
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    entries = load_corpus(args.corpus)
    names = display_to_qualname()
    if not names:
        print("note: jaxtarget not importable; matching on (code, line) only", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="jaxtarget-realworld-") as tmp:
        work = args.keep.resolve() if args.keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        ready: list[Entry] = []
        skipped: list[tuple[Entry, str]] = []
        written: set[tuple[str, str]] = set()
        for entry in entries:
            data, reason = read_source(entry, args.mirror, args.checkout_dir)
            if data is None:
                skipped.append((entry, reason))
                continue
            entry.local = f"{_slug(entry.repo)}/{entry.path}"
            dest = work / entry.local
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
            for rel, extra in context_files(entry, args.mirror, args.checkout_dir, data).items():
                context = work / _slug(entry.repo) / rel
                if not context.exists():
                    context.parent.mkdir(parents=True, exist_ok=True)
                    context.write_bytes(extra)
            if (entry.repo, entry.commit) not in written:
                written.add((entry.repo, entry.commit))
                for rel, extra in project_files(entry, args.mirror, args.checkout_dir).items():
                    other = work / _slug(entry.repo) / rel
                    if not other.exists():
                        other.parent.mkdir(parents=True, exist_ok=True)
                        other.write_bytes(extra)
            entry.lines = data.decode("utf-8", errors="replace").splitlines()
            ready.append(entry)

        repos = {e.repo for e in ready}
        print(f"corpus: {len(entries)} files; checked {len(ready)} files from {len(repos)} repositories")
        for entry, reason in skipped:
            print(f"  skipped {entry.label} @ {entry.commit[:12]}: {reason}")
        if not ready:
            return 1

        all_misses: list[Miss] = []
        for target in targets:
            try:
                raw = run_tool(args.jaxtarget, target, work, [e.local for e in ready])
            except RuntimeError as exc:
                print(f"\ntarget {target}: {exc}", file=sys.stderr)
                continue
            errors: dict[str, list[str]] = defaultdict(list)
            found = findings_by_file(raw, work, names, errors)
            per_rule: dict[str, Tally] = defaultdict(Tally)
            for entry in ready:
                tallies, misses = compare(entry, target, found.get(entry.local, []))
                for code, tally in tallies.items():
                    per_rule[code].add(tally)
                all_misses.extend(misses)
            total = Tally()
            print(f"\ntarget {target}")
            for code in sorted(per_rule):
                print(_row(code, per_rule[code]))
                total.add(per_rule[code])
            print(_row("all", total))
            for rel in sorted(errors):
                for error in errors[rel]:
                    print(f"  file error (not a finding): {rel}:{error}")

        if args.show_misses and all_misses:
            print("\nmisses")
            for m in sorted(all_misses, key=lambda m: (m.target, m.kind, m.entry.label, m.line)):
                api = f" {m.api}" if m.api else ""
                print(f"  [{m.target}] {m.kind} {m.code}{api} {m.entry.label}:{m.line}")
                print(f"        {_source_line(m.entry, m.line)}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        sys.exit(0)
