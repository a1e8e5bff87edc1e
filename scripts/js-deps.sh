#!/usr/bin/env bash
# The JavaScript the tests need (ESLint and node --test for the view, whose page runs in jsdom; Mermaid's
# parser and jsdom for tests/test_pictures.py), from tests/js/package.json and its lockfile into tests/js/node_modules (npm ci:
# the locked versions, nothing else). system-deps.sh installs nodejs and npm from Debian when missing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT/tests/js"
if [ -x node_modules/.bin/eslint ] && cmp -s package-lock.json node_modules/.installed-from.json 2>/dev/null; then
  exit 0  # installed from this lockfile already
fi
echo "==> npm ci (tests/js: ESLint, Mermaid)"
npm ci --no-audit --no-fund --loglevel=error
cp package-lock.json node_modules/.installed-from.json
