"""`jaxtarget check` on Jupyter notebooks written with nbformat: cells, magics, --fix, --diff."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from jaxtarget.notebook import Cell, concatenate

from .conftest import run_cli

#: cell 1 is markdown; names bound in cell 2 are used in cells 4 and 5; every kind of
#: IPython syntax sits between them, and a %%-magic cell (not Python) holds a psend too
CELLS = [
    ("markdown", "# Pipeline\n\nUses `lax.psend`."),
    ("code", "%matplotlib inline\nimport jax\nfrom jax import lax\n!pip install jax"),
    ("code", "%%bash\necho lax.psend(x)"),
    (
        "code",
        "def exchange(x):\n    %time y = 1\n    files = !ls\n    token = lax.psend(x, 'i', perm=[(0, 1)])\n    return token",
    ),
    ("code", "lax.psend?\nw, _ = jax.numpy.linalg.eig(x)"),
]


def _write(path: Path, cells: list[tuple[str, str]] = CELLS) -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    for i, (kind, text) in enumerate(cells):
        if kind == "markdown":
            nb.cells.append(new_markdown_cell(text))
        else:
            out = new_output("stream", name="stdout", text=f"output of cell {i + 1}\n")
            nb.cells.append(
                new_code_cell(text, outputs=[out], execution_count=i, metadata={"tags": [f"t{i}"]})
            )
    nbformat.write(nb, path)
    return nb


def test_findings_are_reported_per_cell_with_names_resolved_across_cells(tmp_path: Path) -> None:
    _write(tmp_path / "nb.ipynb")
    out = run_cli("check", "nb.ipynb", "--target", "cpu,tpu", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("nb.ipynb:cell 4:4:17: JT001 `lax.psend` only lowers on GPU"), lines
    assert lines[1].startswith("nb.ipynb:cell 4:4:17: JT002 "), lines
    assert lines[2].startswith("nb.ipynb:cell 5:2:25: JT003 `jnp.linalg.eig`"), lines
    assert lines[3:] == ["Found 3 findings."]  # nothing from the %%bash cell, no syntax error


def test_json_has_the_cell_and_rows_within_it(tmp_path: Path) -> None:
    _write(tmp_path / "nb.ipynb")
    out = run_cli("check", "nb.ipynb", "--target", "cpu,tpu", "--format", "json", cwd=tmp_path)
    items = json.loads(out.stdout)
    where = [(i["code"], i["cell"], i["location"]["row"], i["location"]["column"]) for i in items]
    assert where == [("JT001", 4, 4, 17), ("JT002", 4, 4, 17), ("JT003", 5, 2, 25)]
    eig_fix = items[2]["fix"]
    assert eig_fix["applicability"] == "safe"
    assert [e["location"]["row"] for e in eig_fix["edits"]] == [2]  # in cell 5's rows


def test_github_and_sarif_output_name_the_cell(tmp_path: Path) -> None:
    _write(tmp_path / "nb.ipynb")
    github = run_cli("check", "nb.ipynb", "--target", "cpu,tpu", "--format", "github", cwd=tmp_path)
    first = github.stdout.splitlines()[0]
    assert first.startswith("::error title=jaxtarget (JT001),file=nb.ipynb,line=4,col=17,"), first
    assert "::cell 4: JT001 `lax.psend`" in first
    sarif = run_cli("check", "nb.ipynb", "--target", "cpu,tpu", "--format", "sarif", cwd=tmp_path)
    results = json.loads(sarif.stdout)["runs"][0]["results"]
    assert [(r["ruleId"], r["properties"]["cell"]) for r in results] == [
        ("JT001", 4),
        ("JT002", 4),
        ("JT003", 5),
    ]
    assert results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 4


def test_fix_rewrites_only_the_changed_cells_keeping_outputs_metadata_and_magics(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    before = _write(path)
    out = run_cli("check", "nb.ipynb", "--target", "cpu,tpu", "--fix", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    # the guard fixes JT001 and the JT002 of the same call (no target reaches it any more)
    assert out.stdout.splitlines()[-1] == "Found 3 findings (3 fixed, 0 remaining)."
    after = nbformat.read(path, as_version=4)
    nbformat.validate(after)
    assert after.metadata == before.metadata
    assert len(after.cells) == len(before.cells)
    for old, new in zip(before.cells, after.cells, strict=True):
        assert new.metadata == old.metadata and new.get("outputs") == old.get("outputs")
        assert new.get("execution_count") == old.get("execution_count")
    sources = [c.source for c in after.cells]
    assert sources[0] == before.cells[0].source and sources[2] == before.cells[2].source
    # the helper the guard needs opens the first code cell; the magics stay where they were
    assert sources[1].startswith("def has_gpu_backend() -> bool:\n")
    assert sources[1].endswith("\n%matplotlib inline\nimport jax\nfrom jax import lax\n!pip install jax")
    assert sources[3] == (
        "def exchange(x):\n    %time y = 1\n    files = !ls\n    if has_gpu_backend():\n"
        "        token = lax.psend(x, 'i', perm=[(0, 1)])\n    else:\n"
        '        raise NotImplementedError("lax.psend requires a GPU backend (cuda or rocm)")\n'
        "    return token"
    )
    assert sources[4].startswith("lax.psend?\nif jax.default_backend() in (")
    written = path.read_bytes()
    again = run_cli("check", "nb.ipynb", "--target", "cpu,tpu", "--fix", cwd=tmp_path)
    assert again.stdout.splitlines()[-1] == "All checks passed!", again.stdout
    assert path.read_bytes() == written  # idempotent


def test_a_fixed_notebook_differs_from_the_original_only_in_the_changed_cells_sources(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    _write(path)
    original = json.loads(path.read_text())
    run_cli("check", "nb.ipynb", "--target", "cpu,tpu", "--fix", cwd=tmp_path)
    fixed = json.loads(path.read_text())
    for i in (1, 3, 4):
        fixed["cells"][i]["source"] = original["cells"][i]["source"]
    assert fixed == original
    # laid out as nbformat wrote it (one-space indent, final newline): no churn elsewhere
    assert path.read_text() == json.dumps(json.loads(path.read_text()), indent=1, ensure_ascii=False) + "\n"


def test_diff_prints_per_cell_diffs_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    _write(path)
    data = path.read_bytes()
    out = run_cli("check", "nb.ipynb", "--target", "cpu,tpu", "--diff", cwd=tmp_path)
    assert out.returncode == 1
    assert path.read_bytes() == data
    headers = [line for line in out.stdout.splitlines() if line.startswith(("--- ", "+++ "))]
    assert headers == [
        "--- a/nb.ipynb:cell 2",
        "+++ b/nb.ipynb:cell 2",
        "--- a/nb.ipynb:cell 4",
        "+++ b/nb.ipynb:cell 4",
        "--- a/nb.ipynb:cell 5",
        "+++ b/nb.ipynb:cell 5",
    ]
    assert "+    if has_gpu_backend():" in out.stdout
    assert "Would fix 3 findings." in out.stderr


def test_a_syntax_error_is_reported_in_its_cell_and_a_folder_walk_finds_notebooks(tmp_path: Path) -> None:
    _write(tmp_path / "nb.ipynb", [("code", "import jax"), ("markdown", "x"), ("code", "x = 1\ndef f(:\n")])
    checkpoints = tmp_path / ".ipynb_checkpoints"
    checkpoints.mkdir()
    _write(checkpoints / "nb-checkpoint.ipynb")
    (tmp_path / "broken.ipynb").write_text("{not json")
    out = run_cli("check", ".", "--target", "cpu,tpu", cwd=tmp_path)
    lines = out.stdout.splitlines()
    assert lines[0].startswith("broken.ipynb:1:1: file error: notebook is not valid JSON"), lines
    assert lines[1].startswith("nb.ipynb:cell 3:2:"), lines
    assert "SyntaxError" in lines[1] or "invalid syntax" in lines[1], lines
    assert not any("checkpoint" in line for line in lines)


@pytest.mark.parametrize(
    ("line", "python"),
    [
        ("%matplotlib inline", False),
        ("  !ls -la", False),
        ("files = !ls", False),
        ("a, b = %sx echo 1", False),
        ("jax.numpy?", False),
        ("jax.numpy??", False),
        ("x = 5 % 3", True),
        ("print('!')", True),
        ("d = {'a': 1}  # what?", True),
        ("x != y", True),
    ],
)
def test_ipython_lines_become_placeholders_and_python_lines_stay(line: str, python: bool) -> None:
    cells = concatenate([Cell("0", 1, f"if True:\n{line}\n" if line.startswith(" ") else line)])
    body = cells.source.splitlines()[1:]
    assert (line in body) == python
    assert cells.split(cells.source) == {"0": cells.cells[0].text}  # restored as written


def test_a_fix_spanning_cells_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "pair.ipynb"
    imports = "import jax\nfrom jax import lax"
    _write(
        path,
        [
            ("code", imports),
            ("code", "t = lax.psend(x, 'i', [(0, 1)])"),
            ("code", "y = lax.precv(t, x, 'i', [(0, 1)])"),
        ],
    )
    data = path.read_bytes()
    # the ppermute fallback replaces the psend ... precv stretch: here it spans two cells
    out = run_cli("check", "pair.ipynb", "--target", "cpu", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert out.returncode == 1
    assert "pair.ipynb:1:1: fixes not applied: a fix crossed a cell boundary" in out.stdout
    assert path.read_bytes() == data
