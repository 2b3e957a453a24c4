"""Glue between configuration, the user's environment and the engine.

Shared by the CLI and the language server: which settings apply to a file,
which interpreter they select, and an engine for that combination.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .config import Layer, Problem, Settings, load_project, resolve
from .engine import Engine
from .environment import Environment, guess_backend, load_environment


def settings_for(
    path: Path, overrides: Layer, stop: Path | None = None
) -> tuple[Settings, tuple[Problem, ...]]:
    project = load_project(path, stop)
    settings = resolve(project.layer, overrides, pyproject=str(project.path) if project.path else None)
    return settings, project.problems


def interpreter_setting(settings: Settings) -> str | None:
    """The interpreter the settings name (None: the default one)."""
    return settings.interpreter[0] if settings.interpreter else None


@dataclass
class Engines:
    """Engines keyed by the settings that change findings; environments are loaded once each."""

    backends: dict[str, str] = field(default_factory=dict)
    _engines: dict[tuple[object, ...], Engine] = field(default_factory=dict)

    def auto_backend(self, env: Environment) -> str | None:
        """Default backend: what a probe measured, else a guess from installed plugins."""
        return self.backends.get(env.python) or guess_backend(env.plugins)

    def engine(self, settings: Settings, environment: Environment | None = None) -> Engine:
        """The engine for these settings, in ``environment`` (default: the interpreter they name)."""
        env = environment or load_environment(interpreter_setting(settings))
        auto = self.auto_backend(env) if "auto" in settings.target_backends else None
        key = (env.python, auto, settings.analysis_key())
        engine = self._engines.get(key)
        if engine is None:
            engine = Engine(settings, env, auto)
            self._engines[key] = engine
        return engine

    def forget(self) -> None:
        self._engines.clear()
