"""The effective settings for one file and the layer each came from (`jaxtarget config`).

Built from the one settings table (``config.SETTINGS``): every setting, its value and
where it was set — the built-in default, the ``pyproject.toml`` that applies, or the
command line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import SETTINGS, Layer, Problem, Settings, load_project, resolve

DEFAULT = "default"
COMMAND_LINE = "command line"


@dataclass(frozen=True)
class Row:
    key: str
    value: Any
    source: str
    flag: str | None
    #: the key in the editor's `jaxtarget` section (None: pyproject.toml only)
    editor: str | None = None


@dataclass(frozen=True)
class Effective:
    path: Path
    pyproject: str | None
    rows: tuple[Row, ...]
    problems: tuple[Problem, ...]


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    return list(value) if isinstance(value, tuple) else value


def effective(path: Path, overrides: Layer) -> Effective:
    """The settings ``jaxtarget check`` applies to ``path`` with these command-line flags."""
    project = load_project(path)
    pyproject = str(project.path) if project.path else None
    layers: list[tuple[str, Layer]] = [
        (pyproject or "pyproject.toml", project.layer),
        (COMMAND_LINE, overrides),
    ]
    settings = resolve(project.layer, overrides, pyproject=pyproject)
    return Effective(path, pyproject, rows(settings, layers), project.problems)


def rows(settings: Settings, layers: Sequence[tuple[str, Layer]]) -> tuple[Row, ...]:
    """Each setting's value in ``settings`` and the label of the last of ``layers`` that set it."""
    out = []
    for s in SETTINGS:
        source = DEFAULT
        for label, layer in layers:
            if s.name in layer.values:
                source = label
        out.append(Row(s.pyproject[0], _plain(getattr(settings, s.name)), source, s.cli, s.editor))
    return tuple(out)


def render_text(result: Effective) -> str:
    lines = [f"settings for {result.path}", f"pyproject.toml: {result.pyproject or 'none applies'}", ""]
    width = max(len(r.key) for r in result.rows)
    shown = [json.dumps(r.value, ensure_ascii=False) for r in result.rows]
    value_width = max(len(v) for v in shown)
    for row, value in zip(result.rows, shown, strict=True):
        lines.append(f"{row.key:<{width}}  {value:<{value_width}}  {row.source}")
    lines.extend(f"warning: {p}; the default applies" for p in result.problems)
    return "\n".join(lines) + "\n"


def render_json(result: Effective) -> str:
    data = {
        "path": str(result.path),
        "pyproject": result.pyproject,
        "settings": {r.key: {"value": r.value, "source": r.source, "flag": r.flag} for r in result.rows},
        "problems": [str(p) for p in result.problems],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
