"""A Jupyter notebook in VS Code itself (code-server in headless Chromium, the packaged .vsix):
VS Code's own ipynb support opens it in the notebook editor, and the Python cells get their
squiggles, hover and quick fixes."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import nbformat

from .code_server import MARKS, run_e2e
from .conftest import ROOT

pytestmark = MARKS

#: the cell that calls psend (index 2: the markdown cell counts), and its line there
CELL, LINE = 2, 4


def _notebook(path: Path) -> None:
    python = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": python, "language_info": {"name": "python"}})
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Hand-off between two devices"),
        nbformat.v4.new_code_cell("%matplotlib inline\nimport jax\nfrom jax import lax"),
        # names from the cell above; the IPython lines keep their rows
        nbformat.v4.new_code_cell(
            '!nvidia-smi\nx = jax.numpy.ones(4)\n\ntoken = lax.psend(x, "i", [(0, 1)])'
        ),
    ]
    nbformat.write(nb, path)


def test_vscode_notebook_cells_get_diagnostics_hover_and_quick_fix(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    _notebook(folder / "pipeline.ipynb")
    artifacts = ROOT / "artifacts" / "vscode-notebook"
    shutil.rmtree(artifacts, ignore_errors=True)
    result = run_e2e(
        "vscode-notebook-e2e.mjs",
        str(folder),
        str(artifacts),
        sys.executable,
        "pipeline.ipynb",
        str(CELL),
        str(LINE),
    )
    assert result["error"] is None, result
    steps = result["steps"]
    assert steps["install"]["ok"]
    # the squiggle is on lax.psend in the third cell, and Problems names its line in that cell
    assert steps["diagnostic"]["ok"], steps["diagnostic"]
    assert steps["diagnostic"]["at"]["cell"] == CELL
    assert steps["hover"]["ok"], steps["hover"]
    assert "Backend support" in steps["hover"]["text"]
    # the guard goes into the cell, and JT001 leaves Problems
    assert steps["quickfix"]["ok"], steps["quickfix"]
    for name in ("01-diagnostic.png", "02-hover.png", "03-quickfix.png", "04-fixed.png"):
        assert (artifacts / name).stat().st_size > 10_000
