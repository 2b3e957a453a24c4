"""jedi glue: resolve names against the JAX installed in the user's interpreter.

The one module that talks to jedi. Answers are cached per environment (and per
set of wanted names), so a warm check asks jedi nothing new, and kept on disk
(name_store.py), so a later start asks jedi only what it never asked before.
"""

from __future__ import annotations

import functools
import os
import pickle
import tempfile
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .name_store import NameStore, unanswered
from .resolver import Query, Spot

if TYPE_CHECKING:
    import jedi


@functools.cache
def _jedi() -> ModuleType:
    """jedi, imported on first use (a check served from the result cache never asks it)."""
    import jedi as module

    _harden_parso_cache()
    found: ModuleType = module
    return found


def _harden_parso_cache() -> None:
    """Make parso's on-disk parse cache safe for processes that share it.

    parso writes each pickle in place, so a process reading it while another writes it
    (`check`'s worker pool, or the CLI beside the language server, on a cold cache)
    gets a truncated pickle, and two processes making the cache folder at once make
    one fail; jedi then resolves nothing in that module and a finding is silently lost.
    Pickles are written to a temporary file and renamed into place, one that still
    cannot be read is a cache miss, and a folder another process made meanwhile is
    used. A parso without these private functions is left as it is.
    """
    import parso.cache

    save: Callable[..., None] | None = getattr(parso.cache, "_save_to_file_system", None)
    load: Callable[..., Any] | None = getattr(parso.cache, "_load_from_file_system", None)
    path_of: Callable[..., str] | None = getattr(parso.cache, "_get_hashed_path", None)
    folder_of: Callable[..., Any] | None = getattr(parso.cache, "_get_cache_directory_path", None)
    if save is None or load is None or path_of is None or folder_of is None or getattr(save, "atomic", False):
        return

    def shared_folder(cache_path: Any = None) -> Any:
        try:
            return folder_of(cache_path=cache_path)
        except FileExistsError:  # made by another process between parso's check and its makedirs
            return folder_of(cache_path=cache_path)

    def atomic_save(hashed_grammar: str, path: str, item: object, cache_path: str | None = None) -> None:
        target = path_of(hashed_grammar, path, cache_path=cache_path)
        fd, temporary = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(item, f, pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, target)
        except BaseException:
            os.unlink(temporary)
            raise

    def tolerant_load(*args: Any, **kwargs: Any) -> Any:
        try:
            return load(*args, **kwargs)
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError, ValueError):
            return None  # a damaged cache file: parse the module again

    atomic_save.atomic = True  # type: ignore[attr-defined]
    parso.cache._save_to_file_system = atomic_save
    parso.cache._load_from_file_system = tolerant_load
    parso.cache._get_cache_directory_path = shared_folder


class JediResolver:
    """Resolution through jedi in the user's own environment."""

    exact = True
    reason = ""

    def __init__(
        self, environment: jedi.api.environment.Environment | None, store: NameStore | None = None
    ) -> None:
        """``environment`` None: the running interpreter's, made when jedi is first asked."""
        self._environment = environment
        self.store = store
        self._cache: dict[tuple[Query, frozenset[str], frozenset[str]], str | None] = {}
        self._jedi_raised = False  # in the batch being resolved: its answers are not stored
        self._lock = threading.Lock()
        self._definitions: dict[frozenset[str], dict[str, str]] = {}

    @property
    def environment(self) -> jedi.api.environment.Environment:
        if self._environment is None:
            self._environment = _jedi().api.environment.InterpreterEnvironment()
        return self._environment

    def definitions(self, wanted: frozenset[str]) -> dict[str, str]:
        """Map jedi's ``full_name`` of each wanted definition to its public name."""
        found = self._definitions.get(wanted)
        if found is None:
            names = sorted(wanted)
            modules = sorted({n.rsplit(".", 1)[0] for n in names})
            lines = [f"import {m}" for m in modules]
            first = len(lines) + 1
            lines += names
            script = _jedi().Script("\n".join(lines) + "\n", environment=self.environment)
            found = {}
            raised = False
            for i, name in enumerate(names):
                definitions = _goto(script, first + i, len(name))
                raised = raised or definitions is None
                for d in definitions or []:
                    if d.full_name:
                        found.setdefault(d.full_name, name)
            if raised:
                self._jedi_raised = True  # asked again next time, and nothing resolved with it is stored
            else:
                self._definitions[wanted] = found
        return found

    def resolve(
        self, queries: Sequence[Query], wanted: frozenset[str], lacking: frozenset[str] = frozenset()
    ) -> list[str | None]:
        lacking &= wanted
        with self._lock:
            missing = unanswered(queries, wanted, lacking, self._cache, self.store)
            if missing:
                self._jedi_raised = False
                self._resolve_batch(missing, wanted, lacking)
                if self.store is not None and not self._jedi_raised:
                    self._to_store(self.store, missing, wanted, lacking)
            return [self._cache[(q, wanted, lacking)] for q in queries]

    def _to_store(
        self, store: NameStore, queries: list[Query], wanted: frozenset[str], lacking: frozenset[str]
    ) -> None:
        new: dict[str, str | None] = {}
        for q in queries:
            key = store.key(q, wanted, lacking)
            if key is not None:
                new[key] = self._cache[(q, wanted, lacking)]
        store.save(new)

    def _defs_for(
        self, found: Sequence[jedi.api.classes.Name], spelled: str, wanted: frozenset[str]
    ) -> dict[str, str]:
        """Definitions of the wanted names that share a last part with what jedi found.

        Only these are resolved, so jedi parses the modules of the names a file uses,
        not of the whole catalog.
        """
        last = {n.name for n in found} | {spelled.rsplit(".", 1)[-1]}
        subset = frozenset(w for w in wanted if w.rsplit(".", 1)[-1] in last)
        return self.definitions(subset) if subset else {}

    def _resolve_batch(
        self, queries: Sequence[Query], wanted: frozenset[str], lacking: frozenset[str]
    ) -> None:
        star = [q for q in queries if q.binding.kind == "star" or q.binding.level]
        scoped = [q for q in queries if q not in star]
        if scoped:
            lines: list[str] = []
            spots: list[tuple[Query, int, int]] = []
            for i, q in enumerate(scoped):
                lines.append(f"def _jaxtarget_{i}():")
                lines.append(f"    {q.binding.statement()}")
                lines.append(f"    {q.dotted}")
                spots.append((q, len(lines), 4 + len(q.dotted)))
            self._run("\n".join(lines) + "\n", spots, wanted, lacking)
        for q in star:
            # star and relative imports cannot live in a function: one script each
            src = f"{q.binding.statement()}\n{q.dotted}\n"
            self._run(src, [(q, 2, len(q.dotted))], wanted, lacking)

    def _run(
        self,
        src: str,
        spots: Sequence[tuple[Query, int, int]],
        wanted: frozenset[str],
        lacking: frozenset[str],
    ) -> None:
        script = _jedi().Script(src, environment=self.environment)
        # every goto before any other Script is made: a new Script disturbs this one's answers
        found = [(q, self._goto_noting(script, line, col)) for q, line, col in spots]
        for q, names in found:
            answer = _match(names, self._defs_for(names, q.dotted, wanted))
            if answer is None and not names:
                answer = _not_installed(q.binding.qualify(q.dotted), wanted, lacking)
            self._cache[(q, wanted, lacking)] = answer

    def _goto_noting(self, script: jedi.Script, line: int, col: int) -> list[jedi.api.classes.Name]:
        names = _goto(script, line, col)
        if names is None:
            self._jedi_raised = True
            return []
        return names

    def resolve_in_file(
        self,
        source: str,
        path: str | None,
        spots: Sequence[Spot],
        wanted: frozenset[str],
        lacking: frozenset[str] = frozenset(),
    ) -> list[str | None]:
        """Full-file resolution for names whose binding the engine could not pin down."""
        with self._lock:
            script = _jedi().Script(source, path=path, environment=self.environment)
            found = [(s, _goto(script, s.line, s.col)) for s in spots]
            answers: list[str | None] = []
            for s, names in found:
                answer = _match(names or [], self._defs_for(names or [], s.guess or "", wanted))
                if answer is None and names == [] and s.guess in lacking & wanted:
                    answer = s.guess  # found nowhere (not where jedi raised): absent from this jax
                answers.append(answer)
            return answers

    def describe(self, qualname: str) -> tuple[str, str]:
        """Signature and docstring of a public name, from the user's installed JAX."""
        module = qualname.rsplit(".", 1)[0]
        script = _jedi().Script(f"import {module}\n{qualname}\n", environment=self.environment)
        try:
            names = script.infer(2, len(qualname))
        except Exception:  # jedi can fail on odd environments; no docs then
            return "", ""
        for n in names:
            try:
                sigs = n.get_signatures()
                signature = sigs[0].to_string() if sigs else ""
                return signature, n.docstring(raw=True)
            except Exception:  # a name jedi cannot describe: try the next one
                continue
        return "", ""


def _goto(script: jedi.Script, line: int, col: int) -> list[jedi.api.classes.Name] | None:
    """What jedi's goto finds there, or None where jedi raised (odd code, a broken environment)."""
    try:
        return list(script.goto(line, col, follow_imports=True))
    except Exception:  # jedi can fail on odd code: unresolved, and not remembered
        return None


def _not_installed(name: str | None, wanted: frozenset[str], lacking: frozenset[str]) -> str | None:
    """A name jedi finds nowhere, as its import statement spells it, where that may be right.

    A library other than JAX may not be installed in this interpreter (Catalyst's ``qjit``
    where only JAX is). JAX's own names are answered by the installed JAX alone, except the
    ``lacking`` ones some JAX release does not have (``pltpu.TPUCompilerParams``, removed in
    0.7.2; ``jax.experimental.fused``, public from 0.7.2): one found nowhere is a use of a
    name this JAX lacks, which the rules report as such.
    """
    if name is None or name not in wanted:
        return None
    return name if name in lacking or name.split(".", 1)[0] not in ("jax", "jaxlib") else None


#: packages whose definitions beside a wanted one leave a use the wanted one
_SAME_USE_ROOTS = frozenset({"jax", "jaxlib", "builtins", "typing"})


def _match(names: Sequence[jedi.api.classes.Name], defs: dict[str, str]) -> str | None:
    """The wanted name jedi found, unless it also found another library's (``bk.linalg.eig``
    where ``bk`` is numpy or jax.numpy by configuration: not visibly the JAX API)."""
    found = next((defs[n.full_name] for n in names if n.full_name and n.full_name in defs), None)
    if found is None:
        return None
    roots = {n.full_name.split(".", 1)[0] for n in names if n.full_name and n.full_name not in defs}
    return None if roots - _SAME_USE_ROOTS else found


def create_environment(executable: str) -> jedi.api.environment.Environment:
    """jedi's environment for another interpreter than the running one (whose environment a
    ``JediResolver`` given None makes in-process)."""
    env = _jedi().create_environment(executable, safe=False)
    env.get_sys_path()
    return env
