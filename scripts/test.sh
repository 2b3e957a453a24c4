#!/usr/bin/env bash
# Install everything the checks need, then run them all: ruff, mypy --strict, the
# client's type-check/lint/unit tests, and the pytest suite (with headless Neovim).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v nvim >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null
  fi
fi

# Emacs with Eglot and lsp-mode, for the README's Emacs snippets (tests/test_readme_editors.py)
if ! command -v emacs >/dev/null 2>&1 || ! dpkg -s elpa-eglot elpa-lsp-mode >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    emacs-nox elpa-eglot elpa-lsp-mode >/dev/null
fi

PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test,dev]"

# the jax releases the catalog is verified against (tests/test_catalog_lowering.py), each
# in its own venv, pinned whatever the suite's own Python gets (0.10.2 is what `pip install
# jax` gives Python 3.11), with absl-py, which Mosaic GPU's Pallas module needs to import;
# the list is tests/conftest.py's JAX_VENVS
for spec in 0.7.0:3.11 0.8.2:3.12 0.9.1:3.12 0.10.2:3.11 0.12.0.1:3.13; do
  version="${spec%%:*}" minor="${spec##*:}" dir=".jax-venvs/jax-${spec%%:*}"
  if ! "$dir/bin/python" -c "import absl, jax, sys; sys.exit(jax.__version__ != '$version')" 2>/dev/null; then
    base="$(ls -d /root/.pyenv/versions/"$minor".*/bin/python 2>/dev/null | tail -n 1 || true)"
    base="${base:-$(command -v "python$minor" || true)}"
    [ -n "$base" ] || { echo "no Python $minor for jax $version" >&2; exit 1; }
    rm -rf "$dir" && "$base" -m venv "$dir"
    "$dir/bin/python" -m pip install -q --disable-pip-version-check "jax==$version" absl-py
  fi
done

echo "== ruff"
.venv/bin/ruff check server tests bench
.venv/bin/ruff format --check server tests bench
echo "== mypy --strict"
.venv/bin/mypy
echo "== client"
npm ci --no-audit --no-fund --loglevel=error
npm test
echo "== VS Code end-to-end tools"
bash client/e2e/setup.sh
echo "== pytest"
.venv/bin/python -m pytest "$@"
