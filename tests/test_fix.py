"""`jaxtarget check --fix / --unsafe-fixes / --diff / --show-fixes`, as a subprocess on real files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT, run_cli

PAIR = """\
from functools import partial

import jax
from jax import lax
from jax.sharding import PartitionSpec as P


@partial(jax.shard_map, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
def exchange(x, perm):
    token = lax.psend(x, "i", perm)
    return lax.precv(token, jax.ShapeDtypeStruct(x.shape, x.dtype), "i", perm)
"""

EIG = """\
import jax.numpy as jnp


def features(a):
    w, _ = jnp.linalg.eig(a)
    return w.real
"""

#: psend outside shard_map with a GPU target: only JT002, whose only fix is suppression
UNSHARDED = """\
from jax import lax


def step(x, perm):
    return lax.psend(x, "i", perm)
"""


def _codes(out: subprocess.CompletedProcess[str]) -> list[str]:
    return sorted(item["code"] for item in json.loads(out.stdout))


def test_fix_applies_the_safe_guard_and_a_recheck_shows_the_findings_gone(tmp_path: Path) -> None:
    (tmp_path / "pair.py").write_text(PAIR)
    before = run_cli("check", "pair.py", "--target", "cpu", "--format", "json", cwd=tmp_path)
    assert _codes(before) == ["JT001", "JT001"]
    out = run_cli("check", "pair.py", "--target", "cpu", "--fix", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines()[-1] == "Found 2 findings (2 fixed, 0 remaining)."
    text = (tmp_path / "pair.py").read_text()
    assert "    if has_gpu_backend():\n        token = lax.psend(x, " in text
    assert 'raise NotImplementedError("lax.psend requires a GPU backend (cuda or rocm)")' in text
    assert "ppermute" not in text  # the fallback is unsafe: not without --unsafe-fixes
    again = run_cli("check", "pair.py", "--target", "cpu", "--format", "json", cwd=tmp_path)
    assert again.returncode == 0 and _codes(again) == []


def test_unsafe_fixes_apply_the_ppermute_fallback(tmp_path: Path) -> None:
    (tmp_path / "pair.py").write_text(PAIR)
    out = run_cli("check", "pair.py", "--target", "cpu", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    text = (tmp_path / "pair.py").read_text()
    assert '    else:\n        return lax.ppermute(x, "i", perm)\n' in text
    assert "NotImplementedError" not in text
    assert run_cli("check", "pair.py", "--target", "cpu", cwd=tmp_path).returncode == 0


def test_unsafe_fixes_without_fix_change_nothing(tmp_path: Path) -> None:
    (tmp_path / "pair.py").write_text(PAIR)
    out = run_cli("check", "pair.py", "--target", "cpu", "--unsafe-fixes", cwd=tmp_path)
    assert out.returncode == 1
    assert (tmp_path / "pair.py").read_text() == PAIR


def test_suppression_is_never_applied_by_fix(tmp_path: Path) -> None:
    (tmp_path / "step.py").write_text(UNSHARDED)
    before = run_cli("check", "step.py", "--target", "cuda", "--format", "json", cwd=tmp_path)
    assert _codes(before) == ["JT002"]
    out = run_cli("check", "step.py", "--target", "cuda", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert out.returncode == 1
    assert "step.py:5:16: JT002" in out.stdout
    assert (tmp_path / "step.py").read_text() == UNSHARDED


def test_diff_prints_the_fix_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "eig.py").write_text(EIG)
    out = run_cli("check", "eig.py", "--target", "tpu", "--diff", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert out.stdout.startswith("--- a/eig.py\n+++ b/eig.py\n@@ ")
    assert "+    if jax.default_backend() in (" in out.stdout
    assert "Would fix 1 finding." in out.stderr
    assert (tmp_path / "eig.py").read_text() == EIG
    # the diff is exactly what --fix writes: applied with patch, it gives the same file
    (tmp_path / "eig.diff").write_text(out.stdout)
    fixed = tmp_path / "fixed"
    fixed.mkdir()
    (fixed / "eig.py").write_text(EIG)
    subprocess.run(["patch", "-s", "-p1", "-i", str(tmp_path / "eig.diff")], cwd=fixed, check=True)
    assert run_cli("check", "eig.py", "--target", "tpu", "--fix", cwd=tmp_path).returncode == 0
    assert (fixed / "eig.py").read_text() == (tmp_path / "eig.py").read_text() != EIG
    # nothing left to change: no diff, exit 0
    clean = run_cli("check", "eig.py", "--target", "tpu", "--diff", cwd=tmp_path)
    assert clean.returncode == 0 and clean.stdout == ""


def test_show_fixes_lists_what_was_fixed_per_file_and_code(tmp_path: Path) -> None:
    (tmp_path / "pair.py").write_text(PAIR)
    (tmp_path / "eig.py").write_text(EIG)
    out = run_cli("check", ".", "--target", "cpu,tpu", "--fix", "--show-fixes", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout == (
        "\nFixed 3 findings:\n"
        "- eig.py:\n    1 × JT003 (backend-limited-api)\n"
        "- pair.py:\n    2 × JT001 (gpu-only-collective)\n"
        "\nFound 3 findings (3 fixed, 0 remaining).\n"
    )


def test_show_fixes_counts_only_what_the_fixes_settled(tmp_path: Path) -> None:
    (tmp_path / "eig.py").write_text(EIG)
    second = UNSHARDED.replace("def step", "def step2").replace('"i"', '"j"')
    (tmp_path / "step.py").write_text(UNSHARDED + "\n\n" + second.split("\n\n\n", 1)[1])
    out = run_cli("check", ".", "--target", "cuda,tpu", "--fix", "--show-fixes", cwd=tmp_path)
    assert out.returncode == 1
    # the guards settle JT001 (tpu); both JT002 on cuda stay, and are not counted as fixed
    assert out.stdout.endswith(
        "\nFixed 3 findings:\n"
        "- eig.py:\n    1 × JT003 (backend-limited-api)\n"
        "- step.py:\n    2 × JT001 (gpu-only-collective)\n"
        "\nFound 5 findings (3 fixed, 2 remaining).\n"
    ), out.stdout
    assert [line.split(": ")[0:2] for line in out.stdout.splitlines()[:2]] == [
        ["step.py:12:20", "JT002 `lax.psend` needs manual sharding"],
        ["step.py:19:20", "JT002 `lax.psend` needs manual sharding"],
    ], out.stdout


def test_fix_reports_what_remains_and_exits_1(tmp_path: Path) -> None:
    (tmp_path / "eig.py").write_text(EIG)
    (tmp_path / "step.py").write_text(UNSHARDED)
    out = run_cli("check", ".", "--target", "cuda,tpu", "--fix", "--format", "json", cwd=tmp_path)
    assert out.returncode == 1
    # the guard settles eig (tpu) and psend (tpu); psend still runs unsharded on cuda
    remaining = json.loads(out.stdout)
    assert {(Path(i["filename"]).name, i["code"]) for i in remaining} == {("step.py", "JT002")}


def test_json_fix_is_the_one_fix_would_apply(tmp_path: Path) -> None:
    (tmp_path / "pair.py").write_text(PAIR)
    safe = json.loads(run_cli("check", "pair.py", "--target", "cpu", "--format", "json", cwd=tmp_path).stdout)
    assert {i["fix"]["applicability"] for i in safe} == {"safe"}
    assert all("raise NotImplementedError" in i["fix"]["edits"][0]["content"] for i in safe)
    unsafe = json.loads(
        run_cli(
            "check", "pair.py", "--target", "cpu", "--format", "json", "--unsafe-fixes", cwd=tmp_path
        ).stdout
    )
    assert {i["fix"]["applicability"] for i in unsafe} == {"unsafe"}
    assert all("lax.ppermute" in i["fix"]["edits"][0]["content"] for i in unsafe)


def test_fix_keeps_crlf_tabs_and_the_declared_encoding(tmp_path: Path) -> None:
    crlf = "import jax.numpy as jnp\r\n\r\n\r\ndef f(a):\r\n\tw, _ = jnp.linalg.eig(a)  # é\r\n\treturn w\r\n"
    (tmp_path / "crlf.py").write_bytes(crlf.encode())
    latin = "# -*- coding: latin-1 -*-\nimport jax.numpy as jnp\n\nA = 'café'\nw = jnp.linalg.eig(a)\n"
    (tmp_path / "latin.py").write_bytes(latin.encode("latin-1"))
    bom = "import jax.numpy as jnp\n\n\ndef g(a):\n  return jnp.linalg.eig(a)\n"
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + bom.encode())
    out = run_cli("check", ".", "--target", "tpu", "--fix", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines()[-1] == "Found 3 findings (3 fixed, 0 remaining)."

    data = (tmp_path / "crlf.py").read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") > crlf.count("\n")
    assert (
        b"\tif jax.default_backend() in (" in data and b"\t\tw, _ = jnp.linalg.eig(a)  # \xc3\xa9\r\n" in data
    )
    assert b"\telse:\r\n\t\traise NotImplementedError(" in data

    data = (tmp_path / "latin.py").read_bytes()
    assert b"A = 'caf\xe9'" in data  # still latin-1, not re-encoded as UTF-8
    assert "w = jnp.linalg.eig(a)" in data.decode("latin-1")
    assert "\n    w = jnp.linalg.eig(a)\n" in data.decode("latin-1")

    data = (tmp_path / "bom.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbfimport jax.numpy as jnp\n") and data.count(b"\xef\xbb\xbf") == 1
    assert b"\n  if jax.default_backend() in (" in data and b"\n    return jnp.linalg.eig(a)\n" in data
    for name in ("crlf.py", "latin.py", "bom.py"):
        compile((tmp_path / name).read_bytes(), name, "exec", dont_inherit=True)
    recheck = run_cli("check", ".", "--target", "tpu", cwd=tmp_path)
    assert recheck.returncode == 0 and recheck.stdout == "All checks passed!\n"


def test_fix_is_idempotent_on_the_examples(tmp_path: Path) -> None:
    for src in (ROOT / "examples").glob("*.py"):
        (tmp_path / src.name).write_bytes(src.read_bytes())
    first = run_cli("check", ".", "--target", "cpu,tpu", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    after = {p.name: p.read_bytes() for p in tmp_path.glob("*.py")}
    assert after["pipeline.py"] != (ROOT / "examples" / "pipeline.py").read_bytes()
    second = run_cli("check", ".", "--target", "cpu,tpu", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert second.returncode == 0 and second.stdout == "All checks passed!\n"
    assert {p.name: p.read_bytes() for p in tmp_path.glob("*.py")} == after


def test_a_file_with_a_syntax_error_is_left_alone(tmp_path: Path) -> None:
    broken = "import jax.numpy as jnp\nw = jnp.linalg.eig(a)\ndef f(:\n"
    (tmp_path / "broken.py").write_text(broken)
    out = run_cli("check", "broken.py", "--target", "tpu", "--fix", cwd=tmp_path)
    assert out.returncode == 1
    assert "broken.py:3:7: SyntaxError" in out.stdout
    assert (tmp_path / "broken.py").read_text() == broken


@pytest.mark.parametrize("flag", ["--fix", "--diff"])
def test_fix_of_a_clean_file_changes_nothing(tmp_path: Path, flag: str) -> None:
    (tmp_path / "eig.py").write_text(EIG)
    out = run_cli("check", "eig.py", "--target", "cpu", flag, cwd=tmp_path)
    assert out.returncode == 0 and (tmp_path / "eig.py").read_text() == EIG


def test_fix_safety_is_declared_by_each_rule_and_printed_on_its_page() -> None:
    from jaxtarget.rules.registry import RULES

    for rule in RULES:
        safety = {spec.kind: spec.applicability for spec in rule.fixes}
        assert safety.get("suppress") == "display-only", rule.code
        assert safety.get("guard", "safe") == "safe" and safety.get("ppermute", "unsafe") == "unsafe"
        # the editor's fix-all applies what `check --fix` applies
        first_safe = next((s.kind for s in rule.fixes if s.applicability == "safe"), None)
        assert rule.autofix == first_safe, rule.code
    page = run_cli("rule", "JT001").stdout
    assert "- `ppermute` (unsafe: applied only with `check --fix --unsafe-fixes`)" in page
    assert "- `guard` (safe: `check --fix` applies it)" in page
    assert "- `suppress` (editor only: `check --fix` never applies it)" in page


def test_fix_through_a_symlink_rewrites_its_target_and_keeps_the_link_and_mode(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "eig.py").write_text(EIG)
    (real / "eig.py").chmod(0o754)
    (tmp_path / "link.py").symlink_to(real / "eig.py")
    out = run_cli("check", "link.py", "--target", "tpu", "--fix", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert (tmp_path / "link.py").is_symlink()
    assert "jax.default_backend() in (" in (real / "eig.py").read_text()
    assert (real / "eig.py").stat().st_mode & 0o777 == 0o754
    assert [p.name for p in real.iterdir()] == ["eig.py"]  # no temporary file left behind
