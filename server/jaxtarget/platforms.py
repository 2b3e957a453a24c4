"""Backend platforms: names, aliases, target lists, JAX versions, and how a set is written.

This is the one place that renders a set of platforms, for messages, hover,
the rule docs and the fixes alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

#: The concrete platforms jaxtarget reasons about, in display order.
PLATFORMS: tuple[str, ...] = ("cpu", "cuda", "rocm", "tpu")

#: Aliases a user may write in a target list.
ALIASES: dict[str, tuple[str, ...]] = {"gpu": ("cuda", "rocm")}

#: Every value accepted in a target list.
TARGET_VALUES: tuple[str, ...] = (*PLATFORMS, "gpu", "auto")

GPU_PLATFORMS: frozenset[str] = frozenset(ALIASES["gpu"])
ALL_PLATFORMS: frozenset[str] = frozenset(PLATFORMS)

Version = tuple[int, ...]


class TargetError(ValueError):
    """A target list holds a value that is not a backend."""


def expand_targets(values: Iterable[str], auto_backend: str | None) -> frozenset[str]:
    """Turn user-written target values into a set of concrete platforms.

    ``auto`` stands for the default backend of the selected interpreter;
    ``auto_backend`` is that backend when known, and ``None`` means unknown
    (which counts as ``cpu``).
    """
    result: set[str] = set()
    for raw in values:
        value = raw.strip().lower()
        if value in PLATFORMS:
            result.add(value)
        elif value in ALIASES:
            result.update(ALIASES[value])
        elif value == "auto":
            backend = (auto_backend or "cpu").lower()
            if backend in ALIASES:
                result.update(ALIASES[backend])
            elif backend in PLATFORMS:
                result.add(backend)
            else:
                result.add("cpu")
        else:
            raise TargetError(f"unknown target backend {raw!r}; expected one of {', '.join(TARGET_VALUES)}")
    return frozenset(result)


def platforms_of(value: str) -> frozenset[str]:
    """The platforms a backend string names (``"gpu"`` is cuda and rocm; unknown: none)."""
    v = value.lower()
    if v in ALIASES:
        return frozenset(ALIASES[v])
    if v in PLATFORMS:
        return frozenset({v})
    return frozenset()


def ordered(platforms: Iterable[str]) -> list[str]:
    """Platforms in display order."""
    chosen = set(platforms)
    return [p for p in PLATFORMS if p in chosen]


def parse_version(text: str) -> Version:
    """'0.8.2' -> (0, 8, 2); trailing non-numeric parts ('0.9.0rc1', '.dev') are dropped."""
    parts: list[int] = []
    for piece in text.split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) != len(piece):
            break
    return tuple(parts)


# ---------------------------------------------------------------- rendering

_MARK = {True: "✓", False: "✗", None: "?"}


def set_text(platforms: Iterable[str]) -> str:
    """'GPU (cuda, rocm)', 'cpu, cuda, rocm' or 'no platform'."""
    plats = frozenset(platforms)
    names = ", ".join(ordered(plats))
    if plats == GPU_PLATFORMS:
        return f"GPU ({names})"
    return names or "no platform"


def requirement_text(platforms: Iterable[str]) -> str:
    """What a guarded call requires: 'a GPU backend (cuda or rocm)' or 'one of: cpu'."""
    plats = frozenset(platforms)
    if plats == GPU_PLATFORMS:
        return "a GPU backend (cuda or rocm)"
    return "one of: " + ", ".join(ordered(plats))


def targets_text(platforms: Iterable[str]) -> str:
    """ "target 'tpu'" or "targets 'cpu', 'tpu'"."""
    names = ordered(platforms)
    if len(names) == 1:
        return f"target '{names[0]}'"
    return "targets " + ", ".join(f"'{n}'" for n in names)


def marks_line(verdicts: Mapping[str, bool | None]) -> str:
    """'cpu ✗ · cuda ✓ · rocm ✓ · tpu ✗' for the platforms present in ``verdicts``."""
    return " · ".join(f"{p} {_MARK[verdicts[p]]}" for p in PLATFORMS if p in verdicts)


def marks_table(lowers: Iterable[str]) -> str:
    """A Markdown table with one ✓/✗ row over every platform."""
    plats = frozenset(lowers)
    head = "| " + " | ".join(PLATFORMS) + " |\n|" + "---|" * len(PLATFORMS)
    row = "| " + " | ".join("✓" if p in plats else "✗" for p in PLATFORMS) + " |"
    return f"{head}\n{row}"


def support(lowers: Iterable[str]) -> dict[str, bool | None]:
    """Every platform mapped to whether it is in ``lowers``."""
    plats = frozenset(lowers)
    return {p: p in plats for p in PLATFORMS}
