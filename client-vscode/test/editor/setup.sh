#!/usr/bin/env bash
# Install what the real-editor tests need: Debian packages (chromium, ripgrep, the
# headers code-server's native modules build against) and code-server 4.100.3 in a
# cache directory outside the repository, with its postinstall steps done by hand
# (its own postinstall refuses root and downloads ripgrep from the internet).
#
# Prints the code-server directory (…/node_modules/code-server) on its last line.
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
stamp_value="$(sha256sum "$lock" | cut -d' ' -f1)-$(node --version)"
prefix="$cache/code-server"
cs="$prefix/node_modules/code-server"
if [[ -f "$prefix/.ready" && "$(cat "$prefix/.ready")" == "$stamp_value" ]]; then
  echo "$cs"
  exit 0
fi

# Native modules build against the local Node headers: there is no download of them.
if [[ -z "${npm_config_nodedir:-}" ]]; then
  node_prefix="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
  if [[ -f "$node_prefix/include/node/node_version.h" ]]; then
    export npm_config_nodedir="$node_prefix"
  fi
fi
export npm_config_yes=true npm_config_audit=false npm_config_fund=false \
  npm_config_update_notifier=false npm_config_loglevel=error

say "installing code-server into $prefix (a few minutes on a cold machine)"
rm -rf "$prefix"
mkdir -p "$prefix"
cp "$here/code-server/package.json" "$lock" "$prefix/"
(cd "$prefix" && npm ci --ignore-scripts >/dev/null)
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

"$cs/out/node/entry.js" --version >/dev/null 2>&1 || node "$cs/out/node/entry.js" --version >/dev/null
echo "$stamp_value" >"$prefix/.ready"
say "code-server ready"
echo "$cs"
