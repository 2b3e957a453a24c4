"""Glue between configuration, the user's environment and the engine.

Shared by the CLI and the language server: which settings apply to a file,
which interpreter they select, and an engine for that combination.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .analysis import Engine
from .config import Layer, Problem, Settings, load_project, resolve
from .resolution import Environment, guess_backend, load_environment


def default_interpreter() -> str:
    """The active virtual environment's Python, else the one running jaxtarget."""
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        for candidate in (Path(venv) / "bin" / "python", Path(venv) / "Scripts" / "python.exe"):
            if candidate.exists():
                return str(candidate)
    return sys.executable


def settings_for(
    path: Path, overrides: Layer, stop: Path | None = None
) -> tuple[Settings, tuple[Problem, ...]]:
    project = load_project(path, stop)
    settings = resolve(project.layer, overrides, pyproject=str(project.path) if project.path else None)
    return settings, project.problems


def interpreter_of(settings: Settings) -> str:
    return settings.interpreter[0] if settings.interpreter else default_interpreter()


@dataclass
class Engines:
    """Engines keyed by effective settings; environments are loaded once each."""

    backends: dict[str, str] = field(default_factory=dict)
    _engines: dict[tuple[object, ...], Engine] = field(default_factory=dict)

    def auto_backend(self, env: Environment) -> str | None:
        """Default backend: what a probe measured, else a guess from installed plugins."""
        return self.backends.get(env.python) or guess_backend(env.plugins)

    def engine(self, settings: Settings) -> Engine:
        env = load_environment(interpreter_of(settings))
        auto = self.auto_backend(env) if "auto" in settings.target_backends else None
        key = (
            env.python,
            auto,
            settings.target_backends,
            settings.select,
            settings.ignore,
            tuple(sorted(settings.severity.items())),
        )
        engine = self._engines.get(key)
        if engine is None:
            engine = Engine(settings, env, auto)
            self._engines[key] = engine
        return engine

    def forget(self) -> None:
        self._engines.clear()
