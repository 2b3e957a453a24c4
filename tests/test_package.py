"""The package: `python -m build` makes a wheel and an sdist; the wheel, installed into a fresh
virtual environment (not editable, not from the checkout), runs `jaxtarget check` and `jaxtarget lsp`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import venv
import zipfile
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from .conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
SEND = 'from jax import lax\ny = lax.psend(x, "i", [(0, 1)])\n'


def _env() -> dict[str, str]:
    """The environment without anything that would lead back to the checkout or its venv."""
    return {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel `python -m build` makes from the project's files (the wheel from the sdist)."""
    src = tmp_path_factory.mktemp("src")
    listed = subprocess.run(
        [
            "git",
            "ls-files",
            "-co",
            "--exclude-standard",
            "--",
            "pyproject.toml",
            "README.md",
            "LICENSE",
            "server",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for name in listed:
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed (its dependencies from the package index)."""
    where = tmp_path_factory.mktemp("venv") / "v"
    venv.create(where, with_pip=True, system_site_packages=False)
    (wheel,) = dist.glob("*.whl")
    pip = subprocess.run(
        [str(where / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
    )
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    return where


def test_build_makes_a_wheel_and_an_sdist_with_what_the_package_needs(dist: Path) -> None:
    assert sorted(p.name for p in dist.iterdir()) == [
        f"jaxtarget-{VERSION}-py3-none-any.whl",
        f"jaxtarget-{VERSION}.tar.gz",
    ]
    with zipfile.ZipFile(dist / f"jaxtarget-{VERSION}-py3-none-any.whl") as whl:
        names = set(whl.namelist())
        entry_points = whl.read(f"jaxtarget-{VERSION}.dist-info/entry_points.txt").decode()
    # the probe's child script is read from the package at run time; py.typed marks the types
    assert {
        "jaxtarget/cli.py",
        "jaxtarget/probe_child.py",
        "jaxtarget/py.typed",
        "jaxtarget/lsp/server.py",
        "jaxtarget/pyproject.schema.json",
    } <= names
    assert not any(n.startswith(("tests/", "client/", "server/")) for n in names)
    assert "jaxtarget = jaxtarget.cli:main" in entry_points
    with tarfile.open(dist / f"jaxtarget-{VERSION}.tar.gz") as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert {
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "server/jaxtarget/cli.py",
        "server/jaxtarget/pyproject.schema.json",
    } <= members
    assert not any(m.startswith("tests/") for m in members)


def test_the_installed_wheel_is_not_the_checkout(installed: Path) -> None:
    out = subprocess.run(
        [str(installed / "bin" / "python"), "-c", "import jaxtarget; print(jaxtarget.__file__)"],
        capture_output=True,
        text=True,
        cwd=installed,
        env=_env(),
        check=True,
    )
    location = Path(out.stdout.strip()).resolve()
    assert installed.resolve() in location.parents and ROOT not in location.parents
    pth = "".join(p.read_text() for p in installed.glob("lib/python*/site-packages/*.pth"))
    assert str(ROOT) not in pth  # no editable-install path file pointing back here


def test_check_runs_from_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SEND)
    exe = str(installed / "bin" / "jaxtarget")
    # the wheel's venv has no jax: names are resolved from the imports, and a note says so
    alone = subprocess.run(
        [exe, "check", "m.py", "--target", "cpu"], cwd=tmp_path, capture_output=True, text=True, env=_env()
    )
    assert alone.returncode == 1, alone.stderr
    assert alone.stdout.startswith("m.py:2:9: JT001 `lax.psend` only lowers on GPU")
    assert "jax is not installed" in alone.stderr
    # with an interpreter that has jax, jedi resolves against it
    exact = subprocess.run(
        [exe, "check", "m.py", "--target", "cpu", "--python", sys.executable, "--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert exact.returncode == 1 and exact.stderr == ""
    assert [i["code"] for i in json.loads(exact.stdout)] == ["JT001", "JT002"]
    fixed = subprocess.run(
        [exe, "check", "m.py", "--target", "cpu", "--fix"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert "has_gpu_backend()" in (tmp_path / "m.py").read_text(), fixed.stdout + fixed.stderr


def _send(stdin: BinaryIO, message: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    stdin.flush()


def _receive(stdout: BinaryIO) -> dict[str, Any]:
    length = 0
    while True:
        line = stdout.readline()
        assert line, "the server closed its output"
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    message: dict[str, Any] = json.loads(stdout.read(length))
    return message


def test_lsp_from_the_installed_wheel_initializes_publishes_and_shuts_down(
    installed: Path, tmp_path: Path
) -> None:
    doc = tmp_path / "m.py"
    doc.write_text(SEND)
    proc = subprocess.Popen(
        [str(installed / "bin" / "jaxtarget"), "lsp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    watchdog = threading.Timer(120, proc.kill)  # a silent server ends the reads, not the test run
    watchdog.start()
    try:
        _send(
            proc.stdin,
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": os.getpid(),
                    "rootUri": tmp_path.as_uri(),
                    "capabilities": {},
                    "initializationOptions": {"targetBackends": ["cpu"]},
                },
            },
        )
        reply = _receive(proc.stdout)
        while reply.get("id") != 1:
            reply = _receive(proc.stdout)
        assert reply["result"]["serverInfo"]["name"] == "jaxtarget"
        assert reply["result"]["capabilities"]["hoverProvider"]
        _send(proc.stdin, {"method": "initialized", "params": {}})
        item = {"uri": doc.as_uri(), "languageId": "python", "version": 1, "text": SEND}
        _send(proc.stdin, {"method": "textDocument/didOpen", "params": {"textDocument": item}})
        codes: list[str] = []
        while not codes:
            message = _receive(proc.stdout)
            if "id" in message and "method" in message:  # a request from the server: answer it
                items = message.get("params", {}).get("items", [])
                result = [None] * len(items) if message["method"] == "workspace/configuration" else None
                _send(proc.stdin, {"id": message["id"], "result": result})
            elif message.get("method") == "textDocument/publishDiagnostics":
                codes = [d["code"] for d in message["params"]["diagnostics"]]
        assert codes[0] == "JT001"
        _send(proc.stdin, {"id": 2, "method": "shutdown"})
        reply = _receive(proc.stdout)
        while reply.get("id") != 2:
            reply = _receive(proc.stdout)
        assert reply["result"] is None
        _send(proc.stdin, {"method": "exit"})
        assert proc.wait(timeout=30) == 0
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_pipx_runs_check_from_the_wheel(dist: Path, installed: Path, tmp_path: Path) -> None:
    """`pipx run --spec <wheel> jaxtarget check .` (pipx from the package index, in the wheel's venv)."""
    python = str(installed / "bin" / "python")
    pip = subprocess.run(
        [python, "-m", "pip", "install", "-q", "pipx"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
    )
    assert pip.returncode == 0, pip.stderr[-3000:]
    (wheel,) = dist.glob("*.whl")
    work = tmp_path / "work"
    work.mkdir()
    (work / "m.py").write_text(SEND)
    env = {**_env(), "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "bin")}
    out = subprocess.run(
        [python, "-m", "pipx", "run", "--spec", str(wheel), "jaxtarget", "check", ".", "--target", "cpu"],
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert out.stdout.startswith("m.py:2:9: JT001 `lax.psend` only lowers on GPU")
