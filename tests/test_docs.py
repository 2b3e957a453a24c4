"""Docs generated from the catalog, and the README's sample output, match the code."""

from __future__ import annotations

import re

from jaxtarget.docs import render_rules_doc, render_rules_markdown, render_settings_markdown
from jaxtarget.rules.registry import RULES

from .conftest import ROOT, run_cli

README = (ROOT / "README.md").read_text()


def test_readme_rule_table_is_generated_from_the_catalog() -> None:
    table = README.split("<!-- rules:start -->\n", 1)[1].split("<!-- rules:end -->", 1)[0]
    assert table == render_rules_markdown()


def test_readme_settings_table_is_generated_from_the_settings_table() -> None:
    table = README.split("<!-- settings:start -->\n", 1)[1].split("<!-- settings:end -->", 1)[0]
    assert table == render_settings_markdown()


def test_rules_doc_is_generated_from_the_catalog() -> None:
    assert (ROOT / "docs" / "rules.md").read_text() == render_rules_doc()


def test_rule_urls_point_at_headings_in_the_rules_doc() -> None:
    doc = (ROOT / "docs" / "rules.md").read_text()
    headings = re.findall(r"^## (JT\d+) (\S+)$", doc, re.M)
    assert [c for c, _ in headings] == [r.code for r in RULES]
    for (code, name), rule in zip(headings, RULES, strict=True):
        # GitHub's heading anchor: lower case, spaces to dashes
        anchor = re.sub(r"[^a-z0-9 -]", "", f"{code} {name}".lower()).replace(" ", "-")
        assert rule.url.endswith("docs/rules.md#" + anchor)


def test_readme_sample_output_is_what_check_prints() -> None:
    sample = README.split("```text\n", 1)[1].split("```", 1)[0]
    out = run_cli("check", "examples/", cwd=ROOT)
    assert out.stdout == sample
