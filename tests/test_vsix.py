"""What jaxtarget.vsix ships: the server's libraries without what it never reads, and the
pyproject schema the extension contributes to Even Better TOML; the bundle still resolves
JAX names through jedi."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from jaxtarget import schema

from .code_server import VSIX
from .conftest import ROOT

pytestmark = [
    pytest.mark.editor,
    pytest.mark.skipif(not VSIX.exists() and not os.environ.get("CI"), reason="run npm run package first"),
]

LIBS = "extension/bundled/libs/"


@pytest.fixture(scope="module")
def names() -> set[str]:
    with zipfile.ZipFile(VSIX) as vsix:
        return set(vsix.namelist())


def test_the_vsix_leaves_out_third_party_stubs_and_install_records(names: set[str]) -> None:
    assert not [n for n in names if n.startswith(LIBS + "jedi/third_party/django-stubs/")]
    assert not [n for n in names if n.startswith(LIBS + "jedi/third_party/typeshed/stubs/")]
    records = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}
    assert not [n for n in names if ".dist-info/" in n and n.rsplit("/", 1)[1] in records]
    assert not [n for n in names if n.startswith(LIBS + "bin/") or "__pycache__" in n]
    # what jedi and the server do read is there
    assert LIBS + "jedi/third_party/typeshed/stdlib/builtins.pyi" in names
    assert LIBS + "pygls-2.1.1.dist-info/METADATA" in names or any(
        n.startswith(LIBS + "pygls-") and n.endswith(".dist-info/METADATA") for n in names
    )
    assert LIBS + "jaxtarget/lsp/server.py" in names


def test_the_contributed_pyproject_schema_is_in_the_vsix_and_is_the_packages(names: set[str]) -> None:
    manifest = json.loads((ROOT / "package.json").read_text())
    (contribution,) = manifest["contributes"]["tomlValidation"]
    assert contribution["fileMatch"] == "pyproject.toml"
    inside = "extension/" + contribution["url"].removeprefix("./")
    assert inside in names
    with zipfile.ZipFile(VSIX) as vsix:
        assert vsix.read(inside).decode() == schema.render()


def test_the_bundled_libraries_resolve_jax_names_through_jedi(tmp_path: Path) -> None:
    with zipfile.ZipFile(VSIX) as vsix:
        vsix.extractall(tmp_path / "vsix")
    libs = tmp_path / "vsix" / LIBS
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "step.py").write_text(
        "import jax.lax as L\n\n\ndef f(x):\n    return L.psend(x, 'i', [(0, 1)])\n"
    )
    # as the extension runs it: the bundle first on the path, the user's interpreter for jax
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(libs), "PYTHONNOUSERSITE": "1"}
    out = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(libs)!r}); import jaxtarget; "
         f"assert jaxtarget.__file__.startswith({str(libs)!r}); from jaxtarget.cli import main; sys.exit(main())",
         "check", "step.py", "--target", "cpu", "--python", sys.executable],
        cwd=tmp_path / "work", capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert out.returncode == 1, out.stderr
    assert out.stdout.startswith("step.py:5:14: JT001 `lax.psend` only lowers on GPU"), out.stdout
    assert "imports only" not in out.stdout + out.stderr  # resolved by jedi, not guessed
