"""The rules, in code order. Adding a rule: a module under rules/ and a line here."""

from __future__ import annotations

from ..apis import Api, ProbeCase
from ..platforms import Version
from ..semantics.module import Module, Reference, Wanted
from ..semantics.uses import USE_NAMES
from ..semantics.vocabulary import GUARD_NAMES
from .arguments import condition_platforms
from .base import Rule
from .jt001_gpu_only_collective import GpuOnlyCollective
from .jt002_manual_sharding_required import ManualShardingRequired
from .jt003_backend_limited_api import BackendLimitedApi

RULES: tuple[Rule, ...] = (
    GpuOnlyCollective(),
    ManualShardingRequired(),
    BackendLimitedApi(),
)

RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}
ALL_CODES: tuple[str, ...] = tuple(rule.code for rule in RULES)

#: Every catalog entry some rule reports, once, by key (the qualified name, with its condition).
APIS: dict[str, Api] = {api.key: api for rule in RULES for api in rule.apis}

#: The entries of each API, by qualified name (several where arguments decide the platforms).
ENTRIES: dict[str, tuple[Api, ...]] = {}
for _api in APIS.values():
    ENTRIES[_api.qualname] = (*ENTRIES.get(_api.qualname, ()), _api)

#: the names the guards, uses and argument conditions read
_CONTEXT = (GUARD_NAMES | USE_NAMES).union(
    *(rule.context for rule in RULES),
    *(api.condition.names for api in APIS.values() if api.condition is not None),
)

#: What the semantic model must find for these rules: their APIs, and the names their
#: guards, uses and argument conditions read.
WANTED = Wanted(
    subjects=frozenset(ENTRIES),
    # an API whose every entry needs an argument is looked at only in modules spelling it
    gates={
        q: tuple(a.condition.words for a in entries if a.condition is not None)
        for q, entries in ENTRIES.items()
        if all(a.condition is not None and a.condition.words for a in entries)
    },
    context=_CONTEXT,
    # an API, or what its condition names, that some release lacks: a use of it in a jax
    # without it is still found, and reported as absent there; and every name the guards
    # and uses read, which code written for another release may spell
    # (`jax.lib.xla_bridge.get_backend()`, gone from jax 0.8): it is read as spelled
    lacking=frozenset().union(
        *(
            {api.qualname} | (api.condition.names if api.condition is not None else frozenset())
            for api in APIS.values()
            if api.public_since or api.removed_in
        ),
        _CONTEXT,
    ),
)

#: The probe's fixed cases, by id; the first one's verdict is the probe's headline.
PROBE_CASES: tuple[tuple[str, ProbeCase], ...] = tuple(case for rule in RULES for case in rule.probe_cases)


def rules_for_api(qualname: str) -> list[Rule]:
    """The rules that report ``qualname``, in code order."""
    return [rule for rule in RULES if any(api.qualname == qualname for api in rule.apis)]


def holding_entry(module: Module, ref: Reference, version: Version | None = None) -> Api | None:
    """The catalog entry that describes a use: among those whose condition holds there, one
    ``version`` of JAX lacks (its use fails everywhere), else the one lowering on the fewest
    platforms. None when every entry needs an argument the use does not visibly pass
    (``pallas_call(..., interpret=True)``): nothing limits it."""
    entries = ENTRIES[ref.qualname]
    holding = [a for a in entries if a.condition is None or condition_platforms(module, ref, a.condition)]
    if not holding:
        return None
    return min(holding, key=lambda a: (a.exists(version), len(a.platforms(None))))


def entry_at(module: Module, ref: Reference, version: Version | None = None) -> Api:
    """``holding_entry``, or the API's first entry when none holds."""
    return holding_entry(module, ref, version) or ENTRIES[ref.qualname][0]


def rule_for_name(text: str) -> Rule | None:
    """Look a rule up by code (``JT001``) or name (``gpu-only-collective``)."""
    key = text.strip()
    for rule in RULES:
        if key.upper() == rule.code or key.lower() == rule.name:
            return rule
    return None
