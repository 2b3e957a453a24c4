"""Command line: `jaxtarget check | rules | rule | probe | lsp`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .config import SETTINGS, cli_layer, problems_text
from .docs import render_rule, render_rules_markdown, render_rules_text, rules_json
from .environment import InterpreterError
from .files import SourceError, discover, read_source
from .formats import FORMATS, RENDERERS, FileResult
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
    c.add_argument("paths", nargs="*", default=["."], type=Path)
    _setting_flags(c, "check")
    c.add_argument("--format", choices=FORMATS, default="text")

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
        "--scan",
        action="store_true",
        help="list the platform-limited primitives of this jax's lowering registry, covered or not",
    )

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


def main(argv: Sequence[str] | None = None) -> int:
    try:
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
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or folder: {missing[0]}")
    engines = Engines()
    results: list[FileResult] = []
    for start in args.paths:
        root_settings, root_problems = settings_for(start, overrides)
        if root_problems:
            raise UsageError(problems_text(root_problems))
        root = Path(root_settings.pyproject).parent if root_settings.pyproject else None
        for path in discover([start], root_settings.exclude, root):
            settings, file_problems = settings_for(path, overrides)
            if file_problems:
                raise UsageError(problems_text(file_problems))
            engine = engines.engine(settings)
            try:
                source = read_source(path)
            except SourceError as exc:
                results.append(FileResult(path, (), (), error=f"file error: {exc}"))
                continue
            analysis = engine.check(source, str(path))
            fixes = (
                [analysis.autofix(f) for f in analysis.findings]
                if args.format == "json"
                else [None] * len(analysis.findings)
            )
            results.append(
                FileResult(
                    path,
                    analysis.findings,
                    fixes,
                    error=analysis.syntax_error,
                    error_line=analysis.syntax_error_line or 1,
                    error_col=analysis.syntax_error_col,
                    source=source,
                    note=analysis.note,
                )
            )
    sys.stdout.write(RENDERERS[args.format](results))
    notes = {r.note for r in results if r.note}
    for note in sorted(notes):
        print(f"jaxtarget: note: {note}", file=sys.stderr)
    has_findings = any(r.findings or r.error for r in results)
    return 1 if has_findings else 0


def _probe(args: argparse.Namespace) -> int:
    from .probe import (
        ProbeError,
        catalog_disagreements,
        format_disagreements,
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
    try:
        result = run_probe(
            interpreter_setting(settings),
            timeout=settings.probe_timeout_seconds,
            env_only=args.env_only,
            all_apis=args.all,
            scan=args.scan,
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
        if args.format == "json":
            rows = [d.__dict__ for d in found]
            print(json.dumps({**result.data, "checked": checked, "disagreements": rows}, indent=2))
        else:
            print(format_disagreements(result, checked, found))
        return 1 if found else 0
    if args.format == "json":
        print(json.dumps(result.data, indent=2))
    else:
        print(format_summary(result))
    return 0
