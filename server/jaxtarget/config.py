"""Configuration: one typed model for the CLI and the language server.

Layers, lowest first: built-in defaults, ``[tool.jaxtarget]`` of the nearest
``pyproject.toml``, then editor settings or command-line flags. Each layer is a
``Layer`` whose unset fields are ``None``; ``resolve`` folds them into one frozen
``Settings``. A bad value is reported as a ``Problem`` naming its key, and the
lower layer's value stays in force.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .catalog import ALL_CODES
from .targets import TARGET_VALUES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SEVERITIES: tuple[str, ...] = ("error", "warning", "information", "hint")


@dataclass(frozen=True)
class ProbeSettings:
    timeout_seconds: float = 60.0


@dataclass(frozen=True)
class Settings:
    """The effective configuration for one file or workspace folder."""

    target_backends: tuple[str, ...] = ("auto",)
    interpreter: tuple[str, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, str] = field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    probe: ProbeSettings = field(default_factory=ProbeSettings)
    #: where [tool.jaxtarget] came from, if anywhere
    pyproject: str | None = None

    def enabled(self, code: str) -> bool:
        if self.select and not any(code.startswith(s) for s in self.select):
            return False
        return not any(code.startswith(s) for s in self.ignore)

    def to_wire(self) -> dict[str, Any]:
        """camelCase form, as editors send and `showConfiguration` prints."""
        return {
            "targetBackends": list(self.target_backends),
            "interpreter": list(self.interpreter),
            "select": list(self.select),
            "ignore": list(self.ignore),
            "severity": dict(self.severity),
            "exclude": list(self.exclude),
            "probe": {"timeoutSeconds": self.probe.timeout_seconds},
            "pyproject": self.pyproject,
        }


@dataclass(frozen=True)
class Layer:
    """One source of settings; None means "not set here"."""

    target_backends: tuple[str, ...] | None = None
    interpreter: tuple[str, ...] | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    severity: Mapping[str, str] | None = None
    exclude: tuple[str, ...] | None = None
    probe_timeout_seconds: float | None = None


@dataclass(frozen=True)
class Problem:
    source: str
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.key}: {self.message}"


def resolve(*layers: Layer, pyproject: str | None = None) -> Settings:
    settings = Settings(pyproject=pyproject)
    for layer in layers:
        updates: dict[str, Any] = {}
        for f in fields(layer):
            value = getattr(layer, f.name)
            if value is None:
                continue
            if f.name == "probe_timeout_seconds":
                updates["probe"] = ProbeSettings(timeout_seconds=value)
            else:
                updates[f.name] = value
        settings = replace(settings, **updates)
    return settings


# ---------------------------------------------------------------- parsing


def _strings(value: Any, key: str, source: str, problems: list[Problem]) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        problems.append(Problem(source, key, f"expected a list of strings, got {value!r}"))
        return None
    return tuple(v.strip() for v in value)


def _codes(value: Any, key: str, source: str, problems: list[Problem]) -> tuple[str, ...] | None:
    codes = _strings(value, key, source, problems)
    if codes is None:
        return None
    out = []
    for code in codes:
        up = code.upper()
        if up in ("ALL", "JT"):
            out.append("JT")
        elif any(c.startswith(up) for c in ALL_CODES) and up.startswith("JT"):
            out.append(up)
        else:
            problems.append(Problem(source, key, f"unknown rule code {code!r}"))
            return None
    return tuple(out)


def _targets(value: Any, key: str, source: str, problems: list[Problem]) -> tuple[str, ...] | None:
    items = _strings(value, key, source, problems)
    if items is None:
        return None
    bad = [v for v in items if v.lower() not in TARGET_VALUES]
    if bad:
        problems.append(
            Problem(source, key, f"unknown backend {bad[0]!r}; expected {', '.join(TARGET_VALUES)}")
        )
        return None
    if not items:
        problems.append(Problem(source, key, "must name at least one backend"))
        return None
    return tuple(v.lower() for v in items)


def _severity(value: Any, key: str, source: str, problems: list[Problem]) -> dict[str, str] | None:
    if not isinstance(value, Mapping):
        problems.append(Problem(source, key, f"expected a table of code = severity, got {value!r}"))
        return None
    out: dict[str, str] = {}
    for code, sev in value.items():
        if not isinstance(code, str) or code.upper() not in ALL_CODES:
            problems.append(Problem(source, f"{key}.{code}", "unknown rule code"))
            continue
        if not isinstance(sev, str) or sev.lower() not in SEVERITIES:
            problems.append(Problem(source, f"{key}.{code}", f"expected one of {', '.join(SEVERITIES)}"))
            continue
        out[code.upper()] = sev.lower()
    return out


def _timeout(value: Any, key: str, source: str, problems: list[Problem]) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 3600:
        problems.append(Problem(source, key, f"expected seconds between 0 and 3600, got {value!r}"))
        return None
    return float(value)


_PYPROJECT_KEYS = {
    "targets": ("target_backends", _targets),
    "target-backends": ("target_backends", _targets),
    "interpreter": ("interpreter", _strings),
    "select": ("select", _codes),
    "ignore": ("ignore", _codes),
    "extend-ignore": ("ignore", _codes),
    "severity": ("severity", _severity),
    "exclude": ("exclude", _strings),
    "probe-timeout-seconds": ("probe_timeout_seconds", _timeout),
}

_EDITOR_KEYS = {
    "targetBackends": ("target_backends", _targets),
    "interpreter": ("interpreter", _strings),
    "select": ("select", _codes),
    "ignore": ("ignore", _codes),
    "severity": ("severity", _severity),
    "exclude": ("exclude", _strings),
}

#: Editor keys the server knows but that belong to the client alone.
_CLIENT_ONLY_KEYS = frozenset({"logLevel", "path", "trace", "showNotifications", "enable"})


def parse_pyproject_table(table: Mapping[str, Any], source: str) -> tuple[Layer, list[Problem]]:
    problems: list[Problem] = []
    values: dict[str, Any] = {}
    for key, raw in table.items():
        spec = _PYPROJECT_KEYS.get(key)
        if spec is None:
            problems.append(Problem(source, key, "unknown setting"))
            continue
        attr, parse = spec
        parsed = parse(raw, key, source, problems)
        if parsed is not None:
            values[attr] = parsed
    return Layer(**values), problems


def parse_editor_settings(raw: Any, source: str = "settings") -> tuple[Layer, list[Problem]]:
    """Parse the ``jaxtarget`` section an editor sends (camelCase)."""
    problems: list[Problem] = []
    if raw is None:
        return Layer(), problems
    if not isinstance(raw, Mapping):
        return Layer(), [Problem(source, "jaxtarget", f"expected an object, got {raw!r}")]
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if value is None or key in _CLIENT_ONLY_KEYS:
            continue
        if key == "probe":
            if isinstance(value, Mapping) and "timeoutSeconds" in value:
                t = _timeout(value["timeoutSeconds"], "probe.timeoutSeconds", source, problems)
                if t is not None:
                    values["probe_timeout_seconds"] = t
            elif not isinstance(value, Mapping):
                problems.append(Problem(source, "probe", f"expected an object, got {value!r}"))
            continue
        if key == "probe.timeoutSeconds":
            t = _timeout(value, key, source, problems)
            if t is not None:
                values["probe_timeout_seconds"] = t
            continue
        spec = _EDITOR_KEYS.get(key)
        if spec is None:
            problems.append(Problem(source, key, "unknown setting"))
            continue
        attr, parse = spec
        parsed = parse(value, key, source, problems)
        if parsed is not None:
            values[attr] = parsed
    return Layer(**values), problems


@dataclass(frozen=True)
class ProjectConfig:
    path: Path | None
    root: Path | None
    layer: Layer
    problems: tuple[Problem, ...]


def find_pyproject(start: Path, stop: Path | None = None) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` that has [tool.jaxtarget],
    else the nearest pyproject.toml at all."""
    here = start if start.is_dir() else start.parent
    first: Path | None = None
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            if first is None:
                first = candidate
            try:
                if "jaxtarget" in candidate.read_text(encoding="utf-8", errors="replace"):
                    return candidate
            except OSError:
                pass
        if stop is not None and folder == stop:
            break
    return first


_PROJECT_CACHE: dict[Path, tuple[float, ProjectConfig]] = {}


def load_project(start: Path, stop: Path | None = None) -> ProjectConfig:
    """Read ``[tool.jaxtarget]`` from the nearest pyproject.toml (cached on mtime)."""
    path = find_pyproject(start.resolve(), stop)
    if path is None:
        return ProjectConfig(None, None, Layer(), ())
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return ProjectConfig(None, None, Layer(), ())
    hit = _PROJECT_CACHE.get(path)
    if hit is not None and hit[0] == mtime:
        return hit[1]
    source = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        result = ProjectConfig(path, path.parent, Layer(), (Problem(source, "toml", str(exc)),))
    else:
        table = data.get("tool", {}).get("jaxtarget")
        if table is None:
            result = ProjectConfig(None, path.parent, Layer(), ())
        elif not isinstance(table, Mapping):
            result = ProjectConfig(
                path, path.parent, Layer(), (Problem(source, "tool.jaxtarget", "must be a table"),)
            )
        else:
            layer, problems = parse_pyproject_table(table, f"{source} [tool.jaxtarget]")
            result = ProjectConfig(path, path.parent, layer, tuple(problems))
    _PROJECT_CACHE[path] = (mtime, result)
    return result


def cli_layer(
    targets: str | None, select: str | None, ignore: str | None, python: str | None
) -> tuple[Layer, list[Problem]]:
    problems: list[Problem] = []
    values: dict[str, Any] = {}
    if targets is not None:
        values["target_backends"] = _targets(targets, "--target", "command line", problems)
    if select is not None:
        values["select"] = _codes(select, "--select", "command line", problems)
    if ignore is not None:
        values["ignore"] = _codes(ignore, "--ignore", "command line", problems)
    if python is not None:
        values["interpreter"] = (python,)
    return Layer(**{k: v for k, v in values.items() if v is not None}), problems


def default_wire() -> dict[str, Any]:
    """The defaults in editor (camelCase) form; package.json must agree."""
    d = Settings()
    wire = d.to_wire()
    wire.pop("pyproject")
    return wire


def problems_text(problems: Sequence[Problem]) -> str:
    return "; ".join(str(p) for p in problems)
