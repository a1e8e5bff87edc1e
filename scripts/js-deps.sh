#!/usr/bin/env bash
# JavaScript the tests need: Mermaid's own parser (tests/support/mermaid, checked by tests/test_pictures.py),
# installed with npm into tests/support/mermaid/node_modules when missing. Node comes from system-deps.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/tests/support/mermaid"
[ -d "$DIR/node_modules/mermaid" ] && [ -d "$DIR/node_modules/jsdom" ] && exit 0
if ! command -v npm >/dev/null 2>&1; then
  echo "error: npm not found; run scripts/system-deps.sh (it installs nodejs and npm)" >&2
  exit 1
fi
echo "==> npm install (Mermaid's parser for the picture tests)"
npm install --prefix "$DIR" --no-audit --no-fund --silent
