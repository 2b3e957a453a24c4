"""A JSON schema for `[tool.jaxtarget]` in pyproject.toml, generated from the settings table.

Each setting's keys (the documented one and its aliases), type, default and meaning come
from ``config.SETTINGS``; the value's shape comes from the setting's parser. The schema is
shipped in the package (``pyproject.schema.json``, regenerated with ``python -m
jaxtarget.schema``) and contributed by the VS Code extension to Even Better TOML, which
reads JSON Schema draft 4.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from typing import Any

from . import config
from .model import SEVERITIES
from .platforms import TARGET_VALUES
from .rules.registry import ALL_CODES

FILENAME = "pyproject.schema.json"
SCHEMA_ID = "https://github.com/jaxtarget/jaxtarget/raw/main/server/jaxtarget/pyproject.schema.json"

_PLATFORMS = "|".join(t for t in TARGET_VALUES if t != "auto")


def _list(item: dict[str, Any]) -> dict[str, Any]:
    """An array of ``item``, or the same as one comma-separated string (the parsers take both)."""
    return {"anyOf": [{"type": "array", "items": item}, {"type": "string"}]}


def _code() -> dict[str, Any]:
    """A code, or a prefix of codes (``JT``, ``ALL``): the codes offered, prefixes accepted."""
    prefix = next(iter(ALL_CODES)).rstrip("0123456789")  # every code is this prefix and digits
    digits = max(len(code) for code in ALL_CODES) - len(prefix)
    either = "".join(f"[{c.upper()}{c.lower()}]" for c in prefix)
    pattern = f"^([Aa][Ll][Ll]|{either}[0-9]{{0,{digits}}})$"
    return {"anyOf": [{"enum": [prefix, *sorted(ALL_CODES)]}, {"type": "string", "pattern": pattern}]}


def _shape(parse: config.Parser) -> dict[str, Any]:
    """The JSON schema of the values a parser accepts."""
    if parse is config._targets:
        return _list({"type": "string", "enum": list(TARGET_VALUES)})
    if parse is config._codes:
        return _list(_code())
    if parse is config._strings:
        return _list({"type": "string"})
    if parse is config._severity:
        return {
            "type": "object",
            "properties": {code: {"type": "string", "enum": list(SEVERITIES)} for code in sorted(ALL_CODES)},
            "additionalProperties": False,
        }
    if parse is config._guard_functions:
        pattern = rf"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+(:\s*({_PLATFORMS})(\s*,\s*({_PLATFORMS}))*)?$"
        return _list({"type": "string", "pattern": pattern})
    if parse is config._timeout:
        return {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 3600}
    inner = _per_file_inner(parse)
    if inner is not None:
        return {"type": "object", "additionalProperties": _shape(inner)}
    raise ValueError(f"no JSON schema for the parser {parse!r}")


def _per_file_inner(parse: config.Parser) -> config.Parser | None:
    """The value parser of a per-file table (``config._per_file(inner)``), if ``parse`` is one."""
    if getattr(parse, "__qualname__", "") != config._per_file.__qualname__ + ".<locals>.parse":
        return None
    cells = [c.cell_contents for c in parse.__closure__ or ()]
    return next((c for c in cells if callable(c)), None)


def _default(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def table_schema() -> dict[str, Any]:
    """The schema of the `[tool.jaxtarget]` table itself."""
    properties: dict[str, Any] = {}
    for s in config.SETTINGS:
        documented, *aliases = s.pyproject
        shape = _shape(s.parse)
        properties[documented] = {
            **shape,
            "description": f"{s.doc[0].upper()}{s.doc[1:]} ({s.type_doc}).",
            "default": _default(s.default),
        }
        for alias in aliases:
            properties[alias] = {**shape, "description": f"Another name for `{documented}`."}
    return {"type": "object", "properties": properties, "additionalProperties": False}


def pyproject_schema() -> dict[str, Any]:
    """A schema for a whole pyproject.toml that constrains only `[tool.jaxtarget]`."""
    return {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "id": SCHEMA_ID,
        "title": "jaxtarget settings in pyproject.toml",
        "type": "object",
        "properties": {
            "tool": {
                "type": "object",
                "properties": {"jaxtarget": {"$ref": "#/definitions/jaxtarget"}},
            }
        },
        "definitions": {"jaxtarget": table_schema()},
    }


def render() -> str:
    return json.dumps(pyproject_schema(), indent=2, ensure_ascii=False) + "\n"


def shipped() -> str:
    """The schema file in the installed package."""
    return resources.files("jaxtarget").joinpath(FILENAME).read_text(encoding="utf-8")


if __name__ == "__main__":
    sys.stdout.write(render())
