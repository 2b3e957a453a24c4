"""The catalog's platform facts, re-verified by cross-lowering with every JAX the suite has.

The suite's own interpreter has the JAX ``pip install jax`` gives its Python; the
venvs under ``.jax-venvs/`` (made by ``scripts/test.sh``) hold other releases on
other Pythons. Each is probed with ``jit(f).trace(*args).lower(lowering_platforms=...)``
and the catalog must agree with it on every platform, API by API.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxtarget.apis import AllOf, ArgCondition
from jaxtarget.lsp.hover import hover_markdown
from jaxtarget.platforms import PLATFORMS, parse_version
from jaxtarget.probe import (
    Ask,
    ProbeResult,
    catalog_cases,
    catalog_disagreements,
    command_for,
    execution_disagreements,
    format_disagreements,
    format_execution,
    format_summary,
    local_platform,
    run_probe,
)
from jaxtarget.rules.registry import APIS

from .conftest import JAX_VENVS, REQUIRED_JAX, ROOT, jax_venv, make_engine, probe_program, run_cli


def _own_release() -> tuple[str, str]:
    return importlib.metadata.version("jax"), f"{sys.version_info[0]}.{sys.version_info[1]}"


def _interpreters() -> list[str]:
    """The suite's own interpreter and each of scripts/test.sh's venvs (one holding the own
    interpreter's jax on the same Python adds nothing and is left out)."""
    found = [sys.executable]
    for version, minor in JAX_VENVS.items():
        python = ROOT / ".jax-venvs" / f"jax-{version}" / "bin" / "python"
        if (version, minor) == _own_release():
            continue
        if python.exists():
            found.append(str(python))
        elif os.environ.get("CI"):
            raise RuntimeError(f"{python} is missing: scripts/test.sh installs it")
    return found


INTERPRETERS = _interpreters()
_probed: dict[str, ProbeResult] = {}


def lowered(python: str) -> ProbeResult:
    if python not in _probed:
        _probed[python] = run_probe(python, timeout=300, ask=Ask(all_apis=True))
    return _probed[python]


def _label(python: str) -> str:
    return "own" if python == sys.executable else Path(python).parents[1].name


VERIFIABLE = sorted(k for k, a in APIS.items() if a.probe is not None and a.probe.verifiable)


@pytest.mark.parametrize("python", INTERPRETERS, ids=_label)
@pytest.mark.parametrize("key", VERIFIABLE)
def test_catalog_agrees_with_installed_jax(python: str, key: str) -> None:
    """Each entry (each value of a condition's probe) lowers exactly where the catalog says, or is absent."""
    result = lowered(python)
    api = APIS[key]
    assert api.probe is not None
    version = parse_version(result.jax_version or "")
    cases = [case_id for case_id, entry, _ in catalog_cases() if entry is api]
    assert cases
    for case_id in cases:
        entry = result.data["cases"][case_id]
        if not api.exists(version):
            # absent from this release: no verdict, not a platform failure
            assert all(entry[p].get("absent") and entry[p]["ok"] is None for p in PLATFORMS), entry
            continue
        expected = api.platforms(version)
        for platform in PLATFORMS:
            got = entry[platform]
            assert got.get("stage") != "build", (case_id, got)
            if got["ok"]:
                assert got["method"] == "jit.trace.lower", got
            else:
                said = f"{got['error']['type']}: {got['error']['message']}"
                if api.probe.artifact(said):
                    # cross-lowering from a CPU-only jaxlib cannot tell: no verdict
                    continue
                assert got["error"]["type"] in {api.error_type, *api.probe.errors}, (case_id, platform, got)
            assert bool(got["ok"]) == (platform in expected), (result.jax_version, case_id, platform, got)


@pytest.mark.parametrize("python", INTERPRETERS, ids=_label)
def test_every_release_gets_a_headline_verdict(python: str) -> None:
    """jax 0.7.0, whose `import jax` has no `jax.export`, gets the psend verdict like the newest."""
    result = lowered(python)
    version = parse_version(result.jax_version or "")
    assert result.platforms == {p: p in APIS["jax.lax.psend"].platforms(version) for p in PLATFORMS}
    assert "?" not in format_summary(result).split("psend+precv:", 1)[1].split("ppermute:", 1)[0]


def test_the_required_releases_are_verified() -> None:
    """jax 0.7.0 and 0.10.2 on Python 3.11 and 0.12.0.1 on Python 3.13 are among the
    interpreters every test here runs with, whatever Python the suite itself has."""
    probed = {
        (lowered(p).jax_version, lowered(p).data["python"]["version"].rsplit(".", 1)[0]) for p in INTERPRETERS
    }
    missing = REQUIRED_JAX - probed
    if missing and os.environ.get("CI"):
        pytest.fail(f"not verified: {sorted(missing)} (scripts/test.sh installs them)")
    if missing:
        pytest.skip(f"not installed: {sorted(missing)} (scripts/test.sh installs them)")


def test_psend_error_text_is_the_catalog_error() -> None:
    err = lowered(sys.executable).data["cases"]["jax.lax.psend"]["cpu"]["error"]
    assert f"{err['type']}: {err['message']}" == APIS["jax.lax.psend"].error


def test_unverifiable_entries_say_why() -> None:
    for api in APIS.values():
        assert api.probe is not None
        if not api.probe.verifiable:
            assert api.probe.reason


SCALED = textwrap.dedent(
    """\
    import jax


    def project(a, b, scale_a, scale_b):
        return jax.nn.scaled_matmul(a, b, scale_a, scale_b)
    """
)


@pytest.mark.parametrize("python", INTERPRETERS, ids=_label)
def test_check_gives_the_verdict_of_the_interpreters_jax(python: str, tmp_path: Path) -> None:
    """`jax.nn.scaled_matmul` lowers on cpu from jax 0.11.0: found before, silent after."""
    version = parse_version(lowered(python).jax_version or "")
    (tmp_path / "scaled.py").write_text(SCALED)
    proc = run_cli("check", "--target", "cpu", "--python", python, "scaled.py", cwd=tmp_path)
    have = ".".join(map(str, version))
    if version >= (0, 11, 0):
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "JT003" not in proc.stdout
    else:
        assert proc.returncode == 1, proc.stdout + proc.stderr
        (line,) = [ln for ln in proc.stdout.splitlines() if "JT003" in ln]
        assert line.startswith("scaled.py:5:19: JT003 `jax.nn.scaled_matmul`"), line
        assert line.endswith(f"(lowers on cpu from jax 0.11.0; you have {have})"), line


@pytest.mark.parametrize("python", INTERPRETERS, ids=_label)
def test_probe_all_reports_no_disagreement(python: str, tmp_path: Path) -> None:
    proc = run_cli("probe", "--all", "--python", python, cwd=tmp_path)
    version = lowered(python).jax_version
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith(f"jax {version} ({python}): ") and "all agree" in proc.stdout, proc.stdout


def _present_facts(data: dict[str, object]) -> tuple[int, int]:
    """From a `probe --all --format json` report: the (case, platform) facts of the entries
    this jax has (artifacts left out), and the cases it lacks."""
    cases = data["cases"]
    assert isinstance(cases, dict)
    facts = absent = 0
    for case_id, api, _ in catalog_cases():
        assert api.probe is not None
        entry = cases[case_id]
        if not api.probe.verifiable:
            continue
        if any(got.get("absent") for got in entry.values()):
            absent += 1
            continue
        for platform in PLATFORMS:
            err = entry[platform].get("error")
            facts += not (isinstance(err, dict) and api.probe.artifact(f"{err['type']}: {err['message']}"))
    return facts, absent


@pytest.mark.parametrize(
    ("release", "lacks"),
    [
        (
            "0.7.0",
            {
                "jax.scipy.linalg.solve_sylvester": "not in jax 0.7.0 (public from 0.8.0)",
                "jax.lax.linalg.tridiagonal_solve[with perturb_singular=True]": "not in jax 0.7.0 (public from 0.10.0)",
                "jax.experimental.fused.fused": "not in jax 0.7.0 (public from 0.7.2)",
            },
        ),
        (
            "0.12.0.1",
            {
                "jax.experimental.pallas.pallas_call[with pltpu.TPUCompilerParams, without interpret=True]": (
                    "not in jax 0.12.0.1 (removed in 0.7.2)"
                ),
            },
        ),
    ],
)
def test_probe_all_says_what_the_jax_lacks(release: str, lacks: dict[str, str], tmp_path: Path) -> None:
    """`probe --all`, text and JSON, names each entry the jax lacks with the release that has
    it, and counts as cross-lowered only the facts of the entries it has."""
    python = jax_venv(release)
    proc = run_cli("probe", "--all", "--format", "json", "--python", python, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    data = json.loads(proc.stdout)
    facts, absent = _present_facts(data)
    assert data["checked"] == facts and absent >= len(lacks), (data["checked"], facts, absent)
    rows = {row["api"]: row for row in data["absent"]}
    assert len(rows) == len(
        {a.key for k, a, _ in catalog_cases() if any(g.get("absent") for g in data["cases"][k].values())}
    )
    for key, text in lacks.items():
        assert rows[key]["text"] == text, rows[key]
        assert (rows[key]["public_since"], rows[key]["removed_in"]) == (
            APIS[key].public_since,
            APIS[key].removed_in,
        )
    text = run_cli("probe", "--all", "--python", python, cwd=tmp_path).stdout
    assert text.startswith(f"jax {release} ({python}): {facts} catalog facts cross-lowered, all agree\n"), (
        text
    )
    assert f"\n{len(rows)} catalog entries are not in this jax (no verdict):\n" in text, text
    for key, said in lacks.items():
        assert f"\n  {key}: {said}" in text, text


def test_probe_all_exits_1_where_the_catalog_and_the_jax_disagree(tmp_path: Path) -> None:
    """Through the command line: a stand-in interpreter runs jax 0.8.2's probe and reports
    its real results as jax 0.7.0's (a shell script that relabels the version in the child's
    JSON), so the catalog's 0.7.0 facts meet 0.8.2's lowering and API set."""
    real = jax_venv("0.8.2")
    relabel = tmp_path / "python"
    relabel.write_text(f'#!/bin/sh\n"{real}" "$@" | sed \'s/"jax": "0.8.2"/"jax": "0.7.0"/\'\n')
    relabel.chmod(0o755)
    proc = run_cli("probe", "--all", "--format", "json", "--python", str(relabel), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr
    data = json.loads(proc.stdout)
    assert data["jax"] == "0.7.0"
    existence = {row["qualname"]: row["catalog"] for row in data["disagreements"] if not row["platform"]}
    # in 0.8.2 though the catalog says public from 0.7.2, 0.8.0 or 0.8.1; the old class names gone in 0.7.2
    assert existence == {
        "jax.experimental.fused.fused": False,
        "jax.scipy.linalg.solve_sylvester": False,
        "jax.lax.linalg.svd[with algorithm=SvdAlgorithm.POLAR]": False,
        **{
            f"jax.lax.linalg.eigh[with implementation=EighImplementation.{m}]": False
            for m in ("QR", "JACOBI", "QDWH")
        },
        "jax.lax.linalg.eig[with implementation=EigImplementation.MAGMA]": False,
        "jax.lax.linalg.eig[with implementation=EigImplementation.CUSOLVER and left eigenvectors]": False,
        "jax.lax.linalg.eig[with implementation=EigImplementation.CUSOLVER and compute_left_eigenvectors=False]": False,
        "jax.experimental.pallas.pallas_call[with pltpu.TPUCompilerParams, without interpret=True]": True,
        "jax.experimental.pallas.pallas_call[with plgpu.TritonCompilerParams, without interpret=True]": True,
    }
    lowering = {
        (row["qualname"], row["platform"], row["catalog"]) for row in data["disagreements"] if row["platform"]
    }
    # psend got its rocm lowering in 0.8.2; svd QR stopped lowering on tpu in 0.8.1
    assert {
        ("jax.lax.psend", "rocm", False),
        ("jax.lax.linalg.svd[with algorithm=SvdAlgorithm.QR]", "tpu", True),
    } <= lowering
    text = run_cli("probe", "--all", "--python", str(relabel), cwd=tmp_path)
    assert text.returncode == 1
    assert f"catalog facts cross-lowered, {len(data['disagreements'])} disagree:" in text.stdout, text.stdout
    assert (
        "  jax.scipy.linalg.solve_sylvester: in this jax; the catalog says it is not in jax 0.7.0 (public from 0.8.0)"
        in text.stdout
    ), text.stdout
    assert (
        "  jax.experimental.pallas.pallas_call[with pltpu.TPUCompilerParams, without interpret=True]: "
        "not in this jax; the catalog says it is in jax 0.7.0" in text.stdout
    ), text.stdout
    assert "  jax.lax.psend on rocm: the catalog says it does not lower; jax: it lowers" in text.stdout


def test_probe_all_finds_a_fact_of_another_release() -> None:
    """jax 0.12's real results read as if from 0.10.2: the 0.11.0 cpu/tpu lowering of scaled_matmul
    disagrees, and so does the dynamic-root pbroadcast of 0.12.0, there though not public yet."""
    new = jax_venv("0.12.0.1")
    real = lowered(new)
    relabelled = ProbeResult(real.python, {**real.data, "jax": "0.10.2"}, real.seconds, real.platforms)
    checked, found = catalog_disagreements(relabelled)
    # the dynamic-root pbroadcast's four facts are not counted: 0.10.2 has no such API
    assert checked == catalog_disagreements(real)[0] - len(PLATFORMS) > 0
    assert not catalog_disagreements(real)[1]
    # the block-scaled matmuls, public and private, got a default (cpu, tpu) lowering in 0.11.0
    scaled = {k for k, a in APIS.items() if any(low.since == "0.11.0" for low in a.lowers_on)}
    assert {"jax.nn.scaled_matmul", "jax.nn.scaled_dot_general[with block-scale configs]"} < scaled
    # and pallas_call lost its Mosaic GPU lowering rule in 0.11.2 (Mosaic GPU kernels: plgpu.kernel)
    mosaic = "jax.experimental.pallas.pallas_call[with Mosaic GPU compiler_params, without interpret=True]"
    assert {(d.qualname, d.platform, d.catalog) for d in found} == {
        (k, p, False) for k in scaled for p in ("cpu", "tpu")
    } | {
        (mosaic, "cuda", True),
        (mosaic, "rocm", True),
        ("jax.lax.pbroadcast[with a source array]", "", False),
    }
    text = format_disagreements(relabelled, checked, found)
    assert f"{2 * len(scaled) + 3} disagree" in text
    assert "jax.nn.scaled_matmul on cpu: the catalog says it does not lower" in text
    assert (
        "  jax.lax.pbroadcast[with a source array]: in this jax; the catalog says it is not in jax 0.10.2"
        " (public from 0.12.0)" in text
    ), text


def _false_variants() -> list[tuple[str, str]]:
    """Each entry decided by a flag, its probe program with the flag the other way."""
    out = []
    for key, api in APIS.items():
        parts = api.condition.parts if isinstance(api.condition, AllOf) else (api.condition,)
        for part in parts:
            if not isinstance(part, ArgCondition) or part.value is not True or api.probe is None:
                continue
            code = api.probe.code
            if part.negated:  # without interpret=True: the same kernel, interpreted
                variant = code.replace("pl.pallas_call(kernel, ", "pl.pallas_call(kernel, interpret=True, ")
            else:  # with pivoting=True: the same call with pivoting=False
                variant = code.replace(f"{part.keyword}=True", f"{part.keyword}=False")
            assert variant != code, key
            out.append((key, variant))
    return out


@pytest.mark.parametrize("python", INTERPRETERS, ids=_label)
def test_the_flag_the_other_way_lowers_where_the_api_does(python: str, tmp_path: Path) -> None:
    """`qr(pivoting=False)` lowers on tpu, `pallas_call(..., interpret=True)` on cpu: each
    flag-decided entry's program with the flag flipped lowers wherever the API itself does."""
    variants = _false_variants()
    assert len(variants) >= 8
    request = {
        "mode": "full",
        "devices": 2,
        "platforms": list(PLATFORMS),
        "cases": [{"id": key, "code": code, "requires": [APIS[key].qualname]} for key, code in variants],
    }
    proc = subprocess.run(
        command_for(python),
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    version = parse_version(data["jax"])
    wrong = []
    for key, _ in variants:
        api = APIS[key]
        plain = APIS.get(api.qualname)  # the API's own entry, without the condition
        expected = plain.platforms(version) if plain is not None else frozenset(PLATFORMS)
        for platform in PLATFORMS:
            got = data["cases"][key][platform]
            if got.get("absent") or not api.exists(version):
                continue
            if bool(got.get("ok")) != (platform in expected):
                wrong.append(f"{key} flipped on {platform}: {got}")
    assert not wrong, "\n".join(wrong)


#: entries whose probe programs compute the deciding argument (``getattr`` on the preset's
#: name) or take the arrays as parameters: rightly not visible to the static reading, whose
#: visible forms test_conditional_entries.py checks
_COMPUTED_ARGUMENTS = {
    "jax.numpy.poly[of a 2-D array]",
    "jax.nn.dot_product_attention[of float16 arrays]",
    *(k for k in APIS if k.endswith("[with a precision= preset CPU lacks]")),
}


@pytest.mark.parametrize("python", INTERPRETERS, ids=_label)
def test_check_reports_each_probe_program_where_its_jax_failed_to_lower_it(
    python: str, tmp_path: Path
) -> None:
    """The static verdict equals the real one: each catalog probe program, checked as a file
    against this interpreter's jax, is reported on exactly the platforms where that jax
    failed to cross-lower it."""
    result = lowered(python)
    files: dict[str, tuple[str, dict[str, dict[str, object]]]] = {}
    for case_id, api, value in catalog_cases():
        entry = result.data["cases"].get(case_id)
        assert api.probe is not None
        if not api.probe.verifiable or not isinstance(entry, dict) or entry["cpu"].get("absent"):
            continue
        if api.key in _COMPUTED_ARGUMENTS:
            continue
        name = f"case_{len(files)}.py"
        (tmp_path / name).write_text(probe_program(api.probe.code, value))
        files[name] = (case_id, entry)
    assert len(files) > 40
    proc = run_cli(
        "check", "--target", ",".join(PLATFORMS), "--python", python, "--format", "json", ".", cwd=tmp_path
    )
    reported: dict[str, set[str]] = {name: set() for name in files}
    for f in json.loads(proc.stdout):
        if f["code"] in ("JT001", "JT003"):
            failing = f["message"].split(" would ")[0].rsplit(";", 1)[1]
            reported[Path(f["filename"]).name] |= set(re.findall(r"'(\w+)'", failing))
    # and hover's support table, on the same programs, with an engine on that interpreter
    engine = make_engine(PLATFORMS, None if python == sys.executable else python)
    wrong = []
    for name, (case_id, entry) in files.items():
        api = next(a for k, a, _ in catalog_cases() if k == case_id)
        assert api.probe is not None
        analysis = engine.check((tmp_path / name).read_text())
        assert analysis.module is not None
        ref = next(r for r in analysis.module.references if r.qualname == api.qualname)
        hover = hover_markdown(engine, ref, analysis, None).split("**Backend support**", 1)[1]
        row = hover.split("|---" * len(PLATFORMS) + "|\n", 1)[1].split("\n", 1)[0]
        marks = dict(zip(PLATFORMS, row.split("|")[1:-1], strict=True))
        for platform in PLATFORMS:
            err = entry[platform].get("error")
            said = f"{err['type']}: {err['message']}" if isinstance(err, dict) else ""
            if said and api.probe.artifact(said):
                continue
            failed = not entry[platform].get("ok")
            if failed != (platform in reported[name]):
                wrong.append(
                    f"{case_id} on {platform}: jax {'failed' if failed else 'lowered'}"
                    f", check {'reports' if platform in reported[name] else 'is silent'}"
                )
            if marks[platform].strip() != ("✗" if failed else "✓"):
                wrong.append(
                    f"{case_id} on {platform}: jax {'failed' if failed else 'lowered'}, hover {marks}"
                )
    assert not wrong, "\n".join(wrong)


def test_probe_all_run_compiles_and_runs_each_case_on_this_machine(tmp_path: Path) -> None:
    """`probe --all --run` on the CPU: every case the catalog says lowers on cpu runs, the others fail to lower."""
    proc = run_cli("probe", "--all", "--run", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    data = json.loads(proc.stdout)
    assert data["run"]["disagreements"] == [] and data["run"]["checked"] > 100, data["run"]
    psend = data["cases"]["jax.lax.psend"]["execute"]
    assert (psend["ok"], psend["stage"]) == (False, "lower"), psend
    assert "only implemented on GPU" in psend["error"]["message"]
    assert data["cases"]["jax.numpy.linalg.eig"]["execute"]["ok"] is True
    # the same runs read as if from a TPU: a case that ran here but does not lower on tpu
    # disagrees, and so does one that failed to lower here but lowers on tpu
    real = ProbeResult(sys.executable, data, 0.0)
    as_tpu = ProbeResult(sys.executable, {**data, "platform": "tpu"}, 0.0)
    version = parse_version(data["jax"])
    expected = set()
    for case_id, api, _ in catalog_cases():
        run = data["cases"].get(case_id, {}).get("execute", {})
        on_tpu = "tpu" in api.platforms(version)
        if (run.get("ok") and not on_tpu) or (run.get("ok") is False and run["stage"] == "lower" and on_tpu):
            expected.add(case_id)
    checked, wrong, _ = execution_disagreements(as_tpu)
    assert checked == execution_disagreements(real)[0]
    assert {
        "jax.numpy.linalg.eig",
        "jax.lax.dot[with a precision= preset CPU lacks]=TF32_TF32_F32",
    } <= expected
    assert {d.qualname for d in wrong} == expected
    text = format_execution(as_tpu, checked, wrong, [])
    assert "jax.numpy.linalg.eig: the catalog says it does not lower on tpu; it ran" in text
    usage = run_cli("probe", "--run", cwd=tmp_path)
    assert usage.returncode == 2 and "--run goes with --all" in usage.stderr


#: `jaxtarget probe --all --run --format json` on machines with a GPU (the derived
#: verdicts dropped): jax 0.11.2 with jax-cuda13-plugin on one NVIDIA H200
GPU_RECORDS = sorted((ROOT / "tests" / "data" / "gpu").glob("*.json"))


@pytest.mark.parametrize("path", GPU_RECORDS, ids=lambda p: p.stem)
def test_the_catalog_agrees_with_a_real_gpu(path: Path) -> None:
    """Cross-lowered by a GPU jaxlib (no CPU-only artifacts), then compiled and run on the GPU."""
    data = json.loads(path.read_text())
    result = ProbeResult(data["python"]["executable"], data, data["seconds"])
    assert local_platform(data) == "cuda"
    checked, found = catalog_disagreements(result)
    assert checked > 400 and not found, format_disagreements(result, checked, found)
    ran, wrong, device = execution_disagreements(result)
    assert ran > 100 and not wrong, format_execution(result, ran, wrong, device)
    # what failed on the device failed after lowering: a limit of the device or its libraries
    assert all(d.error.startswith(("compile:", "run:")) for d in device), device
    # entries no CPU-only jaxlib can cross-lower (cuDNN attention, the cuDNN LSTM): on the
    # GPU they lower and run where the catalog says, and fail to lower for cpu and tpu
    version = parse_version(data["jax"])
    unverifiable = [a for a in APIS.values() if a.probe is not None and not a.probe.verifiable]
    assert len(unverifiable) >= 3
    for api in unverifiable:
        entry, expected = data["cases"][api.key], api.platforms(version)
        assert {p: bool(entry[p]["ok"]) for p in ("cpu", "cuda", "tpu")} == {
            p: p in expected for p in ("cpu", "cuda", "tpu")
        }, api.key
        assert entry["execute"]["ok"] == ("cuda" in expected), (api.key, entry["execute"])
    # the flagship: psend lowers with the real CUDA plugin, and fails for cpu and tpu
    psend = data["cases"]["jax.lax.psend"]
    assert psend["cuda"]["ok"] and not psend["cpu"]["ok"] and not psend["tpu"]["ok"]
    assert psend["execute"]["ok"] is None  # one GPU: the two-device mesh is not the GPU's


@pytest.mark.parametrize("python", INTERPRETERS, ids=_label)
def test_the_lowering_registry_agrees_with_the_catalog(python: str, tmp_path: Path) -> None:
    """`probe --scan`: each primitive the catalog names lowers where its APIs do, by this jax's registry."""
    proc = run_cli("probe", "--scan", "--format", "json", "--python", python, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    version = parse_version(data["jax"])
    assert data["scan"]["available"], data["scan"]
    limited: dict[str, list[str]] = {**data["covered"], **data["not_covered"]}
    assert data["covered"] and set(data["covered"]) <= {p for a in APIS.values() for p in a.primitives}
    for api in APIS.values():
        if not api.primitives or not api.exists(version):
            continue
        # where every limited primitive it binds lowers (none limited: everywhere)
        where = set(PLATFORMS)
        for prim in api.primitives:
            where &= set(limited.get(prim, PLATFORMS))
        assert api.platforms(version) == where, (data["jax"], api.qualname, where)
    text = run_cli("probe", "--scan", "--python", python, cwd=tmp_path).stdout
    assert text.startswith(f"jax {data['jax']}: {len(limited)} primitives lower only on some platforms"), text
    for prim, where in data["not_covered"].items():
        assert f"✗ {prim}" in text and ", ".join(where) in text.split(f"✗ {prim}", 1)[1].split("\n", 1)[0]
