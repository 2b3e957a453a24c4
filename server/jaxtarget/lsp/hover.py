"""Hover text for a resolved catalog API: docs from the user's JAX, then the backend table."""

from __future__ import annotations

from ..analysis import Analysis, Engine, Reference
from ..catalog import RULES_BY_CODE
from ..probe import ProbeResult, verdict_line
from ..resolution import describe
from ..targets import PLATFORMS, ordered


def hover_markdown(engine: Engine, ref: Reference, analysis: Analysis, probe: ProbeResult | None) -> str:
    api = ref.api
    assert api is not None
    version = engine.version
    signature, doc = describe(engine.environment, api.qualname)
    parts = [f"```python\n{signature or api.qualname}\n```"]
    if doc:
        summary = doc.strip().split("\n\n")[0].strip()
        parts.append(summary)
    lowers = api.platforms(version)
    table_head = "| " + " | ".join(PLATFORMS) + " |\n|" + "---|" * len(PLATFORMS)
    row = "| " + " | ".join("✓" if p in lowers else "✗" for p in PLATFORMS) + " |"
    cond = f" {api.condition.text}" if api.condition else ""
    jax_version = engine.environment.jax_version or "unknown"
    parts.append(f"**Backend support** (`{api.qualname}`{cond}, jax {jax_version}):\n\n{table_head}\n{row}")
    parts.append(" · ".join(f"{p} {'✓' if p in lowers else '✗'}" for p in PLATFORMS))
    targets = ordered(engine.targets)
    reach = ordered(engine.targets if ref.allowed is None else engine.targets & ref.allowed)
    failing = [p for p in reach if p not in lowers]
    line = f"**Targets:** {', '.join(targets) or 'none'}"
    if ref.allowed is not None:
        line += f" (guarded here: runs on {', '.join(reach) or 'no target'})"
    line += f" — fails on {', '.join(failing)}" if failing else " — lowers on every reachable target"
    parts.append(line)
    if api.manual_sharding:
        parts.append(
            "**Manual sharding:** must run under `shard_map`; outside it tracing fails "
            "(psend currently only supports manual sharding)."
        )
    if api.note:
        parts.append(api.note)
    rule = RULES_BY_CODE[api.rule]
    parts.append(f"Rule [{rule.code} {rule.name}]({rule.url})")
    if probe is not None:
        parts.append(f"**Last probe:** {verdict_line(probe)} ({probe.python}, {probe.seconds:.1f} s)")
    if ref.resolved_by != "jedi" and analysis.note:
        parts.append(f"_{analysis.note}_")
    return "\n\n".join(parts)
