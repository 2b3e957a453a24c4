"""The JSON-RPC protocol, amended so that every request gets an answer.

pygls drops a request whose params do not deserialise (a negative position, a
missing field) after logging it, and ignores requests after `shutdown`: the client
then waits forever. Here such a request is answered with -32602 (Invalid Params,
naming what is wrong) or -32600 (Invalid Request after shutdown).

It also chooses how diagnostics travel: a text document's by pull only where the client
pulls and can be asked to pull again (`workspace/diagnostic/refresh`), by push otherwise,
never both; a notebook cell's by push (lsp/notebooks.py).
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import Any

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol, lsp_method

from .document import IndexedWorkspace

log = logging.getLogger("jaxtarget")


class _Answered:
    """A request already answered with an error while it was being read."""

    jsonrpc = "2.0"


def _reason(error: BaseException, expected: type | None) -> str:
    return str(error) or (f"expected {expected.__name__}" if expected else type(error).__name__)


def pulls_diagnostics(caps: types.ClientCapabilities) -> bool:
    """Whether diagnostics go to this client by pull.

    A client that pulls but cannot be asked to pull again (Neovim 0.11 has no
    `workspace/diagnostic/refresh`) would keep stale findings after a settings change
    until its next edit: it gets pushes instead, and no `diagnosticProvider` is
    advertised, so it does not also pull.
    """
    td, ws = caps.text_document, caps.workspace
    pulls = td is not None and td.diagnostic is not None
    return pulls and bool(ws and ws.diagnostics and ws.diagnostics.refresh_support)


class JaxTargetProtocol(LanguageServerProtocol):
    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        # the workspace pygls made, whose documents keep their line starts between versions
        self.workspace.__class__ = IndexedWorkspace
        if not pulls_diagnostics(params.capabilities):
            result.capabilities.diagnostic_provider = None
        return result

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            msg_id, method = data.get("id"), data.get("method")
            if msg_id is None or not isinstance(method, str):
                raise  # a notification or a response: there is no one to answer
            error = exc
            cause = exc.__cause__
            if isinstance(exc, JsonRpcInvalidParams) and isinstance(cause, cattrs.ClassValidationError):
                errors = cattrs.transform_error(cause, path="$", format_exception=_reason)
                details = "; ".join(errors[:3])
                error = JsonRpcInvalidParams(f"invalid params for {method}: {details}")
            log.warning("answered %s request %s with %s", method, msg_id, error)
            self._send_response(msg_id, error=error.to_response_error())
            return _Answered()

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Answered):
            return
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        if self._shutdown and msg_id is not None and isinstance(method, str) and method != types.EXIT:
            error = JsonRpcInvalidRequest(f"the server is shut down: {method} not handled")
            self._send_response(msg_id, error=error.to_response_error())
            return
        super().handle_message(message)
