"""Configuration: every setting declared once, in one table, for the CLI and the server.

Layers, lowest first: built-in defaults, ``[tool.jaxtarget]`` of the nearest
``pyproject.toml``, then editor settings or command-line flags. The ``SETTINGS``
table drives the pyproject and editor parsers, the command-line flags, the wire
format, an engine's identity, the README's table and the package.json check. A
bad value is reported as a ``Problem`` naming its key; the lower layer's value
stays in force.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from . import perfile
from .model import SEVERITIES
from .platforms import TARGET_VALUES
from .rules.registry import ALL_CODES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True)
class Problem:
    source: str
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.key}: {self.message}"


Parser = Callable[[Any, str, str, list[Problem]], Any]

# ---------------------------------------------------------------- value parsers


def _strings(value: Any, key: str, source: str, problems: list[Problem]) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        problems.append(Problem(source, key, f"expected a list of strings, got {value!r}"))
        return None
    return tuple(v.strip() for v in value)


def _one_path(value: Any, key: str, source: str, problems: list[Problem]) -> tuple[str, ...] | None:
    """A command-line interpreter: one path, commas and all."""
    return (str(value),)


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


_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")


def _guard_functions(value: Any, key: str, source: str, problems: list[Problem]) -> tuple[str, ...] | None:
    """``"pkg.mod.has_magma"`` (true only on a GPU) or ``"pkg.mod.on_tpu:tpu"`` (true only there)."""
    items = _strings(value, key, source, problems)
    if items is None:
        return None
    out = []
    for item in items:
        name, _, where = item.partition(":")
        name = name.strip()
        if not _DOTTED.match(name):
            problems.append(
                Problem(source, key, f"expected a dotted function name such as 'pkg.mod.f', got {item!r}")
            )
            return None
        platforms = [p.strip().lower() for p in where.split(",")] if where else ["gpu"]
        bad = [p for p in platforms if p not in TARGET_VALUES or p == "auto"]
        if bad:
            problems.append(Problem(source, key, f"unknown backend {bad[0]!r} in {item!r}"))
            return None
        out.append(f"{name}:{','.join(platforms)}")
    return tuple(out)


def _timeout(value: Any, key: str, source: str, problems: list[Problem]) -> float | None:
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 3600:
        problems.append(Problem(source, key, f"expected seconds between 0 and 3600, got {value!r}"))
        return None
    return float(value)


def _per_file(inner: Parser) -> Parser:
    """A table of glob -> ``inner`` value (per-file-targets, per-file-ignores), in file order."""

    def parse(value: Any, key: str, source: str, problems: list[Problem]) -> perfile.Table | None:
        if not isinstance(value, Mapping):
            problems.append(Problem(source, key, f"expected a table of glob = list, got {value!r}"))
            return None
        entries = [
            (str(glob), inner(raw, f'{key}."{glob}"', source, problems)) for glob, raw in value.items()
        ]
        return tuple((glob, parsed) for glob, parsed in entries if parsed is not None)

    return parse


# ---------------------------------------------------------------- the table


@dataclass(frozen=True)
class Setting:
    """One setting: its name in every layer, its parser, default and documentation."""

    name: str
    #: keys in [tool.jaxtarget]; the first is the documented one, the others aliases
    pyproject: tuple[str, ...]
    #: key in the editor's `jaxtarget` section ("a.b" is nested: {"a": {"b": ...}})
    editor: str | None
    #: command-line flag, and the commands that take it
    cli: str | None
    commands: tuple[str, ...]
    parse: Parser
    default: Any
    type_doc: str
    doc: str
    #: whether the value changes findings (part of an engine's identity)
    analysis: bool
    #: the command-line parser, where it differs from ``parse``
    cli_parse: Parser | None = None


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "target_backends", ("targets", "target-backends"), "targetBackends", "--target", ("check",),
        _targets, ("auto",), "array of `auto`, `cpu`, `cuda`, `rocm`, `tpu`, `gpu`",
        "backends the code must lower on", analysis=True,
    ),
    Setting(
        "interpreter", ("interpreter",), "interpreter", "--python", ("check", "probe"), _strings, (),
        "array of strings",
        "Python whose JAX is analysed and probed (empty: the Python extension's, else the server's)",
        analysis=True, cli_parse=_one_path,
    ),
    Setting(
        "select", ("select",), "select", "--select", ("check",), _codes, (), "array of codes",
        "rules to enable (empty: all)", analysis=True,
    ),
    Setting(
        "ignore", ("ignore", "extend-ignore"), "ignore", "--ignore", ("check",), _codes, (), "array of codes",
        "rules to disable", analysis=True,
    ),
    Setting(
        "severity", ("severity",), "severity", None, (), _severity, {}, "object code → severity",
        "severity per rule", analysis=True,
    ),
    Setting(
        "guard_functions", ("guard-functions",), "guardFunctions", None, (), _guard_functions, (),
        "array of `pkg.mod.func` or `pkg.mod.func:tpu`",
        "functions whose true result means the backend is one of these (default: a GPU), for capability "
        "checks that cannot be read", analysis=True,
    ),
    Setting(
        "exclude", ("exclude",), "exclude", None, (), _strings, (), "array of globs", "files not to check",
        analysis=False,
    ),
    Setting(
        perfile.TARGETS, ("per-file-targets",), None, None, (), _per_file(_targets), (),
        "table glob → targets", "targets for the files a glob covers (the first match wins)", analysis=False,
    ),
    Setting(
        perfile.IGNORES, ("per-file-ignores",), None, None, (), _per_file(_codes), (),
        "table glob → codes", "rules to disable in the files a glob covers (all matches add)", analysis=False,
    ),
    Setting(
        "probe_timeout_seconds", ("probe-timeout-seconds",), "probe.timeoutSeconds", "--timeout", ("probe",),
        _timeout, 60.0, "number", "seconds before the probe is killed", analysis=False,
    ),
)  # fmt: skip

SETTINGS_BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}

#: Settings only the VS Code client reads: (key, type, default, meaning).
CLIENT_SETTINGS: tuple[tuple[str, str, Any, str], ...] = (
    ("logLevel", "`error`, `warning`, `info`, `debug`", "info", "VS Code output channel level (client only)"),
)

#: Editor keys the server knows but that belong to the client alone.
_CLIENT_ONLY_KEYS = frozenset({"logLevel", "path", "trace", "showNotifications", "enable"})
#: The initialization option saying whether the client trusts the workspace (not a setting).
TRUST_KEY = "workspaceTrusted"


def _default(name: str) -> Any:
    return field(default_factory=lambda: SETTINGS_BY_NAME[name].default)


@dataclass(frozen=True)
class Settings:
    """The effective configuration for one file or workspace folder (defaults from ``SETTINGS``)."""

    target_backends: tuple[str, ...] = _default("target_backends")
    interpreter: tuple[str, ...] = _default("interpreter")
    select: tuple[str, ...] = _default("select")
    ignore: tuple[str, ...] = _default("ignore")
    severity: Mapping[str, str] = _default("severity")
    guard_functions: tuple[str, ...] = _default("guard_functions")
    exclude: tuple[str, ...] = _default("exclude")
    #: the per-file entries that cover this file (see perfile.py), already folded into the above
    per_file_targets: tuple[tuple[str, tuple[str, ...]], ...] = _default("per_file_targets")
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = _default("per_file_ignores")
    probe_timeout_seconds: float = _default("probe_timeout_seconds")
    #: where [tool.jaxtarget] came from, if anywhere
    pyproject: str | None = None

    def enabled(self, code: str) -> bool:
        if self.select and not any(code.startswith(s) for s in self.select):
            return False
        return not any(code.startswith(s) for s in self.ignore)

    def analysis_key(self) -> tuple[object, ...]:
        """The values that change findings, hashable: an engine's identity."""
        return tuple(_hashable(getattr(self, s.name)) for s in SETTINGS if s.analysis)

    def to_wire(self) -> dict[str, Any]:
        """camelCase form, as editors send and `showConfiguration` prints."""
        wire: dict[str, Any] = {}
        for s in SETTINGS:
            if s.editor is None:
                continue
            value = getattr(self, s.name)
            value = (
                dict(value)
                if isinstance(value, Mapping)
                else list(value)
                if isinstance(value, tuple)
                else value
            )
            head, _, leaf = s.editor.partition(".")
            if leaf:
                wire.setdefault(head, {})[leaf] = value
            else:
                wire[head] = value
        wire["pyproject"] = self.pyproject
        return wire


def _hashable(value: Any) -> Any:
    return tuple(sorted(value.items())) if isinstance(value, Mapping) else value


assert [f.name for f in fields(Settings)][:-1] == [s.name for s in SETTINGS], "Settings and SETTINGS differ"


class Layer:
    """One source of settings: the values it sets, by setting name (unset: absent)."""

    def __init__(self, **values: Any) -> None:
        unknown = set(values) - set(SETTINGS_BY_NAME)
        if unknown:
            raise TypeError(f"unknown settings: {', '.join(sorted(unknown))}")
        self.values: dict[str, Any] = {k: v for k, v in values.items() if v is not None}

    def __getattr__(self, name: str) -> Any:
        if name in SETTINGS_BY_NAME:
            return self.values.get(name)
        raise AttributeError(name)

    def __repr__(self) -> str:
        return f"Layer({self.values!r})"

    def without(self, name: str) -> Layer:
        """This layer with ``name`` unset."""
        return Layer(**{k: v for k, v in self.values.items() if k != name})


def resolve(*layers: Layer, pyproject: str | None = None) -> Settings:
    values: dict[str, Any] = {}
    for layer in layers:
        values.update(layer.values)
    perfile.apply(values)
    return Settings(**values, pyproject=pyproject)


# ---------------------------------------------------------------- layers from each source


def _parse_items(
    items: Iterable[tuple[str, Any]], keys: Mapping[str, Setting], source: str, problems: list[Problem]
) -> Layer:
    """The layer of (key, raw value) pairs, each parsed by the setting ``keys`` names."""
    values: dict[str, Any] = {}
    for key, raw in items:
        spec = keys.get(key)
        if spec is None:
            problems.append(Problem(source, key, "unknown setting"))
            continue
        parsed = spec.parse(raw, key, source, problems)
        if parsed is not None:
            values[spec.name] = parsed
    return Layer(**values)


def parse_pyproject_table(table: Mapping[str, Any], source: str) -> tuple[Layer, list[Problem]]:
    problems: list[Problem] = []
    keys = {key: s for s in SETTINGS for key in s.pyproject}
    return _parse_items(table.items(), keys, source, problems), problems


def parse_editor_settings(raw: Any, source: str = "settings") -> tuple[Layer, list[Problem]]:
    """Parse the ``jaxtarget`` section an editor sends (camelCase; nested or dotted keys)."""
    problems: list[Problem] = []
    if raw is None:
        return Layer(), problems
    if not isinstance(raw, Mapping):
        return Layer(), [Problem(source, "jaxtarget", f"expected an object, got {raw!r}")]
    flat = {s.editor: s for s in SETTINGS if s.editor}
    nested = {key.partition(".")[0] for key in flat if "." in key}
    items: list[tuple[str, Any]] = []
    for key, value in raw.items():
        if value is None or key in _CLIENT_ONLY_KEYS or key == TRUST_KEY:
            continue
        if key not in nested:
            items.append((key, value))
        elif isinstance(value, Mapping):
            items.extend((f"{key}.{leaf}", v) for leaf, v in value.items() if f"{key}.{leaf}" in flat)
        else:
            problems.append(Problem(source, key, f"expected an object, got {value!r}"))
    return _parse_items(items, flat, source, problems), problems


def cli_layer(flags: Mapping[str, Any]) -> tuple[Layer, list[Problem]]:
    """The layer of command-line flags, given by setting name (None: not given)."""
    problems: list[Problem] = []
    values: dict[str, Any] = {}
    for name, raw in flags.items():
        spec = SETTINGS_BY_NAME[name]
        if raw is None or spec.cli is None:
            continue
        parse = spec.cli_parse or spec.parse
        values[name] = parse(raw, spec.cli, "command line", problems)
    return Layer(**values), problems


def default_wire() -> dict[str, Any]:
    """The defaults in editor (camelCase) form; package.json must agree."""
    wire = Settings().to_wire()
    wire.pop("pyproject")
    return wire


def problems_text(problems: Sequence[Problem]) -> str:
    return "; ".join(str(p) for p in problems)


# ---------------------------------------------------------------- pyproject.toml


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
            if _has_table(candidate):
                return candidate
        if stop is not None and folder == stop:
            break
    return first


def _from(base: Path, value: str) -> str:
    """A relative path in a pyproject.toml means relative to its folder (bare names: PATH)."""
    path = Path(value)
    if path.is_absolute() or value.startswith("~") or ("/" not in value and "\\" not in value):
        return value
    return str(base / path)


def _has_table(path: Path) -> bool:
    """Whether a pyproject.toml has a [tool.jaxtarget] table (one that does not parse counts:
    the error is then reported for it)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if "jaxtarget" not in text:
        return False
    try:
        tool = tomllib.loads(text).get("tool")
    except tomllib.TOMLDecodeError:
        return True
    return isinstance(tool, Mapping) and "jaxtarget" in tool


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
    if hit is None or hit[0] != mtime:
        hit = mtime, _read_project(path)
        _PROJECT_CACHE[path] = hit
    # the per-file tables keep the entries that cover this file (a folder gets none)
    values = perfile.for_file(hit[1].layer.values, start, path.parent)
    return dataclasses.replace(hit[1], layer=Layer(**values))


def _read_project(path: Path) -> ProjectConfig:
    source = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return ProjectConfig(path, path.parent, Layer(), (Problem(source, "toml", str(exc)),))
    table = data.get("tool", {}).get("jaxtarget")
    if table is None:
        return ProjectConfig(None, path.parent, Layer(), ())
    if not isinstance(table, Mapping):
        return ProjectConfig(
            path, path.parent, Layer(), (Problem(source, "tool.jaxtarget", "must be a table"),)
        )
    layer, problems = parse_pyproject_table(table, f"{source} [tool.jaxtarget]")
    if layer.interpreter:
        layer.values["interpreter"] = tuple(_from(path.parent, p) for p in layer.interpreter)
    return ProjectConfig(path, path.parent, layer, tuple(problems))
