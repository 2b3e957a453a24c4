"""The idiom cases in tests/idioms/: findings per target, and their runtime claims on CPU.

Each case file marks the lines that must be reported (see tests/idioms/README.md).
The static half checks the engine's findings against the markers on cpu and tpu;
the runtime half runs the case as a pytest module on CPU with the installed jax
and checks what the markers claim: a test holding a cpu finding fails there, and
a test whose backend-limited calls are all gated passes or is skipped.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import CheckFn

HERE = Path(__file__).parent / "idioms"
CASES = sorted(HERE.glob("case_*.py"))
TARGETS = ("cpu", "tpu")
_MARK = re.compile(r"#\s*expect(?:\((?P<on>[a-z, ]+)\))?:\s*(?P<code>JT\d{3})\s+(?P<name>\w+)")


@dataclass(frozen=True)
class Mark:
    line: int
    code: str
    name: str
    targets: frozenset[str]


def marks(source: str) -> list[Mark]:
    out: list[Mark] = []
    for i, text in enumerate(source.splitlines(), 1):
        for m in _MARK.finditer(text):
            on = m.group("on")
            targets = frozenset(t.strip() for t in on.split(",")) if on else frozenset(TARGETS)
            assert targets <= set(TARGETS), f"line {i}: unknown target in {on!r}"
            out.append(Mark(i, m.group("code"), m.group("name"), targets))
    return out


def test_there_are_cases_for_each_family() -> None:
    assert len(CASES) >= 8, CASES
    for case in CASES:
        doc = ast.get_docstring(ast.parse(case.read_text())) or ""
        assert "Modelled on" in doc, f"{case.name} does not cite what it is modelled on"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_findings_match_the_markers(check: CheckFn, case: Path, target: str) -> None:
    source = case.read_text()
    expected = {(m.line, m.code) for m in marks(source) if target in m.targets}
    analysis = check(source, (target,), str(case))
    found = {(f.span.line, f.code) for f in analysis.findings}
    lines = source.splitlines()
    missing = sorted(expected - found)
    extra = sorted(found - expected)
    assert not missing and not extra, (
        f"{case.name} on {target}:\n"
        + "".join(f"  missing {c} at {ln}: {lines[ln - 1].strip()}\n" for ln, c in missing)
        + "".join(f"  unexpected {c} at {ln}: {lines[ln - 1].strip()}\n" for ln, c in extra)
    )
    by_line = {(f.span.line, f.code): f.message for f in analysis.findings}
    for m in marks(source):
        if target in m.targets:
            assert m.name in by_line[(m.line, m.code)], (m, by_line[(m.line, m.code)])


def _tests_with_cpu_findings(source: str) -> tuple[set[str], set[str]]:
    """Test functions (Class::name or name) holding a cpu marker, and all test functions."""
    cpu_lines = {m.line for m in marks(source) if "cpu" in m.targets}
    tree = ast.parse(source)
    failing: set[str] = set()
    every: set[str] = set()

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}::")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                name = f"{prefix}{node.name}"
                every.add(name)
                end = node.end_lineno or node.lineno
                if any(node.lineno <= ln <= end for ln in cpu_lines):
                    failing.add(name)

    visit(tree.body, "")
    return failing, every


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_runtime_claims_hold_on_cpu(case: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    env = {
        **os.environ,
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=4",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    plugin = Path(__file__).parent / "idioms" / "outcomes.py"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "outcomes", str(case)],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(plugin.parent), "JAXTARGET_OUTCOMES": str(report)},
        cwd=tmp_path,
        timeout=600,
    )
    assert report.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    outcomes: dict[str, str] = json.loads(report.read_text())
    failing, every = _tests_with_cpu_findings(case.read_text())
    # parametrised tests report one outcome per parameter set: judge each
    seen: dict[str, set[str]] = {}
    for nodeid, outcome in outcomes.items():
        name = nodeid.split("::", 1)[1].split("[", 1)[0]
        seen.setdefault(name, set()).add(outcome)
    assert set(seen) == every, (sorted(seen), sorted(every))
    for name, got in sorted(seen.items()):
        if name in failing:
            assert got == {"failed"}, f"{case.name}::{name} holds a cpu finding but {got} on CPU"
        else:
            assert got <= {"passed", "skipped"}, (
                f"{case.name}::{name} is gated but {got} on CPU\n{proc.stdout[-4000:]}"
            )
