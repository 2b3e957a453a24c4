"""The backend probe: run a fixed lowering script in the user's interpreter.

The child (``probe_child.py``) is started with an argument list (never a
shell), in its own process group and an empty temporary folder, with
``python -E -c <source>``; it gets its request on stdin and prints one JSON
object. A timeout or a cancel kills the whole group. Output is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import tempfile
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from .apis import Api
from .environment import InterpreterError, resolve_interpreter
from .platforms import PLATFORMS, marks_line, ordered, parse_version
from .rules.registry import APIS, PROBE_CASES

MAX_OUTPUT = 4 * 1024 * 1024


class ProbeError(Exception):
    """The probe produced no result; ``kind`` says why."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class ProbeResult:
    python: str
    data: dict[str, Any]
    seconds: float
    platforms: dict[str, bool | None] = field(default_factory=dict)

    @property
    def jax_version(self) -> str | None:
        v = self.data.get("jax")
        return v if isinstance(v, str) else None

    @property
    def default_backend(self) -> str | None:
        platform = self.data.get("platform")
        backend = self.data.get("default_backend")
        if isinstance(platform, str) and platform in PLATFORMS:
            return platform
        return backend if isinstance(backend, str) else None


def _child_source() -> str:
    return resources.files("jaxtarget").joinpath("probe_child.py").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Ask:
    """What the probe is asked: versions only, the platform-limited primitives of the
    lowering registry, or cross-lowering (every catalog entry with ``all_apis``, each
    also compiled and run on the local device with ``execute``)."""

    env_only: bool = False
    all_apis: bool = False
    scan: bool = False
    execute: bool = False


def build_request(ask: Ask = Ask()) -> dict[str, Any]:
    if ask.env_only or ask.scan:
        return {"mode": "scan" if ask.scan else "env"}
    cases: list[dict[str, Any]] = [
        {"id": case_id, "code": case.code, "requires": list(case.requires), "run_local": i > 0}
        for i, (case_id, case) in enumerate(PROBE_CASES)
    ]
    if ask.all_apis:
        for case_id, api, value in catalog_cases():
            assert api.probe is not None
            requires = [api.qualname, *api.probe.requires]
            code = api.probe.code if value is None else f"VALUE = {value!r}\n{api.probe.code}"
            cases.append({"id": case_id, "code": code, "requires": requires})
    request = {"mode": "full", "devices": 2, "platforms": list(PLATFORMS), "cases": cases}
    return {**request, "execute": True} if ask.execute else request


def catalog_cases() -> list[tuple[str, Api, str | None]]:
    """The probe programs of the catalog: (case id, entry, value), one per value of a ``ProbeCase.values``."""
    out: list[tuple[str, Api, str | None]] = []
    for key, api in APIS.items():
        if api.probe is None:
            continue
        if api.probe.values:
            out.extend((f"{key}={v}", api, v) for v in api.probe.values)
        else:
            out.append((key, api, None))
    return out


def command_for(python: str) -> list[str]:
    return [python, "-E", "-c", _child_source()]


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "JAX_PLATFORM"))}
    env["JAX_PLATFORMS"] = os.environ.get("JAX_PLATFORMS", "")
    if not env["JAX_PLATFORMS"]:
        del env["JAX_PLATFORMS"]
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    return env


def _parse(python: str, code: int | None, out: bytes, err: bytes, started: float) -> ProbeResult:
    seconds = time.perf_counter() - started
    if len(out) > MAX_OUTPUT:
        raise ProbeError("output-too-large", f"the probe printed more than {MAX_OUTPUT} bytes")
    text = out.decode("utf-8", errors="replace").strip()
    last = text.splitlines()[-1] if text else ""
    try:
        data = json.loads(last)
    except json.JSONDecodeError:
        tail = err.decode("utf-8", errors="replace").strip().splitlines()[-3:]
        detail = " | ".join(tail) or (last[:200] if last else "no output")
        if code:
            raise ProbeError("crashed", f"the probe exited with status {code}: {detail}") from None
        raise ProbeError("bad-output", f"the probe printed something that is not JSON: {detail}") from None
    if not isinstance(data, dict):
        raise ProbeError("bad-output", "the probe printed JSON that is not an object")
    error = data.get("error")
    if isinstance(error, dict):
        kind = str(error.get("kind", "error"))
        raise ProbeError(kind, str(error.get("message", "probe failed")))
    if code:
        raise ProbeError("crashed", f"the probe exited with status {code}")
    data["wall_seconds"] = round(seconds, 3)
    return ProbeResult(python, data, seconds, _platform_verdicts(data))


def _platform_verdicts(data: dict[str, Any]) -> dict[str, bool | None]:
    headline = PROBE_CASES[0][0] if PROBE_CASES else ""
    case = data.get("cases", {}).get(headline, {})
    return {p: case.get(p, {}).get("ok") for p in PLATFORMS if p in case}


def run_probe(python: str | None, timeout: float = 60.0, ask: Ask = Ask()) -> ProbeResult:
    """Run the probe to completion from synchronous code (the CLI)."""
    return asyncio.run(run_probe_async(python, timeout, ask))


async def run_probe_async(python: str | None, timeout: float = 60.0, ask: Ask = Ask()) -> ProbeResult:
    """Run the probe without blocking the event loop; a timeout or a cancel kills the child's group."""
    try:
        exe = resolve_interpreter(python)
    except InterpreterError as exc:
        raise ProbeError(exc.kind, str(exc)) from None
    request = json.dumps(build_request(ask)).encode()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="jaxtarget-probe-") as cwd:
        try:
            proc = await asyncio.create_subprocess_exec(
                *command_for(exe),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=_child_env(),
                start_new_session=True,
                limit=MAX_OUTPUT,
            )
        except OSError as exc:
            raise ProbeError(
                "interpreter-not-executable", f"cannot start {exe}: {exc.strerror or exc}"
            ) from exc
        try:
            out, err = await asyncio.wait_for(proc.communicate(request), timeout)
        except asyncio.TimeoutError:
            _kill_group(proc.pid)
            await proc.wait()
            raise ProbeError(
                "timeout", f"the probe did not finish within {timeout:g} s and was killed"
            ) from None
        except BaseException:
            _kill_group(proc.pid)
            await proc.wait()
            raise
    return _parse(exe, proc.returncode, out, err, started)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def verdict_line(result: ProbeResult) -> str:
    head = marks_line(result.platforms) or f"default backend {result.default_backend}"
    return f"{head} — jax {result.jax_version}"


def headline(result: ProbeResult) -> str:
    """The probe's result in one line that names itself, with the portable fallback's.

    ``JAX Target: psend+precv lower on cuda, rocm; not on cpu, tpu (jax 0.10.2); ppermute lowers on all``
    """
    cases = result.data.get("cases", {})

    def where(case_id: str, verb: str) -> str:
        entry = cases.get(case_id, {})
        ok = [p for p in PLATFORMS if entry.get(p, {}).get("ok")]
        failed = [p for p in PLATFORMS if entry.get(p, {}).get("ok") is False]
        if ok and not failed:
            return f"{case_id} {verb} on all"
        parts = [f"{verb} on {', '.join(ok)}"] if ok else []
        parts += [f"not on {', '.join(failed)}"] if failed else []
        return f"{case_id} {'; '.join(parts) or 'no verdict'}"

    first, *others = [case_id for case_id, _ in PROBE_CASES]
    text = f"JAX Target: {where(first, 'lower')} (jax {result.jax_version})"
    return "; ".join([text, *(where(case_id, "lowers") for case_id in others)])


def format_summary(result: ProbeResult) -> str:
    d = result.data
    lines = [
        f"python   {d.get('python', {}).get('executable')} ({d.get('python', {}).get('version')})",
        f"jax      {d.get('jax')}   jaxlib {d.get('jaxlib')}",
        f"plugins  {', '.join(p['name'] + ' ' + p['version'] for p in d.get('plugins', [])) or 'none'}",
        f"backend  {d.get('default_backend')}   devices {', '.join(d.get('devices', []))}",
    ]
    cases = d.get("cases", {})
    for case_id, entry in cases.items():
        lines.append(f"{case_id}:")
        for p in PLATFORMS:
            res = entry.get(p)
            if res is None:
                continue
            if res.get("ok"):
                lines.append(f"  {p:<5} ✓ lowers")
            elif res.get("absent"):
                api = APIS.get(case_id.split("=", 1)[0]) or APIS.get(str(res["absent"]))
                have = str(d.get("jax"))
                known = api is not None and api.existence_text()
                said = (
                    api.absent_text(parse_version(have))
                    if api is not None and known
                    else f"not in jax {have}"
                )
                lines.append(f"  {p:<5} - {said}")
            elif res.get("ok") is None:
                lines.append(f"  {p:<5} ? {res.get('skipped')}")
            else:
                err = res.get("error", {})
                lines.append(f"  {p:<5} ✗ {err.get('type')}: {err.get('message')}")
        run = entry.get("local_run")
        if run:
            if run.get("ok"):
                lines.append(f"  ran on {run.get('backend')}: {run.get('input')} -> {run.get('output')}")
            else:
                lines.append(f"  local run failed: {run.get('error')}")
    lines.append(f"summary  {verdict_line(result)}   ({result.seconds:.1f} s)")
    return "\n".join(lines)


@dataclass(frozen=True)
class Disagreement:
    """A platform where the catalog and the installed jax's lowering differ for one API, or
    (``platform`` empty) whether the installed jax has the API at all."""

    #: the probe case: the entry's key (``svd[with subset_by_index]``), ``=VALUE`` for one value's program
    qualname: str
    platform: str
    #: what the catalog says: it lowers there (with no platform: this jax has it)
    catalog: bool
    error: str


def catalog_disagreements(result: ProbeResult) -> tuple[int, list[Disagreement]]:
    """How many (API, platform) facts the probe checked, and those the installed jax contradicts.

    An API this jax lacks (``absent``) is no lowering fact; it disagrees when the catalog
    says this jax has it, and an API it has disagrees when the catalog says it is not public
    yet or removed (one row each, with no platform). Entries that cannot be cross-lowered
    here are not checked.
    """
    version = parse_version(result.jax_version or "")
    checked = 0
    out: list[Disagreement] = []
    for case_id, api, _ in catalog_cases():
        entry = result.data.get("cases", {}).get(case_id)
        if api.probe is None or not api.probe.verifiable or not isinstance(entry, dict):
            continue
        absent = any(isinstance(got, dict) and got.get("absent") for got in entry.values())
        if absent != (not api.exists(version)):
            have = result.jax_version
            said = (
                f"not in this jax; the catalog says it is in jax {have}"
                if absent
                else f"in this jax; the catalog says it is {api.absent_text(version)}"
            )
            out.append(Disagreement(case_id, "", absent, said))
            continue
        if absent:
            continue
        expected = api.platforms(version)
        for platform in PLATFORMS:
            got = entry.get(platform, {})
            err = got.get("error")
            said = f"{err.get('type')}: {err.get('message')}" if isinstance(err, dict) else ""
            if said and api.probe.artifact(said):
                # an artifact of cross-lowering from a CPU-only jaxlib: no verdict
                continue
            checked += 1
            if bool(got.get("ok")) != (platform in expected):
                out.append(Disagreement(case_id, platform, platform in expected, said))
    return checked, out


def absent_entries(result: ProbeResult) -> list[tuple[Api, str]]:
    """The catalog entries the probed jax lacks, each with what the catalog says of it
    (``not in jax 0.7.0 (public from 0.8.0)``)."""
    version = parse_version(result.jax_version or "")
    cases = result.data.get("cases", {})
    out: list[tuple[Api, str]] = []
    for case_id, api, _ in catalog_cases():
        entry = cases.get(case_id)
        if not isinstance(entry, dict) or any(a is api for a, _ in out):
            continue
        if any(isinstance(got, dict) and got.get("absent") for got in entry.values()):
            known = api.existence_text()
            out.append((api, api.absent_text(version) if known else f"not in jax {result.jax_version}"))
    return out


def local_platform(data: dict[str, Any]) -> str | None:
    """The platform of the probed interpreter's default device, in the catalog's names."""
    platform = data.get("platform")
    if platform != "gpu":
        return platform if isinstance(platform, str) else None
    names = " ".join([*(p.get("name", "") for p in data.get("plugins", [])), *data.get("devices", [])])
    return "rocm" if "rocm" in names.lower() else "cuda"


def execution_disagreements(result: ProbeResult) -> tuple[int, list[Disagreement], list[Disagreement]]:
    """Catalog facts for the local device checked by compiling and running each case on it.

    Returns how many were checked, the disagreements (a case the catalog says does not
    lower ran, or one it says lowers failed to lower), and the cases that lowered but
    failed to compile or run on this device (a limit of the device or its libraries,
    which the catalog, speaking of lowering, does not record).
    """
    local = local_platform(result.data)
    version = parse_version(result.jax_version or "")
    checked = 0
    found: list[Disagreement] = []
    device: list[Disagreement] = []
    if local not in PLATFORMS:
        return checked, found, device
    for case_id, api, _ in catalog_cases():
        entry = result.data.get("cases", {}).get(case_id)
        run = entry.get("execute") if isinstance(entry, dict) else None
        if not isinstance(run, dict) or run.get("ok") is None:
            continue  # not asked, absent from this jax, or needing more devices
        checked += 1
        expected = local in api.platforms(version)
        err = run.get("error")
        said = f"{run.get('stage')}: {err.get('type')}: {err.get('message')}" if isinstance(err, dict) else ""
        if run["ok"] != expected and (run["ok"] or run.get("stage") in ("inputs", "lower")):
            found.append(Disagreement(case_id, local, expected, said))
        elif not run["ok"] and expected:
            device.append(Disagreement(case_id, local, expected, said))
    return checked, found, device


def format_execution(
    result: ProbeResult, checked: int, found: list[Disagreement], device: list[Disagreement]
) -> str:
    kind = result.data.get("device_kind") or local_platform(result.data)
    lines = [f"jax {result.jax_version} on {kind}: {checked} catalog facts compiled and run"]
    for d in found:
        says = "lowers" if d.catalog else "does not lower"
        lines.append(f"  {d.qualname}: the catalog says it {says} on {d.platform}; {d.error or 'it ran'}")
    if device:
        lines.append("lowered, but failed on this device (a limit of the device or its libraries):")
        lines.extend(f"  {d.qualname}: {d.error}" for d in device)
    return "\n".join(lines)


def format_disagreements(result: ProbeResult, checked: int, found: list[Disagreement]) -> str:
    head = f"jax {result.jax_version} ({result.python}): {checked} catalog facts cross-lowered"
    lines = [f"{head}, all agree" if not found else f"{head}, {len(found)} disagree:"]
    for d in found:
        if not d.platform:  # whether the API is in this jax at all
            lines.append(f"  {d.qualname}: {d.error}")
            continue
        says = "lowers" if d.catalog else "does not lower"
        lines.append(
            f"  {d.qualname} on {d.platform}: the catalog says it {says}; jax: {d.error or 'it lowers'}"
        )
    absent = absent_entries(result)
    if absent:
        lines.append(f"{len(absent)} catalog entries are not in this jax (no verdict):")
        lines.extend(f"  {api.key}: {text}" for api, text in absent)
    return "\n".join(lines)


def scan_report(result: ProbeResult) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Platform-limited primitives of this jax: those the catalog covers, and those it does not.

    A primitive lowering on every platform the catalog speaks of is not limited.
    """
    scan = result.data.get("scan", {})
    covered_by = {prim for api in APIS.values() for prim in api.primitives}
    covered: dict[str, list[str]] = {}
    missing: dict[str, list[str]] = {}
    for prim, platforms in scan.get("limited", {}).items():
        # only the platforms the catalog speaks of (a registry may name others, such as oneapi)
        main = ordered(platforms)
        if main == list(PLATFORMS):
            continue
        (covered if prim in covered_by else missing)[prim] = main
    return covered, missing


def format_scan(result: ProbeResult) -> str:
    scan = result.data.get("scan", {})
    if not scan.get("available"):
        return f"jax {result.jax_version}: its lowering registry cannot be read ({scan.get('reason')})"
    covered, missing = scan_report(result)
    lines = [
        f"jax {result.jax_version}: {len(covered) + len(missing)} primitives lower only on some platforms "
        f"({len(covered)} covered by the catalog, {len(missing)} not)"
    ]
    lines += [
        f"  ✗ {prim:<32} lowers only on {', '.join(p) or 'none of cpu, cuda, rocm, tpu'}"
        for prim, p in missing.items()
    ]
    lines += [f"  ✓ {prim:<32} lowers only on {', '.join(p)}" for prim, p in covered.items()]
    return "\n".join(lines)
