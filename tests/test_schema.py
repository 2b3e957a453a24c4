"""The JSON schema for `[tool.jaxtarget]`: generated from the settings table, shipped in the
package, accepting the README's example and what the parsers accept, rejecting what they refuse."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
import tomllib

from jaxtarget import config, schema

from .conftest import ROOT


def _validator() -> jsonschema.Draft4Validator:
    doc = json.loads(schema.shipped())
    jsonschema.Draft4Validator.check_schema(doc)  # Even Better TOML (taplo) reads draft 4
    return jsonschema.Draft4Validator(doc)


def _errors(table: dict[str, Any]) -> list[str]:
    return [e.message for e in _validator().iter_errors({"tool": {"jaxtarget": table}})]


def test_the_shipped_schema_is_the_one_the_settings_table_generates() -> None:
    assert schema.shipped() == schema.render(), (
        "regenerate: python -m jaxtarget.schema > server/jaxtarget/pyproject.schema.json"
    )


def test_every_pyproject_key_of_the_table_and_no_other_is_in_the_schema() -> None:
    table = json.loads(schema.shipped())["definitions"]["jaxtarget"]
    keys = {key for s in config.SETTINGS for key in s.pyproject}
    assert set(table["properties"]) == keys
    assert table["additionalProperties"] is False
    for s in config.SETTINGS:
        described = table["properties"][s.pyproject[0]]
        assert s.doc[1:] in described["description"] and s.type_doc in described["description"]


def test_the_readme_configuration_example_validates() -> None:
    blocks = re.findall(r"```toml\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    example = next(b for b in blocks if "[tool.jaxtarget]" in b and "targets" in b)
    document = tomllib.loads(example)
    _validator().validate(document)
    assert set(document["tool"]["jaxtarget"]) >= {
        "targets",
        "severity",
        "per-file-targets",
        "per-file-ignores",
    }


GOOD: list[dict[str, Any]] = [
    {"targets": "cpu,gpu"},
    {"target-backends": ["tpu"]},
    {"select": ["ALL"], "ignore": ["JT00"], "extend-ignore": ["jt003"]},
    {"guard-functions": ["mylib.utils.has_magma", "mylib.tpu.present:tpu", "a.b:cuda,rocm"]},
    {"probe-timeout-seconds": 0.5, "interpreter": ".venv/bin/python", "exclude": ["gen/"]},
    {"per-file-targets": {"gpu/**": ["cuda"]}, "per-file-ignores": {"legacy/*.py": ["JT003"]}},
]

BAD: list[dict[str, Any]] = [
    {"targets": ["gpuu"]},
    {"targets": 3},
    {"select": ["E501"]},
    {"severity": {"JT003": "loud"}},
    {"severity": {"JT999": "hint"}},
    {"guard-functions": ["has_magma"]},
    {"guard-functions": ["a.b:quantum"]},
    {"probe-timeout-seconds": 0},
    {"probe-timeout-seconds": 7200},
    {"per-file-targets": {"gpu/**": ["cudaa"]}},
    {"per-file-ignores": {"x.py": ["nope"]}},
]


@pytest.mark.parametrize("table", GOOD, ids=lambda t: ",".join(t))
def test_what_the_parsers_accept_validates(table: dict[str, Any]) -> None:
    _, problems = config.parse_pyproject_table(table, "test")
    assert problems == []
    assert _errors(table) == []


@pytest.mark.parametrize("table", BAD, ids=lambda t: json.dumps(t))
def test_what_the_parsers_refuse_the_schema_refuses(table: dict[str, Any]) -> None:
    _, problems = config.parse_pyproject_table(table, "test")
    assert problems, "the parser accepts it"
    assert _errors(table)


def test_an_unknown_key_is_refused_like_the_parser_does() -> None:
    _, problems = config.parse_pyproject_table({"tragets": ["cpu"]}, "test")
    assert [p.message for p in problems] == ["unknown setting"]
    assert any("tragets" in e for e in _errors({"tragets": ["cpu"]}))
