"""The catalog's platform facts, re-verified by cross-lowering with the installed JAX."""

from __future__ import annotations

import sys

import pytest

from jaxtarget.platforms import PLATFORMS, parse_version
from jaxtarget.probe import ProbeResult, run_probe
from jaxtarget.rules.registry import APIS


@pytest.fixture(scope="module")
def lowered() -> ProbeResult:
    return run_probe(sys.executable, timeout=300, all_apis=True)


VERIFIABLE = sorted(q for q, a in APIS.items() if a.probe is not None and a.probe.verifiable)


@pytest.mark.parametrize("qualname", VERIFIABLE)
def test_catalog_agrees_with_installed_jax(lowered: ProbeResult, qualname: str) -> None:
    api = APIS[qualname]
    version = parse_version(lowered.jax_version or "")
    if api.public_since and version < parse_version(api.public_since):
        pytest.skip(f"{qualname} is public from jax {api.public_since}")
    entry = lowered.data["cases"][qualname]
    expected = api.platforms(version)
    for platform in PLATFORMS:
        result = entry[platform]
        assert result.get("stage") != "build", (qualname, result)
        assert bool(result["ok"]) == (platform in expected), (qualname, platform, result)
        if not result["ok"]:
            assert result["error"]["type"] == "NotImplementedError", result


def test_psend_error_text_is_the_catalog_error(lowered: ProbeResult) -> None:
    err = lowered.data["cases"]["jax.lax.psend"]["cpu"]["error"]
    assert f"{err['type']}: {err['message']}" == APIS["jax.lax.psend"].error


def test_unverifiable_entries_say_why() -> None:
    for api in APIS.values():
        assert api.probe is not None
        if not api.probe.verifiable:
            assert api.probe.reason
