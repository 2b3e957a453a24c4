"""Each settings layer parses exactly what it should, and the layers resolve lowest first.

The value parsers, the editor and command-line layers, ``resolve``, the pieces of a
``Settings`` (rule selection, an engine's identity, the wire form) and the search for
the ``pyproject.toml`` that applies, with real files in temporary folders.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from jaxtarget.config import (
    SETTINGS,
    SETTINGS_BY_NAME,
    Layer,
    Problem,
    Settings,
    cli_layer,
    default_wire,
    find_pyproject,
    load_project,
    parse_editor_settings,
    parse_pyproject_table,
    problems_text,
    resolve,
)

from .conftest import run_cli


def _table(table: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    layer, problems = parse_pyproject_table(table, "p")
    assert all(p.source == "p" for p in problems)
    return layer.values, [(p.key, p.message) for p in problems]


# ---------------------------------------------------------------- value parsers


def test_lists_of_strings() -> None:
    assert _table({"exclude": ["a/", " b "]}) == ({"exclude": ("a/", "b")}, [])
    assert _table({"exclude": "a/, b,,  "}) == ({"exclude": ("a/", "b")}, [])
    assert _table({"exclude": []}) == ({"exclude": ()}, [])
    assert _table({"exclude": ["a", 1]}) == ({}, [("exclude", "expected a list of strings, got ['a', 1]")])
    assert _table({"exclude": 3}) == ({}, [("exclude", "expected a list of strings, got 3")])


def test_rule_codes() -> None:
    assert _table({"select": ["all"], "ignore": ["jt00", "JT003"]}) == (
        {"select": ("JT",), "ignore": ("JT00", "JT003")},
        [],
    )
    assert _table({"select": "JT, jt001"}) == ({"select": ("JT", "JT001")}, [])
    # a prefix of no code, and a code of another tool, are refused whole
    assert _table({"select": ["JT001", "JT9"]}) == ({}, [("select", "unknown rule code 'JT9'")])
    assert _table({"ignore": ["E501"]}) == ({}, [("ignore", "unknown rule code 'E501'")])
    assert _table({"ignore": ["001"]}) == ({}, [("ignore", "unknown rule code '001'")])
    assert _table({"ignore": [3]}) == ({}, [("ignore", "expected a list of strings, got [3]")])


def test_targets() -> None:
    assert _table({"targets": ["CPU", "tpu"]}) == ({"target_backends": ("cpu", "tpu")}, [])
    assert _table({"target-backends": "gpu"}) == ({"target_backends": ("gpu",)}, [])
    assert _table({"targets": ["cpu", "metal", "x"]}) == (
        {},
        [("targets", "unknown backend 'metal'; expected cpu, cuda, rocm, tpu, gpu, auto")],
    )
    assert _table({"targets": []}) == ({}, [("targets", "must name at least one backend")])
    assert _table({"targets": 3}) == ({}, [("targets", "expected a list of strings, got 3")])


def test_severity() -> None:
    assert _table({"severity": {"jt001": "HINT", "JT003": "error"}}) == (
        {"severity": {"JT001": "hint", "JT003": "error"}},
        [],
    )
    # a bad entry is named and left out; the good ones stay
    assert _table({"severity": {"JT999": "hint", "JT001": "loud", "JT003": "warning", "JT002": 1}}) == (
        {"severity": {"JT003": "warning"}},
        [
            ("severity.JT999", "unknown rule code"),
            ("severity.JT001", "expected one of error, warning, information, hint"),
            ("severity.JT002", "expected one of error, warning, information, hint"),
        ],
    )
    assert _table({"severity": ["JT001"]}) == (
        {},
        [("severity", "expected a table of code = severity, got ['JT001']")],
    )


def test_guard_functions() -> None:
    assert _table({"guard-functions": ["a.b.has_magma", " m.on_tpu : TPU , cpu", "x.y:cuda"]}) == (
        {"guard_functions": ("a.b.has_magma:gpu", "m.on_tpu:tpu,cpu", "x.y:cuda")},
        [],
    )
    assert _table({"guard-functions": ["a.b", "has_magma"]}) == (
        {},
        [("guard-functions", "expected a dotted function name such as 'pkg.mod.f', got 'has_magma'")],
    )
    assert _table({"guard-functions": ["a.b:auto"]}) == (
        {},
        [("guard-functions", "unknown backend 'auto' in 'a.b:auto'")],
    )
    assert _table({"guard-functions": ["a.b:tpu,quantum"]}) == (
        {},
        [("guard-functions", "unknown backend 'quantum' in 'a.b:tpu,quantum'")],
    )
    assert _table({"guard-functions": ["a.b:metal,quantum"]}) == (
        {},
        [("guard-functions", "unknown backend 'metal' in 'a.b:metal,quantum'")],
    )
    assert _table({"guard-functions": 1}) == ({}, [("guard-functions", "expected a list of strings, got 1")])


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [(0.5, 0.5), (3600, 3600.0), ("12", 12.0), ("1e1", 10.0), (1, 1.0)],
)
def test_timeouts_that_are_taken(raw: Any, parsed: float) -> None:
    values, problems = _table({"probe-timeout-seconds": raw})
    assert problems == []
    assert values == {"probe_timeout_seconds": parsed}
    assert type(values["probe_timeout_seconds"]) is float


@pytest.mark.parametrize("raw", [0, -1, 3600.5, 7200, True, "soon", [], None])
def test_timeouts_that_are_refused(raw: Any) -> None:
    assert _table({"probe-timeout-seconds": raw}) == (
        {},
        [("probe-timeout-seconds", f"expected seconds between 0 and 3600, got {raw!r}")],
    )


def test_per_file_tables_keep_their_good_entries_in_file_order() -> None:
    values, problems = _table(
        {
            "per-file-targets": {"b/**": ["TPU"], "a/*.py": ["metal"], "c": "cpu"},
            "per-file-ignores": {"x.py": ["jt003"], "y.py": ["nope"]},
        }
    )
    assert values == {
        "per_file_targets": (("b/**", ("tpu",)), ("c", ("cpu",))),
        "per_file_ignores": (("x.py", ("JT003",)),),
    }
    assert problems == [
        ('per-file-targets."a/*.py"', "unknown backend 'metal'; expected cpu, cuda, rocm, tpu, gpu, auto"),
        ('per-file-ignores."y.py"', "unknown rule code 'nope'"),
    ]
    assert _table({"per-file-targets": ["a"]}) == (
        {},
        [("per-file-targets", "expected a table of glob = list, got ['a']")],
    )


def test_an_alias_and_an_unknown_key() -> None:
    assert _table({"extend-ignore": ["JT003"], "tragets": ["cpu"]}) == (
        {"ignore": ("JT003",)},
        [("tragets", "unknown setting")],
    )


# ---------------------------------------------------------------- editor and command line


def test_editor_settings_nested_and_client_only() -> None:
    layer, problems = parse_editor_settings(
        {
            "targetBackends": ["tpu"],
            "probe": {"timeoutSeconds": 5, "other": 1},
            "select": None,
            "logLevel": "debug",
            "trace": {"server": "verbose"},
            "enable": True,
            "workspaceTrusted": False,
            "guardFunctions": ["m.f:tpu"],
        }
    )
    assert problems == []
    assert layer.values == {
        "target_backends": ("tpu",),
        "probe_timeout_seconds": 5.0,
        "guard_functions": ("m.f:tpu",),
    }


def test_editor_settings_that_are_not_objects() -> None:
    assert parse_editor_settings(None)[0].values == {}
    assert parse_editor_settings(None)[1] == []
    layer, problems = parse_editor_settings(["cpu"], "folder /w")
    assert layer.values == {}
    assert problems == [Problem("folder /w", "jaxtarget", "expected an object, got ['cpu']")]
    layer, problems = parse_editor_settings({"probe": 5, "ignore": ["JT003"]})
    assert layer.values == {"ignore": ("JT003",)}
    assert problems == [Problem("settings", "probe", "expected an object, got 5")]
    # pyproject.toml spellings are not editor keys
    _, problems = parse_editor_settings({"target-backends": ["cpu"], "perFileTargets": {}})
    assert [(p.key, p.message) for p in problems] == [
        ("target-backends", "unknown setting"),
        ("perFileTargets", "unknown setting"),
    ]


def test_command_line_layer() -> None:
    layer, problems = cli_layer(
        {
            "target_backends": "cpu,tpu",
            "interpreter": "/opt/a,b/python",
            "select": None,
            "probe_timeout_seconds": "30",
            "severity": {"JT001": "hint"},  # no flag: ignored
        }
    )
    assert problems == []
    assert layer.values == {
        "target_backends": ("cpu", "tpu"),
        "interpreter": ("/opt/a,b/python",),  # one path, commas and all
        "probe_timeout_seconds": 30.0,
    }
    layer, problems = cli_layer({"target_backends": "metal", "ignore": "JT003"})
    assert layer.values == {"ignore": ("JT003",)}
    assert problems == [
        Problem(
            "command line", "--target", "unknown backend 'metal'; expected cpu, cuda, rocm, tpu, gpu, auto"
        )
    ]
    assert problems_text([*problems, Problem("p", "k", "m")]) == (
        "command line: --target: unknown backend 'metal'; expected cpu, cuda, rocm, tpu, gpu, auto; p: k: m"
    )


# ---------------------------------------------------------------- layers and settings


def test_layers_resolve_lowest_first_and_unset_values_fall_through() -> None:
    low = Layer(target_backends=("tpu",), ignore=("JT003",), select=None)
    high = Layer(target_backends=("cpu",), probe_timeout_seconds=5.0)
    assert low.values == {"target_backends": ("tpu",), "ignore": ("JT003",)}
    assert low.select is None and low.target_backends == ("tpu",)
    settings = resolve(low, high, pyproject="/p/pyproject.toml")
    assert settings == Settings(
        target_backends=("cpu",), ignore=("JT003",), probe_timeout_seconds=5.0, pyproject="/p/pyproject.toml"
    )
    assert resolve(high, low).target_backends == ("tpu",)
    assert resolve() == Settings()
    assert low.without("ignore").values == {"target_backends": ("tpu",)}
    assert low.values == {"target_backends": ("tpu",), "ignore": ("JT003",)}
    assert repr(low.without("target_backends")) == "Layer({'ignore': ('JT003',)})"
    with pytest.raises(TypeError, match="unknown settings: nope, zz"):
        Layer(zz=1, nope=2)
    with pytest.raises(AttributeError):
        _ = low.nope


def test_per_file_entries_apply_when_resolved() -> None:
    settings = resolve(
        Layer(target_backends=("cpu",), ignore=("JT001",)),
        Layer(per_file_targets=(("g/**", ("tpu",)),), per_file_ignores=(("g/**", ("JT003",)),)),
    )
    assert settings.target_backends == ("tpu",)
    assert settings.ignore == ("JT001", "JT003")


def test_the_defaults() -> None:
    s = Settings()
    assert (s.target_backends, s.interpreter, s.select, s.ignore, s.severity) == (("auto",), (), (), (), {})
    assert (s.guard_functions, s.exclude, s.per_file_targets, s.per_file_ignores) == ((), (), (), ())
    assert (s.probe_timeout_seconds, s.pyproject) == (60.0, None)


@pytest.mark.parametrize(
    ("select", "ignore", "enabled"),
    [
        ((), (), ["JT001", "JT002", "JT003"]),
        (("JT",), (), ["JT001", "JT002", "JT003"]),
        (("JT001", "JT003"), (), ["JT001", "JT003"]),
        ((), ("JT00",), []),
        ((), ("JT002",), ["JT001", "JT003"]),
        (("JT00",), ("JT001",), ["JT002", "JT003"]),
    ],
)
def test_rule_selection(select: tuple[str, ...], ignore: tuple[str, ...], enabled: list[str]) -> None:
    settings = Settings(select=select, ignore=ignore)
    assert [c for c in ("JT001", "JT002", "JT003") if settings.enabled(c)] == enabled
    assert {settings.enabled(c) for c in ("JT001", "JT002", "JT003")} <= {True, False}


def test_an_engine_identity_is_the_settings_that_change_findings() -> None:
    base = Settings()
    assert base.analysis_key() == (("auto",), (), (), (), (), ())
    assert Settings(severity={"JT003": "hint", "JT001": "error"}).analysis_key()[4] == (
        ("JT001", "error"),
        ("JT003", "hint"),
    )
    hash(Settings(severity={"JT003": "hint"}).analysis_key())
    changed = {
        name: Settings(**{name: value}).analysis_key() != base.analysis_key()
        for name, value in {
            "target_backends": ("tpu",),
            "interpreter": ("/p",),
            "select": ("JT001",),
            "ignore": ("JT001",),
            "severity": {"JT001": "hint"},
            "guard_functions": ("a.b:gpu",),
            "exclude": ("x",),
            "per_file_targets": (("x", ("tpu",)),),
            "per_file_ignores": (("x", ("JT001",)),),
            "probe_timeout_seconds": 5.0,
        }.items()
    }
    assert changed == {
        "target_backends": True,
        "interpreter": True,
        "select": True,
        "ignore": True,
        "severity": True,
        "guard_functions": True,
        "exclude": False,
        "per_file_targets": False,
        "per_file_ignores": False,
        "probe_timeout_seconds": False,
    }
    assert changed == {s.name: s.analysis for s in SETTINGS}


def test_the_wire_form() -> None:
    settings = Settings(
        target_backends=("tpu", "cpu"),
        severity={"JT001": "hint"},
        probe_timeout_seconds=5.0,
        per_file_targets=(("g", ("tpu",)),),
        pyproject="/p/pyproject.toml",
    )
    assert settings.to_wire() == {
        "targetBackends": ["tpu", "cpu"],
        "interpreter": [],
        "select": [],
        "ignore": [],
        "severity": {"JT001": "hint"},
        "guardFunctions": [],
        "exclude": [],
        "probe": {"timeoutSeconds": 5.0},
        "pyproject": "/p/pyproject.toml",
    }
    wire = default_wire()
    assert "pyproject" not in wire
    assert wire["targetBackends"] == ["auto"] and wire["probe"] == {"timeoutSeconds": 60.0}
    # what goes out on the wire comes back as the same settings
    layer, problems = parse_editor_settings(settings.to_wire())
    assert problems == [Problem("settings", "pyproject", "unknown setting")]
    assert dataclasses.replace(resolve(layer), pyproject="/p/pyproject.toml") == dataclasses.replace(
        settings, per_file_targets=()
    )


def test_the_settings_tree_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Settings().select = ("JT001",)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        SETTINGS_BY_NAME["select"].default = ("JT",)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        load_project(Path.cwd()).problems = ()  # type: ignore[misc]
    problem = Problem("s", "k", "m")
    assert {problem, Problem("s", "k", "m")} == {problem}
    assert str(problem) == "s: k: m"


# ---------------------------------------------------------------- pyproject.toml


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_nearest_pyproject_with_a_table_wins_else_the_nearest_at_all(tmp_path: Path) -> None:
    top = _write(tmp_path / "pyproject.toml", '[tool.jaxtarget]\ntargets = ["tpu"]\n')
    mid = _write(tmp_path / "ws" / "pyproject.toml", '[project]\nname = "jaxtarget-demo"\n')
    file = _write(tmp_path / "ws" / "pkg" / "a.py", "x = 1\n")
    # a file and its folder start the same search
    assert find_pyproject(file) == top
    assert find_pyproject(file.parent) == top
    # stopping at the workspace folder (the editor's search): the nearest pyproject.toml there
    assert find_pyproject(file, stop=tmp_path / "ws") == mid
    assert find_pyproject(file, stop=tmp_path / "ws" / "pkg") is None
    assert find_pyproject(file, stop=tmp_path) == top
    mid.write_text("[tool.jaxtarget]\n")
    assert find_pyproject(file) == mid


def test_a_pyproject_that_does_not_parse_counts_as_having_the_table(tmp_path: Path) -> None:
    top = _write(tmp_path / "pyproject.toml", "[tool.jaxtarget]\n")
    bad = _write(tmp_path / "a" / "pyproject.toml", "[tool.jaxtarget\n")
    mention = _write(tmp_path / "a" / "b" / "pyproject.toml", '[tool.other]\nnote = "jaxtarget"\n')
    file = _write(tmp_path / "a" / "b" / "c.py", "")
    assert find_pyproject(file) == bad
    project = load_project(file)
    assert project.path == bad and project.root == bad.parent and project.layer.values == {}
    assert [(p.source, p.key) for p in project.problems] == [(str(bad), "toml")]
    bad.write_text('[tool]\njaxtarget = "x"\n')
    project = load_project(file)
    assert project.path == bad
    assert project.problems == (Problem(str(bad), "tool.jaxtarget", "must be a table"),)
    bad.unlink()
    assert find_pyproject(file) == top
    assert mention.is_file()


@pytest.mark.skipif(not Path("/proc/self/mem").is_file(), reason="needs a file that cannot be read")
def test_a_pyproject_that_cannot_be_read_is_passed_over(tmp_path: Path) -> None:
    top = _write(tmp_path / "pyproject.toml", "[tool.jaxtarget]\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "pyproject.toml").symlink_to("/proc/self/mem")  # a file whose reading fails
    file = _write(tmp_path / "a" / "m.py", "")
    assert find_pyproject(file) == top


def test_a_pyproject_without_the_table(tmp_path: Path) -> None:
    mid = _write(tmp_path / "pyproject.toml", '[project]\nname = "demo"\n')
    file = _write(tmp_path / "a.py", "")
    assert find_pyproject(file, stop=tmp_path) == mid
    project = load_project(file, stop=tmp_path)
    assert (project.path, project.root, project.layer.values, project.problems) == (None, tmp_path, {}, ())
    assert load_project(tmp_path / "nowhere" / "b.py", stop=tmp_path).path is None


def test_no_pyproject_at_all(tmp_path: Path) -> None:
    file = _write(tmp_path / "a.py", "")
    assert find_pyproject(file, stop=tmp_path) is None
    project = load_project(file, stop=tmp_path)
    assert (project.path, project.root, project.layer.values, project.problems) == (None, None, {}, ())


def test_project_settings_are_read_with_paths_from_their_folder(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "pyproject.toml",
        "[tool.jaxtarget]\n"
        'targets = ["tpu"]\n'
        'interpreter = [".venv/bin/python", "python3", "~/py/bin/python", "/abs/python", "sub\\\\py"]\n'
        'select = ["JT9"]\n'
        'per-file-targets = {"gpu/**" = ["cuda"], "other/*" = ["cpu"]}\n'
        'per-file-ignores = {"*.py" = ["JT003"]}\n',
    )
    file = _write(tmp_path / "gpu" / "k.py", "")
    project = load_project(file)
    assert (project.path, project.root) == (path, tmp_path)
    assert project.layer.values == {
        "target_backends": ("tpu",),
        "interpreter": (
            str(tmp_path / ".venv/bin/python"),
            "python3",
            "~/py/bin/python",
            "/abs/python",
            str(tmp_path / "sub\\py"),
        ),
        "per_file_targets": (("gpu/**", ("cuda",)),),
        "per_file_ignores": (("*.py", ("JT003",)),),
    }
    assert project.problems == (Problem(f"{path} [tool.jaxtarget]", "select", "unknown rule code 'JT9'"),)
    # a folder is covered by no per-file entry
    assert load_project(tmp_path).layer.values["per_file_targets"] == ()


def test_project_settings_are_read_again_when_the_file_changes(tmp_path: Path) -> None:
    path = _write(tmp_path / "pyproject.toml", '[tool.jaxtarget]\ntargets = ["tpu"]\n')
    file = _write(tmp_path / "a.py", "")
    first = load_project(file)
    assert first.layer.values == {"target_backends": ("tpu",)}
    # read once: the same parsed values while the file is unchanged
    again = load_project(file)
    assert (again.path, again.problems) == (first.path, first.problems)
    assert again.layer.values["target_backends"] is first.layer.values["target_backends"]
    path.write_text('[tool.jaxtarget]\ntargets = ["cuda"]\n')
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    assert load_project(file).layer.values == {"target_backends": ("cuda",)}


def _config(path: Path, cwd: Path) -> dict[str, Any]:
    out = run_cli("config", str(path), "--format", "json", cwd=cwd)
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_the_cli_searches_past_a_pyproject_without_the_table(tmp_path: Path) -> None:
    # the command line has no workspace folder: the search goes on up to the table above
    top = _write(tmp_path / "pyproject.toml", '[tool.jaxtarget]\ntargets = ["tpu"]\n')
    _write(tmp_path / "ws" / "pyproject.toml", '[project]\nname = "demo"\n')
    file = _write(tmp_path / "ws" / "pkg" / "a.py", "x = 1\n")
    result = _config(file, tmp_path / "ws")
    assert result["pyproject"] == str(top)
    assert result["settings"]["targets"] == {"value": ["tpu"], "source": str(top), "flag": "--target"}
