"""The resolved-name store: a later start answers from disk what jedi answered before, and
anything the answers depend on (installed packages, jax, the interpreter) starts it afresh."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import jedi
import pytest

from jaxtarget.environment import load_environment
from jaxtarget.rules.registry import WANTED
from jaxtarget.semantics.jedi_resolver import JediResolver
from jaxtarget.semantics.name_store import KEEP, NameStore, cache_home
from jaxtarget.semantics.resolver import Binding, Query

from .conftest import run_cli

WANTED_NAMES = WANTED.all
LAX = Binding("from", "jax", "lax", None)
QUERIES = [
    Query(LAX, "lax.psend"),  # a wanted name
    Query(LAX, "lax.add"),  # a jax name that is not wanted
    Query(Binding("import-as", "jax.numpy", None, "jnp"), "jnp.linalg.eig"),
    Query(Binding("import", "functools", None, None), "functools.partial"),  # the standard library
]
EXPECTED = ["jax.lax.psend", None, "jax.numpy.linalg.eig", "functools.partial"]


def fresh_resolver(file: Path) -> JediResolver:
    """A resolver of this interpreter's environment with an empty memory, over the store in ``file``."""
    env = load_environment(None)
    assert isinstance(env.resolver, JediResolver)
    return JediResolver(env.resolver.environment, NameStore(file, env.resolver.store.modules))  # type: ignore[union-attr]


def no_jedi(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("jedi was asked")

    monkeypatch.setattr(jedi, "Script", refuse)


def test_a_later_resolver_answers_from_the_store_without_jedi(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "names.json"
    first = fresh_resolver(file)
    assert first.resolve(QUERIES, WANTED_NAMES) == EXPECTED
    stored = json.loads(file.read_text())
    assert sorted(stored.values(), key=str) == sorted(EXPECTED, key=str)
    no_jedi(monkeypatch)
    assert fresh_resolver(file).resolve(QUERIES, WANTED_NAMES) == EXPECTED


def test_queries_the_project_can_change_are_not_stored(tmp_path: Path) -> None:
    file = tmp_path / "names.json"
    resolver = fresh_resolver(file)
    relative = Query(Binding("from", "jax", "lax", None, level=1), "lax.psend")  # from .jax import lax
    project = Query(Binding("from", "my_project_utils", "lax", None), "lax.psend")
    # a project package whose submodule shares an installed package's name is the project's
    nested = Query(Binding("from", "my_project_utils.numpy", "lax", None), "lax.psend")
    resolver.resolve([relative, project, nested, QUERIES[0]], WANTED_NAMES)
    keys = list(json.loads(file.read_text()))
    assert len(keys) == 1 and keys[0].endswith(" from jax import lax lax.psend")


def test_an_answer_jedi_failed_to_give_is_not_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "names.json"
    real_goto = jedi.Script.goto

    def broken(self: jedi.Script, *args: object, **kwargs: object) -> object:
        raise RuntimeError("jedi broke")

    monkeypatch.setattr(jedi.Script, "goto", broken)
    assert fresh_resolver(file).resolve(QUERIES[:1], WANTED_NAMES) == [None]
    assert not file.exists()
    monkeypatch.setattr(jedi.Script, "goto", real_goto)
    assert fresh_resolver(file).resolve(QUERIES[:1], WANTED_NAMES) == EXPECTED[:1]
    assert list(json.loads(file.read_text()).values()) == EXPECTED[:1]


def test_a_store_turned_off_leaves_every_answer_to_jedi(tmp_path: Path) -> None:
    env = load_environment(None)
    assert isinstance(env.resolver, JediResolver) and env.resolver.store is not None
    resolver = JediResolver(env.resolver.environment, NameStore(None, env.resolver.store.modules))
    assert resolver.resolve(QUERIES, WANTED_NAMES) == EXPECTED
    assert (
        JediResolver(env.resolver.environment, NameStore(None, frozenset())).resolve(QUERIES, WANTED_NAMES)
        == EXPECTED
    )


def test_a_damaged_store_is_a_miss_and_is_rewritten(tmp_path: Path) -> None:
    file = tmp_path / "names.json"
    file.write_bytes(b'{"truncated": ')
    assert fresh_resolver(file).resolve(QUERIES, WANTED_NAMES) == EXPECTED
    assert len(json.loads(file.read_text())) == len(QUERIES)


def test_two_processes_saving_keep_each_others_answers(tmp_path: Path) -> None:
    file = tmp_path / "names.json"
    one = NameStore(file, frozenset({"jax"}))
    two = NameStore(file, frozenset({"jax"}))
    assert two.lookup("k0") == (False, None)  # two has read the (absent) file before one saves
    one.save({"k1": "jax.lax.psend"})
    two.save({"k2": None})
    assert json.loads(file.read_text()) == {"k1": "jax.lax.psend", "k2": None}
    assert NameStore(file, frozenset()).lookup("k2") == (True, None)
    assert two.lookup("k1") == (True, "jax.lax.psend")  # what one saved is read back by two too


@pytest.mark.parametrize("content", [b"[1, 2]", b'"text"', b'{"k": 3, "j": "jax.lax.psend"}'])
def test_a_store_of_another_shape_is_read_for_what_it_holds(tmp_path: Path, content: bytes) -> None:
    file = tmp_path / "names.json"
    file.write_bytes(content)
    store = NameStore(file, frozenset({"jax"}))
    assert store.lookup("k") == (False, None)
    assert store.lookup("j") == ((True, "jax.lax.psend") if b'"j"' in content else (False, None))
    store.save({"k": None})
    assert NameStore(file, frozenset()).lookup("k") == (True, None)


def test_each_set_of_wanted_names_has_its_own_answers(tmp_path: Path) -> None:
    store = NameStore(tmp_path / "names.json", frozenset({"jax"}))
    first = store.key(QUERIES[0], frozenset({"jax.lax.psend"}))
    other = store.key(QUERIES[0], frozenset({"jax.lax.precv"}))
    assert first is not None and other is not None and first != other
    assert store.key(QUERIES[0], frozenset({"jax.lax.psend"})) == first


def test_an_unwritable_cache_folder_keeps_answers_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    resolver = fresh_resolver(blocker / "names" / "x.json")
    assert resolver.resolve(QUERIES, WANTED_NAMES) == EXPECTED
    assert resolver.resolve(QUERIES, WANTED_NAMES) == EXPECTED


def test_installing_a_package_or_another_jax_or_interpreter_starts_afresh(tmp_path: Path) -> None:
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    (site / "jax").mkdir(parents=True)
    (site / "numpy").mkdir()
    (site / "six.py").write_text("")
    (site / "jax-0.10.2.dist-info").mkdir()
    project = tmp_path / "project"
    (project / "mine").mkdir(parents=True)
    (project / "helpers.py").write_text("")
    path = [str(site.parent), str(site), str(project)]
    store = NameStore.for_environment(sys.executable, path, "0.10.2")
    assert {"jax", "numpy", "six"} <= store.modules and "jax-0" not in " ".join(store.modules)
    assert not {"mine", "helpers"} & store.modules  # the project's own modules are never kept
    assert store.file is not None and store.file.parent == cache_home() / "names"
    assert NameStore.for_environment(sys.executable, path, "0.10.2").file == store.file
    assert NameStore.for_environment(sys.executable, path, "0.12.0.1").file != store.file
    assert NameStore.for_environment(str(tmp_path / "other-python"), path, "0.10.2").file != store.file
    stamp = site.stat().st_mtime_ns
    (site / "flax-0.12.0.dist-info").mkdir()
    os.utime(site, ns=(stamp + 10**9, stamp + 10**9))  # as pip leaves it, whatever the clock's resolution
    assert NameStore.for_environment(sys.executable, path, "0.10.2").file != store.file


def test_the_store_lives_where_the_environment_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAXTARGET_CACHE_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_home() == tmp_path / "xdg" / "jaxtarget"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_home() == tmp_path / "home" / ".cache" / "jaxtarget"
    monkeypatch.setenv("JAXTARGET_CACHE_HOME", str(tmp_path / "own"))
    assert cache_home() == tmp_path / "own"


def test_a_second_check_run_gives_the_same_findings_from_the_store(tmp_path: Path) -> None:
    code = tmp_path / "send.py"
    code.write_text("from jax import lax\n\n\ndef f(x):\n    return lax.psend(x, 'i', [(0, 1)])\n")
    env = {"JAXTARGET_CACHE_HOME": str(tmp_path / "cache")}
    args = ("check", "--target", "cpu", "--format", "json", str(code))
    runs = []
    for name in ("first", "second"):  # each in a folder of its own: no result cache to answer from
        (tmp_path / name).mkdir()
        runs.append(run_cli(*args, cwd=tmp_path / name, env=env))
        if name == "first":
            stores = list((tmp_path / "cache" / "names").glob("*.json"))
            assert len(stores) == 1 and "jax.lax.psend" in json.loads(stores[0].read_text()).values()
            before = stores[0].stat().st_mtime_ns
    first, second = runs
    assert first.returncode == second.returncode == 1, (first.stderr, second.stderr)
    assert json.loads(first.stdout) == json.loads(second.stdout)
    assert "JT001" in first.stdout
    assert stores[0].stat().st_mtime_ns == before  # nothing new was asked of jedi


def test_the_store_is_used_with_no_cache_and_can_be_turned_off(tmp_path: Path) -> None:
    code = tmp_path / "send.py"
    code.write_text("from jax import lax\nlax.psend(1.0, 'i', [(0, 1)])\n")
    names = tmp_path / "cache" / "names"
    names.mkdir(parents=True)
    env = {"JAXTARGET_CACHE_HOME": str(tmp_path / "cache"), "JAXTARGET_NO_NAME_STORE": "1"}
    off = run_cli("check", "--target", "cpu", str(code), cwd=tmp_path, env=env)
    assert off.returncode == 1 and "JT001" in off.stdout, off.stderr
    assert list(names.iterdir()) == []
    on = run_cli(
        "check",
        "--no-cache",
        "--target",
        "cpu",
        str(code),
        cwd=tmp_path,
        env={**env, "JAXTARGET_NO_NAME_STORE": "0"},
    )
    assert on.returncode == 1 and "JT001" in on.stdout, on.stderr
    assert len(list(names.iterdir())) == 1


def test_the_folder_keeps_the_most_recent_stores(tmp_path: Path) -> None:
    folder = tmp_path / "names"
    folder.mkdir()
    for i in range(KEEP + 8):
        old = folder / f"old-{i:02}.json"
        old.write_text("{}")
        os.utime(old, ns=(10**18 + i * 10**9, 10**18 + i * 10**9))  # old-00 the oldest
    (folder / "notes.txt").write_text("not a store")
    NameStore(folder / "old-00.json", frozenset()).save({"k": None})  # an existing store: no pruning
    assert len(list(folder.glob("*.json"))) == KEEP + 8
    NameStore(folder / "new.json", frozenset()).save({"k": None})
    left = sorted(p.name for p in folder.glob("*.json"))
    assert len(left) == KEEP and "new.json" in left and "old-00.json" in left  # just rewritten
    assert "old-01.json" not in left and f"old-{KEEP + 7:02}.json" in left
    assert (folder / "notes.txt").exists()
