"""The README's Emacs, Helix and Sublime Text snippets, extracted from README.md.

The Emacs snippets (Eglot, lsp-mode) are loaded verbatim into Emacs in batch mode, which
then opens a Python file with a ``lax.psend`` and waits for the server's diagnostics in the
buffer (Debian's ``emacs-nox``, ``elpa-eglot`` and ``elpa-lsp-mode``; scripts/test.sh
installs them). Helix and Sublime Text do not install here: their snippets are parsed as
their editors read them (TOML, JSON), checked for the keys each editor needs, and the
command they name is started as a language server with the options they pass.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jaxtarget.config import parse_editor_settings

from .conftest import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

PSEND = 'from jax import lax\n\n\ndef step(x):\n    return lax.psend(x, "i", [(0, 1)])\n'
BIN = str(Path(sys.executable).parent)


def _section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(f"\n### {title}\n")
    end = text.find("\n### ", start + 1)
    return text[start:end]


def _blocks(title: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", _section(title), re.S)


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _messages(data: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an LSP byte stream (headers, blank line, body)."""
    found = []
    while data:
        head, _, data = data.partition(b"\r\n\r\n")
        length = int(re.search(rb"Content-Length: (\d+)", head).group(1))  # type: ignore[union-attr]
        found.append(json.loads(data[:length]))
        data = data[length:]
    return found


def _serve_once(command: list[str], options: object) -> dict[str, Any]:
    """Start ``command`` as a language server (from PATH, as the editor would), initialise it
    with ``options``, shut it down; its answer to initialize."""
    stdin = b"".join(
        [
            _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"processId": None, "rootUri": None, "capabilities": {},
                               "initializationOptions": options}}),
            _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
            _frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
            _frame({"jsonrpc": "2.0", "method": "exit"}),
        ]
    )  # fmt: skip
    env = {**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", "")}
    out = subprocess.run(command, input=stdin, capture_output=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    answers = _messages(out.stdout)
    (init,) = [a for a in answers if a.get("id") == 1]
    assert "result" in init, init
    assert any(a.get("id") == 2 and "result" in a for a in answers)
    result: dict[str, Any] = init["result"]
    return result


# ---------------------------------------------------------------- Helix


def test_the_helix_snippet_is_a_languages_toml_that_starts_the_server() -> None:
    (block,) = _blocks("Helix", "toml")
    config = tomllib.loads(block)
    server = config["language-server"]["jaxtarget"]
    assert set(server) <= {"command", "args", "config", "environment", "timeout"}
    (python,) = [lang for lang in config["language"] if lang["name"] == "python"]
    assert "jaxtarget" in python["language-servers"]
    _, problems = parse_editor_settings(server.get("config", {}))
    assert problems == []
    answer = _serve_once([server["command"], *server.get("args", [])], server.get("config"))
    assert answer["serverInfo"]["name"] == "jaxtarget"


# ---------------------------------------------------------------- Sublime Text


def test_the_sublime_snippet_is_lsp_settings_that_start_the_server() -> None:
    (block,) = _blocks("Sublime Text", "json")
    client = json.loads(block)["clients"]["jaxtarget"]
    assert client["enabled"] is True
    assert client["selector"] == "source.python"
    assert isinstance(client["command"], list) and all(isinstance(p, str) for p in client["command"])
    _, problems = parse_editor_settings(client.get("initializationOptions", {}))
    assert problems == []
    answer = _serve_once(client["command"], client.get("initializationOptions"))
    assert answer["capabilities"]["hoverProvider"]


# ---------------------------------------------------------------- Emacs

EMACS = shutil.which("emacs")

HARNESS = r"""
;;; -*- lexical-binding: t -*-
(require 'package)
(package-initialize)  ; batch mode does not activate the installed packages
(require 'python)
(require 'json)
(load (getenv "JAXTARGET_SNIPPET") nil t)
(defvar jaxtarget-out (getenv "JAXTARGET_OUT"))
(defun jaxtarget-finish (messages error)
  (with-temp-file jaxtarget-out
    (insert (json-encode (list (cons 'messages (vconcat messages)) (cons 'error error)))))
  (kill-emacs 0))
(defun jaxtarget-wait (collect)
  "Wait until COLLECT returns the diagnostics' messages."
  (let ((deadline (+ (float-time) 120)) (found nil))
    (while (and (not found) (< (float-time) deadline))
      (accept-process-output nil 0.2)
      (setq found (funcall collect)))
    found))
(condition-case err
    (progn
      (find-file (getenv "JAXTARGET_FILE"))
      (pcase (getenv "JAXTARGET_CLIENT")
        ("eglot"
         (require 'eglot)
         ;; the snippet's hook ran eglot-ensure, which connects from the command loop
         (run-hooks 'post-command-hook)
         (jaxtarget-finish
          (jaxtarget-wait (lambda ()
                            (when (bound-and-true-p flymake-mode) (flymake-start))
                            (mapcar #'flymake-diagnostic-text (flymake-diagnostics))))
          (if (eglot-current-server) nil "no eglot server")))
        ("lsp-mode"
         (require 'lsp-mode)
         (setq lsp-auto-guess-root t lsp-enable-file-watchers nil lsp-restart 'ignore)
         ;; lsp-deferred waits for the buffer to be shown, which batch mode never does
         (lsp)
         (jaxtarget-finish
          (jaxtarget-wait (lambda ()
                            (mapcar (lambda (d) (lsp:diagnostic-message d))
                                    (gethash (lsp--fix-path-casing (buffer-file-name))
                                             (lsp-diagnostics t)))))
          nil))))
  (error (jaxtarget-finish nil (format "%S" err))))
"""


def _emacs_snippet(marker: str) -> str:
    (block,) = [b for b in _blocks("Emacs", "elisp") if marker in b]
    return block


@pytest.mark.editor
@pytest.mark.skipif(EMACS is None and not os.environ.get("CI"), reason="emacs is not installed")
@pytest.mark.parametrize(
    ("client", "marker"), [("eglot", "eglot-server-programs"), ("lsp-mode", "lsp-register-client")]
)
def test_the_emacs_snippet_shows_the_servers_diagnostics(client: str, marker: str, tmp_path: Path) -> None:
    assert EMACS is not None, "CI installs emacs-nox, elpa-eglot and elpa-lsp-mode (scripts/test.sh)"
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.jaxtarget]\ntargets = ["cpu"]\n')
    (project / "step.py").write_text(PSEND)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (tmp_path / "snippet.el").write_text(_emacs_snippet(marker))
    (tmp_path / "harness.el").write_text(HARNESS)
    out = tmp_path / "out.json"
    env = {
        **os.environ,
        "PATH": BIN + os.pathsep + os.environ.get("PATH", ""),
        "HOME": str(tmp_path),  # no user init file, and lsp-mode's session file goes here
        "JAXTARGET_SNIPPET": str(tmp_path / "snippet.el"),
        "JAXTARGET_FILE": str(project / "step.py"),
        "JAXTARGET_CLIENT": client,
        "JAXTARGET_OUT": str(out),
    }
    proc = subprocess.run(
        [EMACS, "--batch", "-l", str(tmp_path / "harness.el")],
        cwd=project, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert out.exists(), proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["error"] is None, (result, proc.stderr[-3000:])
    messages = result["messages"]
    assert any("`lax.psend` only lowers on GPU" in m for m in messages), (messages, proc.stderr[-3000:])
