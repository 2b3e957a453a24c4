"""The server bundled in jaxtarget.vsix starts on every Python in requires-python, and says why not on older ones."""

from __future__ import annotations

import json
import os
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from .code_server import VSIX
from .conftest import ROOT

PYENV = Path("/root/.pyenv/versions")
OLDEST = tuple(
    int(n)
    for n in re.search(r'requires-python = ">=(\d+)\.(\d+)"', (ROOT / "pyproject.toml").read_text()).groups()  # type: ignore[union-attr]
)


def _pythons() -> list[tuple[tuple[int, int], Path]]:
    found = []
    for folder in sorted(PYENV.glob("*")) if PYENV.exists() else []:
        m = re.fullmatch(r"(\d+)\.(\d+)\.\d+", folder.name)
        if m and (folder / "bin" / "python").exists():
            found.append(((int(m.group(1)), int(m.group(2))), folder / "bin" / "python"))
    return found


SUPPORTED = [p for v, p in _pythons() if v >= OLDEST]
OLDER = [p for v, p in _pythons() if v < OLDEST]

pytestmark = [
    pytest.mark.editor,
    pytest.mark.skipif(not VSIX.exists() and not os.environ.get("CI"), reason="run npm run package first"),
]


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bundled/libs as the packaged extension ships it."""
    where = tmp_path_factory.mktemp("vsix")
    with zipfile.ZipFile(VSIX) as vsix:
        vsix.extractall(where)
    found = where / "extension" / "bundled" / "libs"
    assert (found / "jaxtarget" / "__main__.py").exists()
    return found


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _run_server(python: Path, libs: Path, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    # as the extension starts it: the user's interpreter, the bundle first on the path
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(libs), "PYTHONNOUSERSITE": "1"}
    return subprocess.run(
        [str(python), "-m", "jaxtarget", "lsp", "--stdio"],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=libs.parent,
        timeout=120,
    )


def _responses(stdout: bytes) -> list[dict[str, object]]:
    out = []
    for m in re.finditer(rb"Content-Length: (\d+)\r\n(?:[^\r\n]+\r\n)*\r\n", stdout):
        start = m.end()
        out.append(json.loads(stdout[start : start + int(m.group(1))]))
    return out


def test_pyenv_has_pythons_on_both_sides_of_the_range() -> None:
    assert SUPPORTED and OLDER, _pythons()


@pytest.mark.parametrize("python", SUPPORTED, ids=[p.parent.parent.name for p in SUPPORTED])
def test_bundled_server_initializes_and_shuts_down(libs: Path, python: Path) -> None:
    stdin = b"".join(
        _frame(m)
        for m in (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}},
            },
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"},
        )
    )
    proc = _run_server(python, libs, stdin)
    answers = {r.get("id"): r for r in _responses(proc.stdout) if "id" in r}
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    init = answers[1]
    assert "result" in init, init
    result = init["result"]
    assert isinstance(result, dict) and result["serverInfo"]["name"] == "jaxtarget", result
    assert "hoverProvider" in result["capabilities"], result
    assert answers[2] == {"jsonrpc": "2.0", "id": 2, "result": None}, answers[2]


@pytest.mark.parametrize("python", OLDER, ids=[p.parent.parent.name for p in OLDER])
def test_an_older_python_gets_one_clear_line(libs: Path, python: Path) -> None:
    proc = _run_server(python, libs, b"")
    lines = proc.stderr.decode().splitlines()
    assert proc.returncode == 2 and proc.stdout == b"", proc
    assert len(lines) == 1, lines
    assert lines[0].startswith("jaxtarget needs Python 3.10 or newer; ") and str(python) in lines[0], lines
