#!/usr/bin/env bash
# `npm start`: VS Code in the browser (code-server = VS Code 1.100.3) with Recollect installed
# and a small sample store, so a person can try the tools, the sidebar and the commands.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PORT=${PORT:-8080}

[ -d node_modules ] || npm ci --no-audit --no-fund
npm run build
CODE_SERVER=$(bash scripts/e2e-setup.sh)

# A sample store: a few facts and notes, and the public sample transcripts when they are here.
export RECOLLECT_HOME=${RECOLLECT_HOME:-$ROOT/.sample-store}
if [ ! -f "$RECOLLECT_HOME/journal.jsonl" ]; then
  cli() { node dist/cli.js "$@" >/dev/null; }
  cli tool save_memory '{"subject":"build tool","predicate":"is","object":"Vite 8"}'
  cli tool save_memory '{"subject":"test command","predicate":"is","object":"npm test"}'
  cli tool remember '{"statement":"Deploys go through the staging cluster (kestrel) before production."}'
  cli tool remember '{"statement":"Never run database migrations on Fridays.","subject":"migrations","predicate":"rule","object":"not on Fridays"}'
  for f in ../shared/fixtures/transcripts /work/shared/fixtures/transcripts; do
    [ -d "$f" ] && { node dist/cli.js import "$f" >/dev/null; break; }
  done
fi

# Install the extension from this folder into a private extensions dir (a link, so rebuilds show up).
DATA=${RECOLLECT_START_DATA:-$ROOT/.code-server}
mkdir -p "$DATA/extensions" "$DATA/user-data"
VERSION=$(node -p "require('./package.json').version")
ln -sfn "$ROOT" "$DATA/extensions/recollect.recollect-$VERSION"

echo "Recollect: open http://127.0.0.1:$PORT/?folder=$ROOT  (store: $RECOLLECT_HOME)"
exec "$CODE_SERVER" --auth none --bind-addr "127.0.0.1:$PORT" --disable-telemetry --disable-workspace-trust \
  --user-data-dir "$DATA/user-data" --extensions-dir "$DATA/extensions" "$ROOT"
