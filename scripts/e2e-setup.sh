#!/usr/bin/env bash
# Prepares everything the end-to-end tests need: Debian's Chromium, and code-server
# 4.100.3 (VS Code 1.100.3) in a cache folder outside the repository.
#
# Why code-server: no VS Code build can be downloaded on our machines (only the npm
# registry and Debian apt are reachable), so @vscode/test-electron / @vscode/test-web
# cannot work. code-server ships VS Code's real workbench and extension host via npm.
#
# Idempotent and quick when everything is present. Progress goes to stderr; the only
# thing printed on stdout is the path of the code-server executable, so callers can do
#   CODE_SERVER=$(bash scripts/e2e-setup.sh)
set -euo pipefail

CODE_SERVER_VERSION=4.100.3
# @vscode/ripgrep's version pinned by VS Code 1.100.3, and the rg release it downloads.
VSCODE_RIPGREP_VERSION=1.15.11
RIPGREP_ASSET=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz

CACHE_ROOT="${RECOLLECT_E2E_CACHE:-$HOME/.cache/recollect-e2e}"
INSTALL_DIR="$CACHE_ROOT/code-server-$CODE_SERVER_VERSION"
CODE_SERVER_BIN="$INSTALL_DIR/node_modules/.bin/code-server"
# Written only after the native modules were proven to load, so an install that died
# half-way (bin link present, postinstall failed) is redone instead of trusted.
READY_MARKER="$INSTALL_DIR/.recollect-e2e-ready"

log() { printf '[e2e-setup] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else die "need root (or sudo) to run: $*"
  fi
}

# --- Debian packages -------------------------------------------------------------
ensure_apt_packages() {
  local missing=()
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  # libkrb5-dev: headers for code-server's `kerberos` native module.
  dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
  # ripgrep: source of the rg binary we seed @vscode/ripgrep's download cache with.
  command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
  # strace: the unit suite counts a tool call's fsyncs at the syscall (test/unit/toolCallSync.test.ts).
  command -v strace >/dev/null 2>&1 || missing+=(strace)
  [ ${#missing[@]} -eq 0 ] && return 0

  log "installing Debian packages: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
}

# --- ripgrep download cache ------------------------------------------------------
# @vscode/ripgrep's postinstall downloads rg from GitHub (unreachable here), but it
# first looks for the release archive in os.tmpdir()/vscode-ripgrep-cache-<version>/.
# An archive holding Debian's rg satisfies it. Needed only while installing.
seed_ripgrep_cache() {
  [ "$(uname -m)" = x86_64 ] || die "only x86_64 is supported (asset $RIPGREP_ASSET)"
  # Same rule as node's os.tmpdir() on Linux, which is what the postinstall uses.
  local tmp="${TMPDIR:-/tmp}"
  tmp="${tmp%/}"
  local dir="$tmp/vscode-ripgrep-cache-$VSCODE_RIPGREP_VERSION"
  local archive="$dir/$RIPGREP_ASSET"
  [ -s "$archive" ] && return 0

  local rg_path
  rg_path="$(command -v rg)"
  rg_path="$(readlink -f "$rg_path")"
  log "seeding $archive from $rg_path"
  mkdir -p "$dir"
  # Build under a temporary name and rename: a concurrent or interrupted run must
  # never leave a truncated archive that the postinstall would happily extract.
  local partial="$archive.partial.$$"
  tar -czf "$partial" -C "$(dirname "$rg_path")" "$(basename "$rg_path")"
  mv -f "$partial" "$archive"
}

# --- code-server -----------------------------------------------------------------
# Loads the native modules the server really needs with the node that will run it.
# The npm install can "succeed" while a nested install script was skipped, so this
# is the only trustworthy check.
verify_code_server() {
  local vscode_dir="$INSTALL_DIR/node_modules/code-server/lib/vscode"
  [ -x "$CODE_SERVER_BIN" ] || return 1
  [ -x "$vscode_dir/node_modules/@vscode/ripgrep/bin/rg" ] || { log "missing @vscode/ripgrep/bin/rg"; return 1; }
  (cd "$vscode_dir" && node -e '
    for (const m of ["node-pty", "@vscode/spdlog", "kerberos", "native-watchdog", "@parcel/watcher"]) {
      try { require(m); } catch (e) { console.error(`cannot load ${m}: ${e.message}`); process.exitCode = 1; }
    }
  ') >&2
}

install_code_server() {
  log "installing code-server@$CODE_SERVER_VERSION into $INSTALL_DIR (takes a few minutes)"
  mkdir -p "$INSTALL_DIR"
  # A package.json of our own pins npm's project root here; without it npm walks up
  # the directory tree and could install into some unrelated parent project.
  # allowScripts approves the install scripts we rely on at this level (npm 11 warns
  # about unapproved ones but, in 11.19, still runs them). code-server's postinstall
  # runs nested `npm install`s in lib/vscode (node-pty, kerberos, spdlog, ...), which
  # this policy cannot reach and which also run with a warning; verify_code_server
  # proves they built. Do NOT pass --allow-scripts/npm_config_allow_scripts: npm
  # rejects it in project-scoped installs (EALLOWSCRIPTS).
  cat >"$INSTALL_DIR/package.json" <<'JSON'
{
  "name": "recollect-e2e-code-server",
  "private": true,
  "description": "Cache of code-server for Recollect's end-to-end tests (generated by scripts/e2e-setup.sh)",
  "allowScripts": {
    "code-server": true,
    "argon2": true
  }
}
JSON
  # npm_config_yes: node-pty's install script runs `npx node-gyp`, which would
  # otherwise wait for a confirmation nobody can give.
  # --unsafe-perm: code-server's postinstall refuses to run as root without it.
  (cd "$INSTALL_DIR" &&
    npm_config_yes=true \
    npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false \
    npm i --unsafe-perm --save-exact "code-server@$CODE_SERVER_VERSION") >&2
}

main() {
  ensure_apt_packages

  mkdir -p "$CACHE_ROOT"
  # Two runs at once (e.g. two terminals) must not install into the same folder.
  exec 9>"$CACHE_ROOT/.setup.lock"
  flock 9

  if [ -f "$READY_MARKER" ] && [ -x "$CODE_SERVER_BIN" ]; then
    echo "$CODE_SERVER_BIN"
    return 0
  fi

  if ! { [ -x "$CODE_SERVER_BIN" ] && verify_code_server; }; then
    seed_ripgrep_cache
    install_code_server
    verify_code_server || die "code-server installed but its native modules do not load (see above).
  If npm skipped their install scripts (a newer npm blocks unapproved ones), delete
  $INSTALL_DIR and rerun with npm_config_dangerously_allow_all_scripts=true."
  fi
  touch "$READY_MARKER"
  log "code-server $CODE_SERVER_VERSION ready"
  echo "$CODE_SERVER_BIN"
}

main "$@"
