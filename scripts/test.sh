#!/usr/bin/env bash
# The whole test suite, as CI runs it: set up .venv, lint, format check, type check, then pytest.
# Usage: bash scripts/test.sh [extra pytest args]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=scripts/bootstrap.sh
source "$ROOT/scripts/bootstrap.sh" test
bash "$ROOT/scripts/system-deps.sh"

echo "==> ruff check"
ruff check .
echo "==> ruff format --check"
ruff format --check .
echo "==> mypy"
mypy
echo "==> pytest"
set +e
python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure" >&2
  exit 1
fi
exit "$status"
