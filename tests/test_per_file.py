"""`[tool.jaxtarget.per-file-targets]` and `[tool.jaxtarget.per-file-ignores]`, through the CLI and
the language server: the same files get the same findings from both; nested pyproject.toml files
apply to their own subtree (nearest wins)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from jaxtarget.perfile import matches

from .conftest import run_cli
from .lsp_helpers import SERVER, open_doc, pull, start

SEND = "from functools import partial\nimport jax\nfrom jax import lax\n\n\n@partial(jax.shard_map, mesh=m, in_specs=None, out_specs=None)\ndef f(x):\n    return lax.psend(x, 'i', [(0, 1)])\n"
EIG = "import jax.numpy as jnp\n\nw = jnp.linalg.eig(a)\n"

ROOT_PYPROJECT = """\
[tool.jaxtarget]
targets = ["cpu"]

[tool.jaxtarget.per-file-targets]
"gpu/**" = ["cuda"]
"tests/tpu/**" = ["tpu"]
"*_tpu.py" = ["tpu"]
"tests/**" = ["cuda"]  # after tests/tpu/**: the first match wins

[tool.jaxtarget.per-file-ignores]
"legacy/*.py" = ["JT001"]
"**/notebooks/**" = ["JT"]
"""

#: (file, source) -> the (file, code) findings expected for it
FILES: dict[str, tuple[str, list[str]]] = {
    "src/model.py": (SEND, ["JT001"]),  # the project's targets: cpu
    "src/eig.py": (EIG, []),  # eig lowers on cpu
    "gpu/kernels/k.py": (SEND, []),  # cuda lowers psend
    "tests/tpu/test_eig.py": (EIG, ["JT003"]),  # tpu does not lower eig
    "tests/test_send.py": (SEND, []),  # tests/** = cuda
    "src/solver_tpu.py": (EIG, ["JT003"]),  # a glob without / matches the name anywhere
    "legacy/old.py": (SEND, []),  # JT001 ignored there
    "legacy/deeper/old.py": (SEND, ["JT001"]),  # legacy/*.py does not cross folders
    "src/notebooks/nb.py": (SEND, []),  # every JT code ignored
    # a nested pyproject.toml with its own table: its own targets and tables, not the root's
    "sub/legacy/old.py": (SEND, ["JT001"]),
    "sub/gpu/k.py": (SEND, ["JT001"]),
    "sub/rocm/r.py": (EIG, []),
    "sub/eig.py": (EIG, ["JT003"]),
}
SUB_PYPROJECT = (
    '[tool.jaxtarget]\ntargets = ["tpu"]\n\n[tool.jaxtarget.per-file-targets]\n"rocm/**" = ["rocm"]\n'
)


@pytest.fixture
def monorepo(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(ROOT_PYPROJECT)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text(SUB_PYPROJECT)
    for name, (source, _) in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(source)
    return tmp_path


def _expected() -> set[tuple[str, str]]:
    return {(name, code) for name, (_, codes) in FILES.items() for code in codes}


def test_cli_applies_per_file_targets_and_ignores_with_the_nearest_pyproject(monorepo: Path) -> None:
    out = run_cli("check", ".", "--format", "json", cwd=monorepo)
    assert out.returncode == 1, out.stderr
    found = {
        (Path(i["filename"]).relative_to(monorepo).as_posix(), i["code"]) for i in json.loads(out.stdout)
    }
    assert found == _expected()


def test_cli_fix_guards_for_the_per_file_targets(monorepo: Path) -> None:
    out = run_cli("check", "tests/tpu/test_eig.py", "src/eig.py", "--fix", cwd=monorepo)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "jax.default_backend() in (" in (monorepo / "tests/tpu/test_eig.py").read_text()
    assert (monorepo / "src/eig.py").read_text() == EIG  # cpu lowers eig: nothing to fix


def test_a_bad_per_file_value_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxtarget.per-file-targets]\n"gpu/**" = ["metal"]\n')
    (tmp_path / "m.py").write_text(EIG)
    out = run_cli("check", ".", cwd=tmp_path)
    assert out.returncode == 2
    assert "per-file-targets.\"gpu/**\": unknown backend 'metal'" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    (tmp_path / "pyproject.toml").write_text('[tool.jaxtarget.per-file-ignores]\n"*.py" = ["XX9"]\n')
    out = run_cli("check", ".", cwd=tmp_path)
    assert out.returncode == 2 and "per-file-ignores.\"*.py\": unknown rule code 'XX9'" in out.stderr


@pytest.mark.parametrize(
    ("glob", "path", "covered"),
    [
        ("gpu/**", "gpu/a/b.py", True),
        ("gpu/**", "src/gpu/b.py", False),
        ("gpu", "src/gpu/b.py", True),  # no slash: a name in any folder
        ("*_tpu.py", "a/b/x_tpu.py", True),
        ("tests/*.py", "tests/x/a.py", False),
        ("tests/*", "tests/x/a.py", True),  # covers the folder tests/x
        ("**/kernels/*.py", "kernels/k.py", True),
        ("./src/[ab].py", "src/a.py", True),
        ("src/[!ab].py", "src/a.py", False),
    ],
)
def test_glob_coverage(glob: str, path: str, covered: bool) -> None:
    assert matches(glob, path) is covered


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, monorepo: Path):
    await start(lsp_client, monorepo, "vscode-pull")
    yield
    await lsp_client.shutdown_session()


async def test_the_server_gives_the_same_findings_as_the_cli(client: LanguageClient, monorepo: Path) -> None:
    found: set[tuple[str, str]] = set()
    for name, (source, _) in FILES.items():
        uri = (monorepo / name).as_uri()
        open_doc(client, uri, source)
        found |= {(name, str(d.code)) for d in await pull(client, uri)}
    assert found == _expected()


def test_the_readme_configuration_example_parses_without_problems() -> None:
    import re

    import tomllib

    from jaxtarget.config import Layer, parse_pyproject_table, resolve
    from jaxtarget.perfile import for_file

    from .conftest import ROOT

    (block,) = [
        b for b in re.findall(r"```toml\n(.*?)```", (ROOT / "README.md").read_text(), re.S) if "per-file" in b
    ]
    layer, problems = parse_pyproject_table(tomllib.loads(block)["tool"]["jaxtarget"], "README")
    assert problems == []
    project = Path("/project")
    gpu = resolve(Layer(**for_file(layer.values, project / "gpu" / "k.py", project)))
    assert gpu.target_backends == ("cuda",) and gpu.ignore == ("JT002",)
    legacy = resolve(Layer(**for_file(layer.values, project / "legacy" / "old.py", project)))
    assert legacy.target_backends == ("cpu", "gpu") and legacy.ignore == ("JT002", "JT003")
