"""The language server's state: settings per folder, engines, one record per open document."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from .. import __version__
from ..config import Layer, Problem, Settings, parse_editor_settings, resolve
from ..config import load_project as _load_project
from ..engine import Analysis, Engine
from ..environment import Environment, InterpreterError, load_environment
from ..platforms import ordered
from ..probe import ProbeResult
from ..project import Engines, interpreter_setting
from ..semantics.resolver import StaticResolver
from ..semantics.source import ChunkCache
from . import convert
from .document import IndexedDocument
from .protocol import JaxTargetProtocol, pulls_diagnostics

log = logging.getLogger("jaxtarget")

DEBOUNCE_SECONDS = 0.15
#: how long no analysis must be under way for the server's analyses to count as settled
SETTLED_SECONDS = 0.4
#: documents whose analysis (and parsed chunks) the server keeps; another one's are dropped
#: once its diagnostics are out, and computed again when a request needs them
HOT_DOCUMENTS = 12
FIX_ALL_KIND = "source.fixAll.jaxtarget"
COMMAND_PROBE = "jaxtarget.probeBackend"
COMMAND_CONFIG = "jaxtarget.showConfiguration"
#: the server's notification of each folder's effective targets, sent whenever they may change
NOTIFY_STATUS = "jaxtarget/status"
#: where a setting came from, as `jaxtarget.showConfiguration` says
PYPROJECT, EDITOR = "pyproject.toml", "editor settings"
#: the documents whose diagnostics a pulling client pulls: text documents, not notebook cells
#: (VS Code's cells have the scheme vscode-notebook-cell; their diagnostics are pushed)
TEXT_DOCUMENTS: list[types.TextDocumentFilter] = [
    types.TextDocumentFilterScheme(scheme=scheme, language="python") for scheme in ("file", "untitled")
]
#: how long an analysis waits for the client's settings (a client that never answers
#: workspace/configuration, or never sends `initialized`, is checked with what it sent before)
SETTINGS_WAIT = 10.0
#: notebooks of any type, their Python cells (checked together: lsp/notebooks.py)
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(
            notebook="*", cells=[types.NotebookCellLanguage(language="python")]
        )
    ]
)


@dataclass
class Checked:
    """One analysis of one document version, with the text it was computed on."""

    #: a snapshot of the document as analysed (its lines and codec convert positions)
    doc: TextDocument
    analysis: Analysis
    engine: Engine
    path: str | None
    #: the settings generation it was computed under
    generation: int = 0

    @property
    def version(self) -> int | None:
        return self.doc.version


@dataclass
class Document:
    """What the server holds for one open document."""

    checked: Checked | None = None
    pending: asyncio.Task[None] | None = None
    #: the analysis under way: (version, generation) and its future, shared by every request
    running: tuple[tuple[int | None, int], asyncio.Future[Checked]] | None = None
    last_change: float = 0.0
    chunks: ChunkCache = field(default_factory=ChunkCache)


class JaxTargetServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "jaxtarget", __version__, protocol_cls=JaxTargetProtocol, notebook_document_sync=NOTEBOOK_SYNC
        )
        self.engines = Engines()
        self.init_layer = Layer()
        self.folder_layers: dict[str, Layer] = {}
        self.documents: dict[str, Document] = {}
        #: the documents analysed most recently, oldest first
        self.hot: OrderedDict[str, None] = OrderedDict()
        self.probes: dict[str, tuple[float, ProbeResult]] = {}
        self.log_threshold = types.MessageType.Info
        self.init_problems: list[Problem] = []
        #: False in a workspace the client does not trust: nothing the workspace chose is run
        self.trusted = True
        self.warned: set[str] = set()
        #: bumped whenever settings change: an analysis from an older generation is not reused
        self.generation = 0
        #: whether the first (cold) analysis has started: it alone reports work-done progress
        self.cold_started = False
        #: set once the first analysis is done (the environment probe waits for it)
        self.first_analysis = asyncio.Event()
        #: set once the client's settings are read after `initialized`: analyses wait for it
        self.settings_read = asyncio.Event()
        self.tasks: set[asyncio.Task[None]] = set()
        #: imports-only environments for interpreters that cannot be used, by setting
        self.fallbacks: dict[str | None, Environment] = {}
        # jedi is not thread-safe: one worker thread does all analysis
        self.analysis_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jaxtarget-analysis")
        #: checks a notebook cell within its notebook (set by lsp/notebooks.py, which handles notebooks)
        self.cell_checker: Callable[[JaxTargetServer, str], Awaitable[Checked | None]] | None = None

    # ------------------------------------------------------------ logging and messages

    def log(self, message: str, level: types.MessageType = types.MessageType.Info) -> None:
        log.info(message)
        if level.value <= self.log_threshold.value:
            self.window_log_message(types.LogMessageParams(type=level, message=message))

    def report_server_error(self, error: Exception, source: Any) -> None:
        self.log(
            f"internal error ({source.__name__ if hasattr(source, '__name__') else source}): {error!r}",
            types.MessageType.Error,
        )

    def note_once(self, message: str) -> None:
        """Log ``message`` at warning level, once per session."""
        if message not in self.warned:
            self.warned.add(message)
            self.log(message, types.MessageType.Warning)

    def warn_problems(self, problems: list[Problem] | tuple[Problem, ...]) -> None:
        for problem in problems:
            self.show_once(f"configuration: {problem}; using the default")

    def show_once(self, text: str) -> None:
        """Log ``text`` as a warning each time; show it to the user once per session."""
        self.log(text, types.MessageType.Warning)
        if text not in self.warned:
            self.warned.add(text)
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=f"jaxtarget: {text}")
            )

    # ------------------------------------------------------------ settings

    def folder_of(self, uri: str) -> str | None:
        best: str | None = None
        for folder in self.workspace.folders:
            if uri.startswith(folder.rstrip("/") + "/") and (best is None or len(folder) > len(best)):
                best = folder
        return best

    def layers_for(self, uri: str) -> tuple[list[tuple[str, Layer]], str | None]:
        """The settings layers that apply to ``uri``, lowest first, each with where it came from."""
        folder = self.folder_of(uri)
        path = to_fs_path(uri)
        stop = Path(to_fs_path(folder) or "") if folder else None
        project = _load_project(Path(path), stop) if path else None
        pyproject = str(project.path) if project and project.path else None
        layers = [(PYPROJECT, project.layer)] if project else []
        if project and project.problems:
            self.warn_problems(project.problems)
        layers += [(EDITOR, self.init_layer), (EDITOR, self.folder_layers.get(folder or "", Layer()))]
        if not self.trusted:
            # an untrusted workspace may not pick the interpreter (its pyproject.toml or its
            # settings); the client's own choice (initializationOptions) stands
            if project and project.layer.interpreter:
                self.note_once(
                    f"the workspace is not trusted: interpreter {list(project.layer.interpreter)} "
                    f"set in {project.path} is not run"
                )
            layers = [
                (label, layer.without("interpreter") if layer is not self.init_layer else layer)
                for label, layer in layers
            ]
        return layers, pyproject

    def settings_for(self, uri: str) -> Settings:
        layers, pyproject = self.layers_for(uri)
        return resolve(*(layer for _, layer in layers), pyproject=pyproject)

    async def fetch_configuration(self) -> None:
        caps = self.client_capabilities.workspace
        if not (caps and caps.configuration):
            return
        folders = list(self.workspace.folders) or [None]
        items = [types.ConfigurationItem(scope_uri=f, section="jaxtarget") for f in folders]
        try:
            values = await self.workspace_configuration_async(types.ConfigurationParams(items=items))
        except Exception as exc:
            self.log(f"workspace/configuration failed: {exc!r}", types.MessageType.Warning)
            return
        for folder, value in zip(folders, values, strict=False):
            layer, problems = parse_editor_settings(value, f"settings ({folder or 'global'})")
            self.warn_problems(problems)
            self.folder_layers[folder or ""] = layer
        self.engines.forget()

    # ------------------------------------------------------------ diagnostics

    @property
    def pull_mode(self) -> bool:
        """Whether the client pulls diagnostics of text documents (then none are pushed to it)."""
        return pulls_diagnostics(self.client_capabilities)

    def is_cell(self, uri: str) -> bool:
        return self.workspace.get_notebook_document(cell_uri=uri) is not None

    def pushes(self, uri: str) -> bool:
        """Whether this document's diagnostics are pushed: every document's to a client that does
        not pull, a notebook cell's to any client (pulls are advertised for text documents only,
        ``TEXT_DOCUMENTS``: VS Code's language client does not pull for cells)."""
        return not self.pull_mode or self.is_cell(uri)

    def engine_for(self, uri: str) -> Engine:
        settings = self.settings_for(uri)
        setting = interpreter_setting(settings)
        try:
            environment = load_environment(setting, isolated=True)
        except InterpreterError as exc:
            environment = self._imports_only(setting, exc)
        return self.engines.engine(settings, environment)

    def _imports_only(self, setting: str | None, error: InterpreterError) -> Environment:
        """The environment for an interpreter that cannot be used: names read from imports alone."""
        fallback = self.fallbacks.get(setting)
        if fallback is None:
            name = setting or "the default interpreter"
            reason = f"interpreter {name} cannot be used; resolved from imports only"
            fallback = Environment(name, StaticResolver(reason), None, ())
            self.fallbacks[setting] = fallback
            self.show_once(
                f"{error}. Analysing from imports only until an interpreter with jax is set "
                "(jaxtarget.interpreter, or interpreter in [tool.jaxtarget])"
            )
        return fallback

    def open_document(self, uri: str) -> TextDocument | None:
        docs = self.workspace.text_documents
        found = docs.get(uri) or docs.get(unquote(uri))
        return found if isinstance(found, TextDocument) else None

    def analyse(self, doc: TextDocument, generation: int) -> Checked:
        engine = self.engine_for(doc.uri)
        path = to_fs_path(doc.uri)
        cache = self.documents.setdefault(doc.uri, Document()).chunks
        analysis = engine.check(doc.source, path, sparse=True, cache=cache)
        return Checked(doc, analysis, engine, path, generation)

    async def checked(self, uri: str) -> Checked | None:
        """The analysis of the document's current version (None: the document is not open).

        Requests and the push share one analysis per version: the first caller starts it,
        the others wait for it; a cancelled request does not cancel it.
        """
        if not self.settings_read.is_set():
            # a document opened while the settings are read is checked with them, not before
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.settings_read.wait(), SETTINGS_WAIT)
        if self.cell_checker is not None and self.workspace.get_notebook_document(cell_uri=uri) is not None:
            return await self.cell_checker(self, uri)  # a notebook's cells are checked together
        for _ in range(3):
            doc = self.open_document(uri)
            if doc is None:
                return None
            state = self.documents.setdefault(doc.uri, Document())
            key = (doc.version, self.generation)
            done = state.checked
            if done is not None and (done.version, done.generation) == key:
                return done
            if state.running is None or state.running[0] != key:
                # a snapshot: the open document changes in place on didChange
                snapshot = (
                    doc.snapshot()
                    if isinstance(doc, IndexedDocument)
                    else TextDocument(
                        doc.uri, doc.source, doc.version, doc.language_id, position_codec=doc.position_codec
                    )
                )
                loop = asyncio.get_running_loop()
                future = loop.run_in_executor(self.analysis_pool, self.analyse, snapshot, self.generation)
                state.running = (key, asyncio.ensure_future(future))
                if not self.cold_started:
                    self.cold_started = True
                    self._background(self._cold_progress(state.running[1]))
            running = state.running[1]
            try:
                checked = await asyncio.shield(running)
            finally:
                if running.done() and state.running is not None and state.running[1] is running:
                    state.running = None  # done, or failed: a later request starts afresh
            self.first_analysis.set()  # (no await before the caller publishes: that goes first)
            if self.documents.get(doc.uri) is state and (
                state.checked is None or (state.checked.version or 0) <= (checked.version or 0)
            ):
                state.checked = checked
                self._keep_hot(doc.uri)
            current = self.open_document(uri)
            if current is None or current.version == checked.version:
                return checked if current is not None else None
        return checked  # the document keeps changing: the latest analysis done

    def analysing(self) -> bool:
        """Whether a document's analysis is waiting for its debounce, queued or running."""
        return any(
            d.running is not None or (d.pending is not None and not d.pending.done())
            for d in self.documents.values()
        )

    async def analyses_settled(self, quiet: float = SETTLED_SECONDS) -> None:
        """Return once no analysis has been under way for ``quiet`` seconds."""
        since = time.monotonic()
        while time.monotonic() - since < quiet:
            await asyncio.sleep(quiet / 4)
            if self.analysing():
                since = time.monotonic()

    def _keep_hot(self, uri: str) -> None:
        """Keep this document's analysis; drop that of the one analysed longest ago beyond
        ``HOT_DOCUMENTS`` (its syntax trees are most of what an open document costs)."""
        self.hot[uri] = None
        self.hot.move_to_end(uri)
        while len(self.hot) > HOT_DOCUMENTS:
            old, _ = self.hot.popitem(last=False)
            state = self.documents.get(old)
            if state is not None and state.running is None:
                state.checked = None
                state.chunks = ChunkCache()

    def send_status(self) -> None:
        """Tell the client each folder's effective targets (computed off the event loop)."""
        self._background(self._send_status())

    async def _send_status(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            folders = await loop.run_in_executor(self.analysis_pool, self.folder_status)
        except Exception as exc:  # reported; the next settings change tries again
            self.log(f"computing the effective targets failed: {exc!r}", types.MessageType.Error)
            return
        self.protocol.notify(NOTIFY_STATUS, {"folders": folders})

    def folder_status(self) -> list[dict[str, Any]]:
        """Per workspace folder: the configured and the effective targets, the interpreter and its jax."""
        out: list[dict[str, Any]] = []
        for folder in list(self.workspace.folders) or ["file:///"]:
            uri = folder.rstrip("/") + "/__jaxtarget__.py"
            settings = self.settings_for(uri)
            engine = self.engine_for(uri)
            out.append(
                {
                    "uri": folder,
                    "targets": list(settings.target_backends),
                    "effectiveTargets": ordered(engine.targets),
                    "python": engine.environment.python,
                    "jaxVersion": engine.environment.jax_version,
                }
            )
        return out

    def _background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _cold_progress(self, first: asyncio.Future[Checked]) -> None:
        """Work-done progress while the first analysis loads jedi and resolves against jax."""
        window = self.client_capabilities.window
        if not (window and window.work_done_progress):
            return
        token = f"jaxtarget-first-analysis-{uuid.uuid4()}"
        try:
            await self.work_done_progress.create_async(token)
        except Exception as exc:  # the client refused the token: no progress, analysis goes on
            self.log(f"window/workDoneProgress/create failed: {exc!r}", types.MessageType.Log)
            return
        self.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title="JAX Target", message="first analysis: resolving names against your JAX"
            ),
        )
        await asyncio.wait([first])
        self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="ready"))

    def schedule(self, uri: str, immediate: bool = False) -> None:
        if not self.pushes(uri):
            return  # the client asks when it wants diagnostics
        now = time.monotonic()
        state = self.documents.setdefault(uri, Document())
        previous, state.pending = state.pending, None
        busy = previous is not None and not previous.done()
        if previous is not None:
            previous.cancel()
        recent = now - state.last_change < DEBOUNCE_SECONDS
        state.last_change = now
        delay = 0.0 if immediate or not (busy or recent) else DEBOUNCE_SECONDS
        state.pending = asyncio.get_running_loop().create_task(self._check_later(uri, delay))

    async def _check_later(self, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        try:
            checked = await self.checked(uri)
        except Exception as exc:  # reported, and the next change tries again
            self.log(f"checking {uri} failed: {exc!r}", types.MessageType.Error)
            return
        current = self.open_document(uri)
        if checked is None or current is None or uri not in self.documents:
            return  # the document was closed
        if current.version != checked.version:
            return  # stale: a newer version is on its way
        self.publish(checked)
        self.log(
            f"checked {uri} v{checked.version}: {len(checked.analysis.findings)} findings",
            types.MessageType.Log,
        )

    def publish(self, checked: Checked) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=checked.doc.uri, diagnostics=self.diagnostics_of(checked), version=checked.version
            )
        )

    def diagnostics_of(self, checked: Checked) -> list[types.Diagnostic]:
        doc = checked.doc
        codec, lines = doc.position_codec, doc.lines
        return [
            convert.diagnostic(codec, lines, doc.uri, checked.version, f) for f in checked.analysis.findings
        ]

    def refresh_all(self) -> None:
        """Settings changed: push every open document again, or ask a pulling client to pull."""
        self.engines.forget()
        self.generation += 1
        self.send_status()
        uris = [doc.uri for doc in self.workspace.text_documents.values()]  # as the client names them
        pushed = [uri for uri in uris if self.pushes(uri)]
        for uri in pushed:
            self.schedule(uri, immediate=True)
        if len(pushed) < len(uris):
            self.workspace_diagnostic_refresh(None).add_done_callback(self._refreshed)

    def _refreshed(self, future: Future[None]) -> None:
        if not future.cancelled() and future.exception() is not None:
            self.log(f"workspace/diagnostic/refresh failed: {future.exception()!r}", types.MessageType.Log)

    # ------------------------------------------------------------ probe

    def cached_probe(self, python: str) -> ProbeResult | None:
        hit = self.probes.get(python)
        if hit is None:
            return None
        try:
            mtime = Path(python).stat().st_mtime
        except OSError:
            return None
        return hit[1] if hit[0] == mtime else None

    def remember_probe(self, python: str, result: ProbeResult) -> None:
        try:
            mtime = Path(python).stat().st_mtime
        except OSError:
            return
        if not result.data.get("cases") and python in self.probes:
            old = self.probes[python][1]
            if old.data.get("cases"):
                return  # keep the full result; the environment check adds nothing
        self.probes[python] = (mtime, result)
        backend = result.default_backend
        if backend and self.engines.backends.get(python) != backend:
            self.engines.backends[python] = backend
            # only documents whose targets include `auto` can change
            if any("auto" in self.settings_for(uri).target_backends for uri in self.workspace.text_documents):
                self.refresh_all()


SERVER = JaxTargetServer()
