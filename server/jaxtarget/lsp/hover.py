"""Hover text for a resolved API: docs from the user's JAX, then the backend table."""

from __future__ import annotations

from ..engine import Analysis, Engine
from ..platforms import marks_line, marks_table, ordered, support
from ..probe import ProbeResult, verdict_line
from ..rules.registry import ENTRIES, entry_at, rules_for_api
from ..semantics.module import Reference


def hover_markdown(engine: Engine, ref: Reference, analysis: Analysis, probe: ProbeResult | None) -> str:
    api = entry_at(analysis.module, ref) if analysis.module is not None else ENTRIES[ref.qualname][0]
    signature, doc = engine.environment.resolver.describe(api.qualname)
    parts = [f"```python\n{signature or api.qualname}\n```"]
    if doc:
        parts.append(doc.strip().split("\n\n")[0].strip())
    lowers = api.platforms(engine.version)
    cond = f" {api.condition.text}" if api.condition else ""
    jax_version = engine.environment.jax_version or "unknown"
    parts.append(f"**Backend support** (`{api.qualname}`{cond}, jax {jax_version}):\n\n{marks_table(lowers)}")
    parts.append(marks_line(support(lowers)))
    targets = ordered(engine.targets)
    reach = ordered(engine.targets if ref.allowed is None else engine.targets & ref.allowed)
    failing = [p for p in reach if p not in lowers]
    line = f"**Targets:** {', '.join(targets) or 'none'}"
    if ref.allowed is not None:
        line += f" (guarded here: runs on {', '.join(reach) or 'no target'})"
    line += f" — fails on {', '.join(failing)}" if failing else " — lowers on every reachable target"
    parts.append(line)
    note = api.version_note(frozenset(failing), engine.version)
    if note or api.depends_on_version:
        advice = f". {note[0].upper()}{note[1:]}." if note else ""
        parts.append(f"**By jax version:** {api.versions_text()}{advice}")
    rules = rules_for_api(api.qualname)
    parts.extend(rule.hover_note for rule in rules if rule.hover_note)
    if api.note:
        parts.append(api.note)
    if rules:
        parts.append(f"Rule [{rules[0].code} {rules[0].name}]({rules[0].url})")
    if probe is not None:
        parts.append(f"**Last probe:** {verdict_line(probe)} ({probe.python}, {probe.seconds:.1f} s)")
    if ref.resolved_by != "jedi" and analysis.note:
        parts.append(f"_{analysis.note}_")
    return "\n\n".join(parts)
