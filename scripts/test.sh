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

step "machine set-up (chromium, strace, ripgrep, code-server) if missing"
bash scripts/e2e-setup.sh

step "unit and service tests (real sql.js, real temp folders, real processes)"
npx vitest run

if [ -f vitest.webview.config.mts ]; then
  step "webviews in real Chromium"
  npx vitest run -c vitest.webview.config.mts
fi

step "package the .vsix and check what it holds"
node scripts/check-package.mjs

step "end to end in real VS Code (code-server)"
node test/e2e/run.mjs

step "all suites passed"
