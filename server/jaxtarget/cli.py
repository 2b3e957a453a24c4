"""Command line: `jaxtarget check | rules | rule | probe | config | lsp`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .batch import FolderSettings, Item, check_files
from .cache import FOLDER, ResultCache
from .config import SETTINGS, cli_layer, problems_text
from .docs import render_rule, render_rules_markdown, render_rules_text, rules_json
from .engine import Analysis, Engine
from .environment import InterpreterError
from .files import SourceError, discover, force_excluded, is_python_file, read_source_file, write_source
from .fixes.apply import fix_source, unified_diff
from .formats import FORMATS, RENDERERS, FileResult, display_name, render_fixes, render_text
from .model import Finding, Fix
from .notebook_check import NOTEBOOK_SUFFIX, NotebookOptions, check_notebook
from .platforms import TargetError
from .project import Engines, interpreter_setting, settings_for
from .rules.registry import RULES, rule_for_name


class UsageError(Exception):
    """Exit code 2 with a one-line message."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="jaxtarget", description="Find JAX calls that will not lower on your target backends.")
    p.add_argument("--version", action="version", version=f"jaxtarget {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    c = sub.add_parser("check", help="check files or folders")
    c.add_argument("paths", nargs="*", default=[Path(".")], type=Path)
    _setting_flags(c, "check")
    c.add_argument("--format", choices=FORMATS, default="text")
    c.add_argument("--fix", action="store_true", help="apply the safe fixes in place")
    c.add_argument(
        "--unsafe-fixes", action="store_true", help="with --fix or --diff, apply the unsafe fixes too"
    )
    c.add_argument(
        "--diff",
        action="store_true",
        help="print the diff --fix would make and write nothing (exit 1 if there is one)",
    )
    c.add_argument("--show-fixes", action="store_true", help="list the findings --fix fixed")
    c.add_argument(
        "--no-cache", action="store_true", help=f"neither read nor write the result cache ({FOLDER}/)"
    )
    c.add_argument(
        "--jobs",
        type=_jobs,
        default=None,
        help="worker processes (default: one per core; fewer for few files)",
    )
    c.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply `exclude` and the skipped folders to files named on the command line too (pre-commit)",
    )

    r = sub.add_parser("rules", help="list the rule catalog")
    r.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    one = sub.add_parser("rule", help="show one rule's documentation")
    one.add_argument("code")

    pr = sub.add_parser("probe", help="probe which backends lower psend/precv in an interpreter")
    _setting_flags(pr, "probe")
    pr.add_argument("--format", choices=("text", "json"), default="text")
    pr.add_argument("--env-only", action="store_true", help="versions and default backend only")
    pr.add_argument(
        "--all",
        action="store_true",
        help="cross-lower every catalog entry and report where the catalog and this jax disagree",
    )
    pr.add_argument(
        "--run",
        action="store_true",
        help="with --all: also compile and run each case on this machine's default device (a GPU or TPU)",
    )
    pr.add_argument(
        "--scan",
        action="store_true",
        help="list the platform-limited primitives of this jax's lowering registry, covered or not",
    )

    cfg = sub.add_parser("config", help="show the settings that apply to a file, and where each was set")
    cfg.add_argument("path", nargs="?", default=Path("."), type=Path)
    for s in SETTINGS:
        if s.cli is not None:
            cfg.add_argument(s.cli, dest=s.name, default=None, help=f"{s.doc} ({s.type_doc})")
    cfg.add_argument("--format", choices=("text", "json"), default="text")

    lsp = sub.add_parser("lsp", help="run the language server on stdio")
    lsp.add_argument("--stdio", action="store_true", help="use stdio (the default)")
    return p


def _setting_flags(parser: argparse.ArgumentParser, command: str) -> None:
    """The flags of the settings a command takes, from the settings table."""
    for s in SETTINGS:
        if s.cli is not None and command in s.commands:
            parser.add_argument(s.cli, dest=s.name, default=None, help=f"{s.doc} ({s.type_doc})")


def _flags(args: argparse.Namespace, command: str) -> dict[str, str | None]:
    return {s.name: getattr(args, s.name) for s in SETTINGS if s.cli is not None and command in s.commands}


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes (1 or more), got {text!r}")
    return value


COMMANDS = ("check", "rules", "rule", "probe", "config", "lsp")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
            given = f"unknown option {argv[0]}; " if argv else ""
            raise UsageError(f"{given}expected a command: {', '.join(COMMANDS)} (jaxtarget --help)")
        args = _parser().parse_args(argv)
        if args.command == "check":
            return _check(args)
        if args.command == "rules":
            render = {"json": rules_json, "markdown": render_rules_markdown, "text": render_rules_text}
            sys.stdout.write(render[args.format]())
            return 0
        if args.command == "rule":
            rule = rule_for_name(args.code)
            if rule is None:
                raise UsageError(f"unknown rule {args.code!r}; known: {', '.join(r.code for r in RULES)}")
            sys.stdout.write(render_rule(rule))
            return 0
        if args.command == "probe":
            return _probe(args)
        if args.command == "config":
            return _config(args)
        if args.command == "lsp":
            from .lsp.server import serve

            serve()
            return 0
    except UsageError as exc:
        print(f"jaxtarget: error: {exc}", file=sys.stderr)
        return 2
    except (InterpreterError, TargetError) as exc:
        print(f"jaxtarget: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 2


def _check(args: argparse.Namespace) -> int:
    overrides, problems = cli_layer(_flags(args, "check"))
    if problems:
        raise UsageError(problems_text(problems))
    _check_paths(args.paths)
    engines = Engines()
    results: list[FileResult] = []
    diffs: list[str] = []
    items: list[Item] = []
    per_folder = FolderSettings(overrides)
    for start in args.paths:
        root_settings, root_problems = settings_for(start, overrides)
        if root_problems:
            raise UsageError(problems_text(root_problems))
        root = Path(root_settings.pyproject).parent if root_settings.pyproject else None
        if args.force_exclude and start.is_file() and force_excluded(start, root_settings.exclude, root):
            continue
        for path in discover([start], root_settings.exclude, root):
            settings, file_problems = per_folder(path)
            if file_problems:
                raise UsageError(problems_text(file_problems))
            items.append(Item(path, settings))
    cache = None if args.no_cache else ResultCache(Path.cwd() / FOLDER)
    for result, diff in check_files(items, _check_file, args, cache, args.jobs, engines):
        results.append(result)
        if diff:
            diffs.append(diff)
    return _report(args, results, diffs)


def _check_paths(paths: Sequence[Path]) -> None:
    """Each path named on the command line is a folder or a Python file (never parse a text file)."""
    for path in paths:
        if not path.exists():
            raise UsageError(f"no such file or folder: {path}")
        if not path.is_dir() and not path.is_file():
            raise UsageError(f"not a file or folder: {path}")
        if path.is_file() and not is_python_file(path):
            raise UsageError(
                f"not a Python file: {path} (check reads .py and .pyi files, notebooks (.ipynb), "
                "scripts whose first line runs python, and folders)"
            )


def _config(args: argparse.Namespace) -> int:
    from .effective import effective, render_json, render_text

    if not args.path.exists():
        raise UsageError(f"no such file or folder: {args.path}")
    flags = {s.name: getattr(args, s.name) for s in SETTINGS if s.cli is not None}
    overrides, problems = cli_layer(flags)
    if problems:
        raise UsageError(problems_text(problems))
    result = effective(args.path, overrides)
    sys.stdout.write((render_json if args.format == "json" else render_text)(result))
    return 2 if result.problems else 0


def _check_file(path: Path, engine: Engine, args: argparse.Namespace, diffs: list[str]) -> FileResult:
    """Check one file; with --fix write the fixed text, with --diff collect its diff."""
    if path.suffix == NOTEBOOK_SUFFIX:
        options = NotebookOptions(args.fix, args.diff, args.unsafe_fixes, args.format == "json")
        return check_notebook(path, lambda text: engine.check(text, str(path)), options, diffs)
    try:
        file = read_source_file(path)
    except SourceError as exc:
        return FileResult(path, (), (), error=f"file error: {exc}")
    analysis = engine.check(file.text, str(path))
    error, error_line, error_col = (
        analysis.syntax_error,
        analysis.syntax_error_line or 1,
        analysis.syntax_error_col,
    )
    fixed: tuple[Finding, ...] = ()
    if args.fix or args.diff:
        outcome = fix_source(
            file,
            str(path),
            lambda text: engine.check(text, str(path)),
            unsafe=args.unsafe_fixes,
            first=analysis,
        )
        if outcome.refused is not None:
            error, error_line, error_col = f"fixes not applied: {outcome.refused}", 1, 1
        elif outcome.fixed is not None:
            if args.diff:
                diffs.append(unified_diff(file.text, outcome.fixed, display_name(path)))
            else:
                try:
                    write_source(path, file.encode(outcome.fixed))
                except OSError as exc:
                    return FileResult(path, analysis.findings, (), error=f"file error: cannot write: {exc}")
            analysis = outcome.analysis
            fixed = outcome.gone
    return FileResult(
        path,
        analysis.findings,
        _json_fixes(analysis, args),
        error=error,
        error_line=error_line,
        error_col=error_col,
        source=analysis.source,
        note=analysis.note,
        fixed=fixed,
        cacheable=analysis.module is None or not analysis.module.reads_project,
    )


def _json_fixes(analysis: Analysis, args: argparse.Namespace) -> list[Fix | None]:
    """The fix each finding would get from --fix (with the same flags), for --format json."""
    if args.format != "json":
        return [None] * len(analysis.findings)
    return [analysis.applicable_fix(f, args.unsafe_fixes) for f in analysis.findings]


def _report(args: argparse.Namespace, results: list[FileResult], diffs: list[str]) -> int:
    notes = {r.note for r in results if r.note}
    errors = [r for r in results if r.error]
    if args.diff:
        # ruff's --diff: the diff alone on stdout, the rest on stderr; exit 1 if anything would change
        sys.stdout.write("".join(diffs))
        for r in errors:
            print(f"{display_name(r.path)}:{r.error_line}:{r.error_col}: {r.error}", file=sys.stderr)
        if args.show_fixes:
            sys.stderr.write(render_fixes(results, "Would fix"))
        else:
            would = sum(len(r.fixed) for r in results)
            print(f"Would fix {would} finding{'s' if would != 1 else ''}.", file=sys.stderr)
        for note in sorted(notes):
            print(f"jaxtarget: note: {note}", file=sys.stderr)
        return 1 if diffs or errors else 0
    if args.format == "text":
        sys.stdout.write(render_text(results, show_fixes=args.show_fixes))
    else:
        sys.stdout.write(RENDERERS[args.format](results))
        if args.show_fixes and args.fix:
            sys.stderr.write(render_fixes(results))
    for note in sorted(notes):
        print(f"jaxtarget: note: {note}", file=sys.stderr)
    has_findings = any(r.findings or r.error for r in results)
    return 1 if has_findings else 0


def _probe(args: argparse.Namespace) -> int:
    from .probe import (
        Ask,
        ProbeError,
        absent_entries,
        catalog_disagreements,
        execution_disagreements,
        format_disagreements,
        format_execution,
        format_scan,
        format_summary,
        run_probe,
        scan_report,
    )

    overrides, problems = cli_layer(_flags(args, "probe"))
    settings, cfg_problems = settings_for(Path.cwd(), overrides)
    if problems or cfg_problems:
        raise UsageError(problems_text([*problems, *cfg_problems]))
    if sum((args.all, args.env_only, args.scan)) > 1:
        raise UsageError("--all, --scan and --env-only exclude each other")
    if args.run and not args.all:
        raise UsageError("--run goes with --all")
    try:
        result = run_probe(
            interpreter_setting(settings),
            timeout=settings.probe_timeout_seconds,
            ask=Ask(env_only=args.env_only, all_apis=args.all, scan=args.scan, execute=args.run),
        )
    except ProbeError as exc:
        if args.format == "json":
            print(json.dumps({"ok": False, "error": {"kind": exc.kind, "message": str(exc)}}))
        else:
            print(f"jaxtarget: probe failed: {exc}", file=sys.stderr)
        return 1
    if args.scan:
        if args.format == "json":
            covered, missing = scan_report(result)
            print(json.dumps({**result.data, "covered": covered, "not_covered": missing}, indent=2))
        else:
            print(format_scan(result))
        return 0
    if args.all:
        checked, found = catalog_disagreements(result)
        ran, wrong, device = execution_disagreements(result) if args.run else (0, [], [])
        if args.format == "json":
            rows = [d.__dict__ for d in found]
            absent = [
                {"api": api.key, "public_since": api.public_since, "removed_in": api.removed_in, "text": text}
                for api, text in absent_entries(result)
            ]
            report = {**result.data, "checked": checked, "disagreements": rows, "absent": absent}
            if args.run:
                report["run"] = {
                    "checked": ran,
                    "disagreements": [d.__dict__ for d in wrong],
                    "device_failures": [d.__dict__ for d in device],
                }
            print(json.dumps(report, indent=2))
        else:
            print(format_disagreements(result, checked, found))
            if args.run:
                print(format_execution(result, ran, wrong, device))
        return 1 if found or wrong else 0
    if args.format == "json":
        print(json.dumps(result.data, indent=2))
    else:
        print(format_summary(result))
    return 0
