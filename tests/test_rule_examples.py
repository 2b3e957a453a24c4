"""Every rule's VALID/INVALID examples, run as tests: codes, fixed text, and fixes that keep code working."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxtarget.engine import Analysis
from jaxtarget.fixes.layout import apply_edits
from jaxtarget.rules.base import Example, Rule
from jaxtarget.rules.registry import RULES

from .conftest import CheckFn
from .names import unbound_names

INVALID = [(rule, i, ex) for rule in RULES for i, ex in enumerate(rule.invalid)]
VALID = [(rule, i, ex) for rule in RULES for i, ex in enumerate(rule.valid)]


def _id(case: tuple[Rule, int, Example]) -> str:
    return f"{case[0].code}-{case[1]}"


def _check(check: CheckFn, ex: Example) -> Analysis:
    return check(ex.source, ex.targets, ex.path)


def test_every_rule_has_docs_and_examples() -> None:
    for rule in RULES:
        assert rule.code.startswith("JT") and rule.name and rule.summary and rule.why, rule
        assert "{api}" in rule.message, rule.code
        assert rule.invalid, f"{rule.code} has no INVALID example"
        assert all(ex.fixed is not None for ex in rule.invalid), rule.code
        assert rule.fixes, rule.code
        assert rule.autofix is None or rule.autofix in {f.kind for f in rule.fixes}, rule.code


@pytest.mark.parametrize("case", INVALID, ids=_id)
def test_invalid_example_is_reported(check: CheckFn, case: tuple[Rule, int, Example]) -> None:
    rule, _, ex = case
    assert tuple(f.code for f in _check(check, ex).findings) == ex.expect
    assert rule.code in ex.expect


@pytest.mark.parametrize("case", VALID, ids=_id)
def test_valid_example_is_not_reported(check: CheckFn, case: tuple[Rule, int, Example]) -> None:
    rule, _, ex = case
    assert [f.code for f in _check(check, ex).findings if f.code == rule.code] == []


@pytest.mark.parametrize("case", INVALID, ids=_id)
def test_invalid_example_fix_gives_the_documented_text(
    check: CheckFn, case: tuple[Rule, int, Example]
) -> None:
    rule, _, ex = case
    analysis = _check(check, ex)
    first = next(f for f in analysis.findings if f.code == rule.code)
    fixes = analysis.fixes(first)
    fix = next(f for f in fixes if f.kind == ex.fix) if ex.fix else fixes[0]
    assert apply_edits(ex.source, fix.edits) == ex.fixed


@pytest.mark.parametrize("case", INVALID, ids=_id)
def test_every_fix_compiles_binds_its_names_and_removes_its_finding(
    check: CheckFn, case: tuple[Rule, int, Example]
) -> None:
    _, _, ex = case
    analysis = _check(check, ex)
    before = unbound_names(ex.source)
    for finding in analysis.findings:
        fixes = analysis.fixes(finding)
        assert fixes, finding
        assert {f.kind for f in fixes} <= {spec.kind for spec in finding_rule(finding.code).fixes}
        for fix in fixes:
            new = apply_edits(ex.source, fix.edits)
            compile(new, ex.path, "exec")
            assert unbound_names(new) <= before, (fix.kind, unbound_names(new) - before)
            after = [f for f in check(new, ex.targets, ex.path).findings if f.code == finding.code]
            assert len(after) < len([f for f in analysis.findings if f.code == finding.code]), (fix.kind, new)


def finding_rule(code: str) -> Rule:
    return next(rule for rule in RULES if rule.code == code)


def test_unbound_names_sees_a_missing_helper() -> None:
    """The binding check used above can fail: a guard without its helper is caught."""
    assert unbound_names("import jax\nif has_gpu_backend():\n    y = jax.lax.psend(x)\n") == {
        "has_gpu_backend",
        "x",
    }
    assert unbound_names("def f():\n    import jax\n    return jax\n") == set()


def _run_on_cpu(tmp_path: Path, module: str, main: str) -> str:
    (tmp_path / "fixed.py").write_text(module)
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2", "JAX_PLATFORMS": "cpu"}
    out = subprocess.run(
        [sys.executable, "-c", main], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_ppermute_fallback_of_the_pair_example_runs_on_cpu(tmp_path: Path) -> None:
    """The fixed JT001 example, imported and run on CPU: the fallback gives psend/precv's values."""
    fixed = RULES[0].invalid[0].fixed
    assert fixed is not None and "ppermute" in fixed
    main = (
        "import jax, jax.numpy as jnp\n"
        "import builtins\n"
        "builtins.mesh = jax.make_mesh((2,), ('i',))\n"
        "import fixed\n"
        "x = jax.device_put(jnp.arange(4.0), jax.NamedSharding(builtins.mesh, fixed.P('i')))\n"
        "print(jax.jit(fixed.step)(x).tolist())\n"
    )
    # device 0's shard [0, 1] goes to device 1; device 0 receives nothing (zeros)
    assert _run_on_cpu(tmp_path, fixed, main) == "[0.0, 0.0, 0.0, 1.0]"


def test_guarded_example_runs_its_cpu_branch_on_cpu(tmp_path: Path) -> None:
    """The fixed JT003 eig example on CPU (a backend eig lowers on) takes the call, not the raise."""
    fixed = RULES[2].invalid[0].fixed
    assert fixed is not None and "raise NotImplementedError" in fixed
    main = (
        "import jax.numpy as jnp, builtins\nbuiltins.a = jnp.eye(3)\nimport fixed\n"
        "print(sorted(float(v.real) for v in fixed.w))\n"
    )
    assert _run_on_cpu(tmp_path, fixed, main) == "[1.0, 1.0, 1.0]"
