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

PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test,dev]"

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
