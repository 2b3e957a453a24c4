"""pre-commit: the hooks in `.pre-commit-hooks.yaml`, run by the real pre-commit on a throwaway repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from .conftest import ROOT, run_cli

EIG = "import jax.numpy as jnp\n\n\ndef features(a):\n    w, _ = jnp.linalg.eig(a)\n    return w.real\n"
PYPROJECT = '[tool.jaxtarget]\ntargets = ["tpu"]\nexclude = ["generated/"]\n'


def test_hooks_file_declares_check_and_check_fix() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"jaxtarget-check", "jaxtarget-check-fix"}
    assert hooks["jaxtarget-check"]["entry"].split() == ["jaxtarget", "check", "--force-exclude"]
    assert hooks["jaxtarget-check-fix"]["entry"].split() == ["jaxtarget", "check", "--force-exclude", "--fix"]
    assert all(h["language"] == "python" and "python" in h["types_or"] for h in hooks.values())
    readme = (ROOT / "README.md").read_text().split("### pre-commit", 1)[1].split("\n## ", 1)[0]
    (snippet,) = [yaml.safe_load(b.split("```", 1)[0]) for b in readme.split("```yaml\n")[1:]]
    assert {h["id"] for repo in snippet["repos"] for h in repo["hooks"]} <= set(hooks)


def test_force_exclude_skips_named_files_that_a_walk_would_skip(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    for name in ("generated/g.py", "build/b.py", "src/m.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(EIG)
    named = ("generated/g.py", "build/b.py", "src/m.py")
    plain = run_cli("check", *named, cwd=tmp_path)
    assert {line.split(":")[0] for line in plain.stdout.splitlines()[:-1]} == set(named)
    forced = run_cli("check", "--force-exclude", *named, cwd=tmp_path)
    assert forced.returncode == 1
    assert {line.split(":")[0] for line in forced.stdout.splitlines()[:-1]} == {"src/m.py"}
    only_excluded = run_cli("check", "--force-exclude", "generated/g.py", cwd=tmp_path)
    assert only_excluded.returncode == 0 and only_excluded.stdout == "All checks passed!\n"


def _git(repo: Path, *args: str, env: dict[str, str]) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


def test_pre_commit_installs_this_checkout_and_runs_both_hooks(tmp_path: Path) -> None:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    rev = head.stdout.strip()
    shown = subprocess.run(["git", "show", f"{rev}:.pre-commit-hooks.yaml"], cwd=ROOT, capture_output=True)
    assert shown.returncode == 0, "commit .pre-commit-hooks.yaml: pre-commit installs the hooks of HEAD"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(
        PRE_COMMIT_HOME=str(tmp_path / "cache"),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
        GIT_CONFIG_GLOBAL=os.devnull,
    )
    repo = tmp_path / "project"
    (repo / "src").mkdir(parents=True)
    (repo / "generated").mkdir()
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / "src" / "model.py").write_text(EIG)
    (repo / "generated" / "gen.py").write_text(EIG)  # excluded in pyproject: the hooks leave it alone
    config = {
        "repos": [
            {
                "repo": str(ROOT),
                "rev": rev,
                "hooks": [{"id": "jaxtarget-check"}, {"id": "jaxtarget-check-fix"}],
            }
        ]
    }
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    _git(repo, "init", "-q", env=env)
    _git(repo, "add", ".", env=env)

    def pre_commit(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", *args],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )

    check = pre_commit("run", "jaxtarget-check", "--all-files")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "src/model.py:5:23: JT003" in check.stdout and "generated/" not in check.stdout

    fix = pre_commit("run", "jaxtarget-check-fix", "--all-files")
    assert fix.returncode == 1, fix.stdout + fix.stderr  # pre-commit fails a hook that changed files
    assert "files were modified by this hook" in fix.stdout
    fixed = (repo / "src" / "model.py").read_text()
    assert '    if jax.default_backend() in ("cpu", "gpu", "cuda", "rocm"):\n        w, _ = jnp' in fixed
    assert (repo / "generated" / "gen.py").read_text() == EIG

    _git(repo, "add", ".", env=env)
    again = pre_commit("run", "--all-files")
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.count("Passed") == 2

    # and as a git hook: a commit with a finding is refused
    assert pre_commit("install").returncode == 0
    _git(repo, "commit", "-q", "-m", "fixed", env=env)
    (repo / "src" / "late.py").write_text(EIG)
    _git(repo, "add", "src/late.py", env=env)
    refused = subprocess.run(
        ["git", "commit", "-m", "late"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert refused.returncode != 0 and "src/late.py:5:23: JT003" in refused.stdout + refused.stderr
