"""The rules, in code order. Adding a rule: a module under rules/ and a line here."""

from __future__ import annotations

from ..apis import Api, ProbeCase
from ..semantics.conditions import GUARD_NAMES
from ..semantics.module import Wanted
from ..semantics.uses import USE_NAMES
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

#: Every API some rule reports, once, by qualified name.
APIS: dict[str, Api] = {api.qualname: api for rule in RULES for api in rule.apis}

#: What the semantic model must find for these rules.
WANTED = Wanted(
    subjects=frozenset(APIS),
    context=(GUARD_NAMES | USE_NAMES).union(*(rule.context for rule in RULES)),
)

#: The probe's fixed cases, by id; the first one's verdict is the probe's headline.
PROBE_CASES: tuple[tuple[str, ProbeCase], ...] = tuple(case for rule in RULES for case in rule.probe_cases)


def rules_for_api(qualname: str) -> list[Rule]:
    """The rules that report ``qualname``, in code order."""
    return [rule for rule in RULES if any(api.qualname == qualname for api in rule.apis)]


def rule_for_name(text: str) -> Rule | None:
    """Look a rule up by code (``JT001``) or name (``gpu-only-collective``)."""
    key = text.strip()
    for rule in RULES:
        if key.upper() == rule.code or key.lower() == rule.name:
            return rule
    return None
