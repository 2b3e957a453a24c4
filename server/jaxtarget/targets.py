"""Backend platforms and target-set parsing."""

from __future__ import annotations

from collections.abc import Iterable

#: The concrete platforms jaxtarget reasons about, in display order.
PLATFORMS: tuple[str, ...] = ("cpu", "cuda", "rocm", "tpu")

#: Aliases a user may write in a target list.
ALIASES: dict[str, tuple[str, ...]] = {"gpu": ("cuda", "rocm")}

#: Every value accepted in a target list.
TARGET_VALUES: tuple[str, ...] = (*PLATFORMS, "gpu", "auto")

GPU_PLATFORMS: frozenset[str] = frozenset(ALIASES["gpu"])


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


def ordered(platforms: Iterable[str]) -> list[str]:
    """Platforms in display order."""
    chosen = set(platforms)
    return [p for p in PLATFORMS if p in chosen]
