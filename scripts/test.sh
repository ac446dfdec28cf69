#!/usr/bin/env bash
# The one test command (`npm test`): sets up what a fresh machine lacks, then runs every suite.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  step "install dependencies"
  npm ci --no-audit --no-fund
fi

step "build (extension, cli, webviews)"
npm run build

step "type-check"
npx tsc -p tsconfig.json --noEmit

step "lint"
npx eslint .

# The oldest VS Code we support (engines ^1.100.0) and the current one; both must pass.
E2E_CODE_SERVERS=(4.100.3 4.139.1)

step "machine set-up (chromium, strace, ripgrep, code-server ${E2E_CODE_SERVERS[*]}, node 24, postgresql 15, openssl) if missing"
for v in "${E2E_CODE_SERVERS[@]}"; do RECOLLECT_E2E_CODE_SERVER=$v bash scripts/e2e-setup.sh >/dev/null; done
# The team pool's tests start a PostgreSQL 15 server of their own (test/unit/helpers/postgres.ts).
if [ ! -x /usr/lib/postgresql/15/bin/initdb ]; then
  { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; }; } >/dev/null
fi
# Its TLS test makes its certificates with openssl (test/unit/helpers/certificates.ts).
if ! command -v openssl >/dev/null; then
  { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl; }; } >/dev/null
fi

step "unit and service tests (real sql.js, real temp folders, real processes)"
npx vitest run

if [ -f vitest.webview.config.mts ]; then
  step "webviews in real Chromium"
  npx vitest run -c vitest.webview.config.mts
fi

step "package the .vsix and check what it holds"
node scripts/check-package.mjs

for v in "${E2E_CODE_SERVERS[@]}"; do
  step "end to end in real VS Code (code-server $v = VS Code 1.${v#4.})"
  RECOLLECT_E2E_CODE_SERVER=$v node test/e2e/run.mjs
done

step "the official MCP conformance suite against recollect serve"
bash scripts/conformance.sh

step "all suites passed"
