"""Hover text for a resolved API: the verdict for the targets, docs from the user's JAX, the table."""

from __future__ import annotations

from ..apis import Api
from ..engine import Analysis, Engine
from ..platforms import marks_line, marks_table, ordered
from ..probe import ProbeResult
from ..rules.registry import ENTRIES, holding_entry, rules_for_api
from ..semantics.module import Reference


def verdict(api: Api, engine: Engine, ref: Reference) -> str:
    """Whether the API lowers on the configured targets that reach this line: the hover's first line."""
    lowers = api.platforms(engine.version)
    targets = ordered(engine.targets)
    reach = ordered(engine.targets if ref.allowed is None else engine.targets & ref.allowed)
    failing = [p for p in reach if p not in lowers]
    where = f"targets {', '.join(targets) or 'none'}"
    if ref.allowed is not None:
        where += f"; guarded here: runs on {', '.join(reach) or 'no target'}"
    if failing:
        return f"**✗ Fails on {', '.join(failing)}** ({where})"
    return f"**✓ Lowers on every target that reaches this line** ({where})"


def hover_markdown(engine: Engine, ref: Reference, analysis: Analysis, probe: ProbeResult | None) -> str:
    """``probe``: the last probe the user ran with this interpreter, if any."""
    module = analysis.module
    held = holding_entry(module, ref, engine.version) if module is not None else ENTRIES[ref.qualname][0]
    api = held or ENTRIES[ref.qualname][0]
    signature, doc = engine.environment.resolver.describe(api.qualname)
    cond = f" {api.condition.text}" if api.condition else ""
    lowers = api.platforms(engine.version)
    jax_version = engine.environment.jax_version or "unknown"
    present = engine.version is None or api.exists(engine.version)
    if engine.version is not None and not present:
        # no platform runs what this jax lacks: no support table, and the version that has it
        absent = api.absent_text(engine.version)
        head = f"**✗ `{api.display}`{cond} is {absent}**: the call fails on every platform"
    elif held is None:
        # the use passes none of the arguments that limit the API (`interpret=True` given)
        head = f"**✓ Lowers on every target that reaches this line**: only a call{cond} is limited"
    else:
        head = verdict(api, engine, ref)
    parts = [head, f"```python\n{signature or api.qualname}\n```"]
    if doc:
        parts.append(doc.strip().split("\n\n")[0].strip())
    if present:
        table = marks_table(lowers)
        parts.append(f"**Backend support** (`{api.qualname}`{cond}, jax {jax_version}):\n\n{table}")
    reach = engine.targets if ref.allowed is None else engine.targets & ref.allowed
    note = api.version_note(frozenset(reach - lowers), engine.version) if present else ""
    if note or api.depends_on_version:
        advice = f". {note[0].upper()}{note[1:]}." if note else ""
        parts.append(f"**By jax version:** {api.versions_text()}{advice}")
    rules = rules_for_api(api.qualname)
    parts.extend(rule.hover_note for rule in rules if rule.hover_note)
    if api.note:
        parts.append(api.note)
    if rules:
        parts.append(f"Rule [{rules[0].code} {rules[0].name}]({rules[0].url})")
    cases = probe.data.get("cases") if probe is not None else None
    probed = [
        case
        for rule in rules
        for case, _ in rule.probe_cases[:1]
        if isinstance(cases, dict) and case in cases
    ]
    if probe is not None and probed:
        parts.append(
            f"**Your last probe** ({probed[0]}, jax {probe.jax_version}): {marks_line(probe.platforms)}"
        )
    if ref.resolved_by != "jedi" and analysis.note:
        parts.append(f"_{analysis.note}_")
    return "\n\n".join(parts)
