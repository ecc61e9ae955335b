#!/usr/bin/env bash
# Set up and run every test of the VS Code extension, from a fresh machine (root with
# apt-get, Node 20 and npm; the Python venv at <repo>/.venv with memory_ls installed,
# as `python3 tasks.py test` makes it):
#   1. npm ci (reproducible from package-lock.json; skipped when node_modules matches it)
#   2. type-check; package the VSIX for this platform (scripts/package.mjs: esbuild, the
#      server and its libraries for every supported CPython, vsce package --target)
#   3. unit tests of the extension's own logic (node --test)
#   4. real-editor tests: code-server 4.103.2 (on the Node 22 setup.sh installs beside it)
#      in headless Chromium (playwright-core);
#      client-vscode/test/editor/setup.sh installs them into ~/.cache/memory-ls/editor.
#      fresh.test.mjs is a new user's machine: the VSIX, a bare python3, pip offline.
# Exits non-zero on any failure. Screenshots of failed editor tests are kept in
# client-vscode/test-results/ (the folder is printed).
#   MEMORY_LS_PYTHON        Python with memory_ls (default <repo>/.venv/bin/python)
#   MEMORY_LS_SKIP_EDITOR=1 stop after the unit tests
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
started=$SECONDS
step() { printf '\n== %s (%ss)\n' "$*" "$((SECONDS - started))"; }

export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false \
  npm_config_loglevel=error
export MEMORY_LS_PYTHON="${MEMORY_LS_PYTHON:-$repo/.venv/bin/python}"

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if ((node_major < 20)); then
  echo "test-all: Node 20 or newer is needed (this is $(node --version))" >&2
  exit 1
fi
if ! "$MEMORY_LS_PYTHON" -c "import memory_ls.__main__" 2>/dev/null; then
  echo "test-all: $MEMORY_LS_PYTHON cannot import memory_ls; run \`python3 tasks.py test\`" \
    "(it creates .venv), or set MEMORY_LS_PYTHON" >&2
  exit 1
fi

step "npm ci"
stamp="node_modules/.memory-ls-lock"
lock_sum="$(sha256sum package-lock.json | cut -d' ' -f1)-$(node --version)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$lock_sum" ]]; then
  echo "node_modules matches package-lock.json"
else
  # No install scripts: esbuild's binary comes from its platform package, and vsce's
  # optional native helpers (keytar, signing) are not needed to package.
  npm ci --ignore-scripts
  echo "$lock_sum" >"$stamp"
fi
bin="$repo/node_modules/.bin"

step "type-check"
"$bin/tsc" -p tsconfig.json
"$bin/tsc" -p client-vscode/webview/tsconfig.json

step "build and package the VSIX for this machine (the server and its libraries inside)"
mkdir -p client-vscode/dist
MEMORY_LS_BUILD_PYTHON="$MEMORY_LS_PYTHON" node client-vscode/scripts/package.mjs >"$repo/client-vscode/dist/package.log" \
  || { cat "$repo/client-vscode/dist/package.log"; exit 1; }
grep -E "^bundled |^VSIX for " "$repo/client-vscode/dist/package.log"
MEMORY_LS_VSIX="$(tail -n 1 "$repo/client-vscode/dist/package.log")"
export MEMORY_LS_VSIX

step "unit tests"
node client-vscode/scripts/build.mjs --tests
node --test client-vscode/out/test/

if [[ "${MEMORY_LS_SKIP_EDITOR:-}" == "1" ]]; then
  step "editor tests skipped (MEMORY_LS_SKIP_EDITOR=1)"
  exit 0
fi

step "install code-server and Chromium for the editor tests"
MEMORY_LS_CODE_SERVER="$(bash client-vscode/test/editor/setup.sh | tail -n 1)"
export MEMORY_LS_CODE_SERVER

step "editor tests (code-server $(node -p "require('$MEMORY_LS_CODE_SERVER/package.json').version") in headless Chromium)"
# One editor at a time: the machines have two cores.
node --test --test-concurrency=1 client-vscode/test/editor/editor.test.mjs \
  client-vscode/test/editor/workspace.test.mjs client-vscode/test/editor/agents.test.mjs \
  client-vscode/test/editor/changes.test.mjs client-vscode/test/editor/graph.test.mjs \
  client-vscode/test/editor/links.test.mjs client-vscode/test/editor/context.test.mjs \
  client-vscode/test/editor/config.test.mjs client-vscode/test/editor/agentfiles.test.mjs \
  client-vscode/test/editor/moves.test.mjs client-vscode/test/editor/fresh.test.mjs

step "all extension tests passed"
