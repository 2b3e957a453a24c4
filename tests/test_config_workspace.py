"""Which pyproject.toml applies: the editor's search ends at the workspace folder, the CLI's does not.

A ``pyproject.toml`` without ``[tool.jaxtarget]`` in the workspace folder ends the
editor's search there (what is above the folder is not the workspace's); the command
line has no workspace folder and goes on up to the nearest table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import run_cli
from .lsp_helpers import SERVER, start

ABOVE = '[tool.jaxtarget]\ntargets = ["tpu"]\n'


@pytest.fixture(params=["a pyproject.toml without the table", "no pyproject.toml"])
def nested(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A workspace folder ``ws`` (with or without a pyproject.toml) below a folder with the table."""
    (tmp_path / "pyproject.toml").write_text(ABOVE)
    (tmp_path / "ws" / "pkg").mkdir(parents=True)
    if request.param == "a pyproject.toml without the table":
        (tmp_path / "ws" / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (tmp_path / "ws" / "pkg" / "a.py").write_text("x = 1\n")
    return tmp_path


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, nested: Path):
    await start(lsp_client, nested / "ws", "vscode-pull")
    yield
    await lsp_client.shutdown_session()


async def test_the_editor_stops_at_the_workspace_folder(client: LanguageClient, nested: Path) -> None:
    config = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="jaxtarget.showConfiguration")
    )
    (folder,) = config.values()
    assert folder["pyproject"] is None
    assert folder["targetBackends"] == ["auto"]
    (targets,) = [row for row in folder["sources"] if row["key"] == "targets"]
    assert (targets["value"], targets["source"]) == (["auto"], "default")


def test_the_cli_goes_on_up_to_the_table_above(nested: Path) -> None:
    out = run_cli("config", "pkg/a.py", "--format", "json", cwd=nested / "ws")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["pyproject"] == str(nested / "pyproject.toml")
    assert result["settings"]["targets"] == {
        "value": ["tpu"],
        "source": str(nested / "pyproject.toml"),
        "flag": "--target",
    }
