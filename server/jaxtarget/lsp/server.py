"""The language server: thin pygls 2 handlers over the engine (commands in commands.py)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys

from lsprotocol import types

from ..config import TRUST_KEY, Problem, parse_editor_settings
from ..engine import fix_all
from ..model import Finding
from . import convert, notebooks  # noqa: F401  (notebooks: its handlers register)
from .commands import environment_probe
from .hover import hover_markdown
from .state import FIX_ALL_KIND, SERVER, TEXT_DOCUMENTS, Checked, JaxTargetServer

_LOG_LEVELS = {
    "error": types.MessageType.Error,
    "warning": types.MessageType.Warning,
    "info": types.MessageType.Info,
    "debug": types.MessageType.Log,
}


# ================================================================ lifecycle


@SERVER.feature(types.INITIALIZE)
def initialize(ls: JaxTargetServer, params: types.InitializeParams) -> None:
    options = params.initialization_options
    if isinstance(options, dict) and "jaxtarget" in options and isinstance(options["jaxtarget"], dict):
        options = options["jaxtarget"]
    layer, problems = parse_editor_settings(options, "initializationOptions")
    trusted = _trust(params.initialization_options, problems)
    ls.trusted = trusted
    ls.init_layer = layer
    level = options.get("logLevel") if isinstance(options, dict) else None
    ls.log_threshold = _LOG_LEVELS.get(level if isinstance(level, str) else "info", types.MessageType.Info)
    ls.init_problems = problems


def _trust(options: object, problems: list[Problem]) -> bool:
    """Whether the client trusts the workspace (true for clients without a trust model)."""
    found: object = None
    if isinstance(options, dict):
        nested = options.get("jaxtarget")
        found = options.get(TRUST_KEY, nested.get(TRUST_KEY) if isinstance(nested, dict) else None)
    if found is None or isinstance(found, bool):
        return found is not False
    problems.append(Problem("initializationOptions", TRUST_KEY, f"expected true or false, got {found!r}"))
    return False  # the safe reading of a value that cannot be read


@SERVER.feature(types.INITIALIZED)
async def initialized(ls: JaxTargetServer, params: types.InitializedParams) -> None:
    ls.warn_problems(ls.init_problems)
    try:
        await ls.fetch_configuration()
    finally:
        ls.settings_read.set()
    ls.send_status()  # (a document opened meanwhile waited for the settings: nothing to redo)
    asyncio.get_running_loop().create_task(environment_probe(ls))
    mode = "pulled by the client" if ls.pull_mode else "pushed"
    ls.log(f"ready: settings read, diagnostics {mode}")


@SERVER.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: JaxTargetServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    ws = ls.client_capabilities.workspace
    # a client that answers workspace/configuration is asked per folder; the others send them here
    if not (ws and ws.configuration) and isinstance(settings, dict):
        section = settings.get("jaxtarget")
        if isinstance(section, dict):
            layer, problems = parse_editor_settings(section, "settings")
            ls.warn_problems(problems)
            ls.init_layer = layer
    await ls.fetch_configuration()
    ls.refresh_all()


@SERVER.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: JaxTargetServer, params: types.DidChangeWatchedFilesParams) -> None:
    if any(change.uri.endswith("pyproject.toml") for change in params.changes):
        ls.refresh_all()


# ================================================================ documents


@SERVER.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: JaxTargetServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, immediate=True)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: JaxTargetServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: JaxTargetServer, params: types.DidSaveTextDocumentParams) -> None:
    if params.text_document.uri.endswith("pyproject.toml"):
        ls.refresh_all()
    elif params.text_document.uri in ls.workspace.text_documents:
        ls.schedule(params.text_document.uri, immediate=True)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: JaxTargetServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    state = ls.documents.pop(uri, None)
    if state is not None and state.pending is not None:
        state.pending.cancel()
    if not ls.pull_mode:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@SERVER.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticRegistrationOptions(
        document_selector=TEXT_DOCUMENTS,
        identifier="jaxtarget",
        inter_file_dependencies=False,
        workspace_diagnostics=False,
    ),
)
async def pull_diagnostics(
    ls: JaxTargetServer, params: types.DocumentDiagnosticParams
) -> types.RelatedFullDocumentDiagnosticReport:
    checked = await ls.checked(params.text_document.uri)
    return types.RelatedFullDocumentDiagnosticReport(items=ls.diagnostics_of(checked) if checked else [])


# ================================================================ hover


@SERVER.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: JaxTargetServer, params: types.HoverParams) -> types.Hover | None:
    checked = await ls.checked(params.text_document.uri)
    if checked is None:
        return None
    doc = checked.doc
    line, col = convert.from_position(doc.position_codec, doc.lines, params.position)
    ref = checked.analysis.reference_at(line, col)
    if ref is None:
        return None
    python = checked.engine.environment.python
    loop = asyncio.get_running_loop()
    text = await loop.run_in_executor(
        ls.analysis_pool,
        hover_markdown,
        checked.engine,
        ref,
        checked.analysis,
        ls.cached_probe(python),
    )
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
        range=convert.to_range(doc.position_codec, doc.lines, ref.span),
    )


# ================================================================ code actions


def _finding_for(checked: Checked, data: object) -> Finding | None:
    """The finding a diagnostic (or an action) names in its ``data``, in this analysis only."""
    if not isinstance(data, dict) or data.get("version") != checked.version:
        return None
    return checked.analysis.finding(data.get("id"))


def _resolve_supported(ls: JaxTargetServer) -> bool:
    td = ls.client_capabilities.text_document
    ca = td.code_action if td else None
    return bool(ca and ca.resolve_support and "edit" in ca.resolve_support.properties)


@SERVER.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=True
    ),
)
async def code_action(ls: JaxTargetServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    checked = await ls.checked(uri)
    if checked is None:
        return []
    doc = checked.doc
    codec, lines = doc.position_codec, doc.lines
    lazy = _resolve_supported(ls)
    only = params.context.only
    analysis = checked.analysis
    asked: list[tuple[types.Diagnostic, Finding]] = []
    if not only or any(k.startswith(types.CodeActionKind.QuickFix) for k in only):
        for diag in params.context.diagnostics:
            finding = _finding_for(checked, diag.data) if diag.source == convert.SOURCE else None
            if finding is not None:
                asked.append((diag, finding))
    wants_fix_all = not only or any(FIX_ALL_KIND.startswith(k) for k in only)
    offer_fix_all = wants_fix_all and any(analysis.has_autofix(f) for f in analysis.findings)
    loop = asyncio.get_running_loop()
    # fixes are built off the event loop, from the analysis held for this version
    built = await loop.run_in_executor(ls.analysis_pool, lambda: [analysis.fixes(f) for _, f in asked])
    actions: list[types.CodeAction] = []
    for (diag, finding), fixes in zip(asked, built, strict=True):
        for i, fix in enumerate(fixes):
            action = types.CodeAction(
                title=fix.title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diag],
                is_preferred=i == 0 and fix.kind != "suppress",
                data={"uri": uri, "version": doc.version, "id": finding.id, "index": i},
            )
            if not lazy:
                edits = convert.text_edits(codec, lines, fix.edits)
                action.edit = convert.workspace_edit(uri, doc.version, edits)
            actions.append(action)
    if offer_fix_all:
        action = types.CodeAction(
            title="jaxtarget: guard every backend-limited call in this file",
            kind=FIX_ALL_KIND,
            data={"uri": uri, "version": doc.version, "fixAll": True},
        )
        if not lazy:
            action.edit = await loop.run_in_executor(ls.analysis_pool, _fix_all_edit, checked)
        actions.append(action)
    return actions


def _fix_all_edit(checked: Checked) -> types.WorkspaceEdit:
    engine, doc = checked.engine, checked.doc
    new = fix_all(doc.source, lambda text: engine.check(text, checked.path, sparse=True))
    return convert.workspace_edit(doc.uri, doc.version, convert.minimal_edit(doc.source, new))


@SERVER.feature(types.CODE_ACTION_RESOLVE)
async def code_action_resolve(ls: JaxTargetServer, action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    uri = data.get("uri")
    if not isinstance(uri, str):
        return action
    checked = await ls.checked(uri)
    if checked is None or data.get("version") != checked.version:
        return action  # closed, or moved on: offer nothing rather than a wrong edit
    doc = checked.doc
    loop = asyncio.get_running_loop()
    if data.get("fixAll"):
        action.edit = await loop.run_in_executor(ls.analysis_pool, _fix_all_edit, checked)
        return action
    finding = _finding_for(checked, data)
    index = data.get("index", 0)
    if finding is not None and isinstance(index, int):
        fixes = await loop.run_in_executor(ls.analysis_pool, checked.analysis.fixes, finding)
        if 0 <= index < len(fixes):
            edits = convert.text_edits(doc.position_codec, doc.lines, fixes[index].edits)
            action.edit = convert.workspace_edit(uri, doc.version, edits)
    return action


def serve() -> None:
    logging.basicConfig(level=logging.WARNING)
    SERVER.start_io()
    # Exit now: an analysis still running in its thread, or tearing down jedi's and jax's
    # objects, would keep the process alive for seconds after `exit` (children: commands.py)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(ValueError, OSError):  # `exit` closed stdout
            stream.flush()
    os._exit(0 if SERVER.protocol._shutdown else 1)


__all__ = ["SERVER", "JaxTargetServer", "serve"]
