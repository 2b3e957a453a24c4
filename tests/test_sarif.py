"""SARIF locations: relative URIs resolved through `originalUriBaseIds`, valid against SARIF 2.1.0."""

from __future__ import annotations

import json
import re
import urllib.parse
import urllib.request
from pathlib import Path

import jsonschema
import yaml

from . import test_cli_claims
from .conftest import ROOT, run_cli
from .test_cli_claims import _sarif_errors

#: the OASIS SARIF 2.1.0 schema validator, shared with the claims tests
sarif_validator = test_cli_claims.sarif_validator

SEND = 'from jax import lax\ny = lax.psend(x, "i", p)\n'


def _locations(doc: dict[str, object]) -> list[dict[str, str]]:
    (run,) = doc["runs"]  # type: ignore[misc]
    found = []
    for result in run["results"]:
        found.append(result["locations"][0]["physicalLocation"]["artifactLocation"])
        for related in result.get("relatedLocations", []):
            found.append(related["physicalLocation"]["artifactLocation"])
    return found


def test_sarif_uris_are_relative_and_resolve_through_original_uri_base_ids(
    tmp_path: Path, sarif_validator: jsonschema.protocols.Validator
) -> None:
    repo = tmp_path / "checkout"
    (repo / "src" / "my dir").mkdir(parents=True)
    (repo / "src" / "my dir" / "ünï.py").write_text(SEND)
    (repo / "src" / "plain.py").write_text(SEND)
    outside = tmp_path / "elsewhere" / "out.py"
    outside.parent.mkdir()
    outside.write_text(SEND)
    out = run_cli("check", "src", str(outside), "--target", "cpu", "--format", "sarif", cwd=repo)
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    assert _sarif_errors(sarif_validator, doc) == []
    (run,) = doc["runs"]
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base == repo.resolve().as_uri() + "/"

    resolved = set()
    for location in _locations(doc):
        if location["uri"].startswith("file:"):
            assert "uriBaseId" not in location  # only the file outside the folder is absolute
            resolved.add(Path(urllib.request.url2pathname(urllib.parse.urlparse(location["uri"]).path)))
            continue
        assert location["uriBaseId"] == "%SRCROOT%"
        assert not location["uri"].startswith("/") and str(tmp_path) not in location["uri"]
        url = urllib.parse.urljoin(base, location["uri"])
        resolved.add(Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path)))
    assert resolved == {
        (repo / "src" / "my dir" / "ünï.py").resolve(),
        (repo / "src" / "plain.py").resolve(),
        outside.resolve(),
    }
    relative = {loc["uri"] for loc in _locations(doc) if "uriBaseId" in loc}
    assert relative == {"src/my%20dir/%C3%BCn%C3%AF.py", "src/plain.py"}


def test_sarif_from_two_checkouts_of_the_same_files_differs_only_in_the_base(
    tmp_path: Path,
) -> None:
    docs = []
    for name in ("one", "two"):
        (tmp_path / name / "pkg").mkdir(parents=True)
        (tmp_path / name / "pkg" / "m.py").write_text(SEND)
        out = run_cli("check", "pkg", "--target", "cpu", "--format", "sarif", cwd=tmp_path / name)
        docs.append(json.loads(out.stdout))
    bases = [d["runs"][0].pop("originalUriBaseIds") for d in docs]
    assert bases[0] != bases[1]
    assert docs[0] == docs[1]  # nothing else names where the checkout is


def test_the_readme_code_scanning_recipe_writes_relative_sarif(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "sarif" in b]
    (workflow,) = blocks
    runs = [step["run"] for step in workflow["steps"] if str(step.get("run", "")).startswith("jaxtarget ")]
    assert runs == ["jaxtarget check --format sarif src/ > jaxtarget.sarif"]
    upload = next(s for s in workflow["steps"] if "upload-sarif" in s.get("uses", ""))
    assert upload["with"]["sarif_file"] == "jaxtarget.sarif" and upload["if"] == "always()"
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text(SEND)
    command = runs[0].replace("jaxtarget ", "", 1).split(">")[0].split()
    out = run_cli(*command, "--target", "cpu", cwd=tmp_path)
    (tmp_path / "jaxtarget.sarif").write_text(out.stdout)
    doc = json.loads((tmp_path / "jaxtarget.sarif").read_text())
    assert {loc["uri"] for loc in _locations(doc)} == {"src/m.py"}
