#!/usr/bin/env bash
# The whole test suite, as CI runs it: set up .venv, lint, format check, type check, then pytest.
# Usage: bash scripts/test.sh [extra pytest args]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=scripts/bootstrap.sh
source "$ROOT/scripts/bootstrap.sh" test
compile_bytecode
bash "$ROOT/scripts/system-deps.sh"

echo "==> ruff check"
ruff check .
echo "==> ruff format --check"
ruff format --check .
# mypy keeps one core busy for half a minute: the JavaScript checks (mostly npm's downloads) run beside it
echo "==> mypy and, beside it, JavaScript: ESLint, node --test (tests/js)"
# shellcheck source=scripts/background.sh
source "$ROOT/scripts/background.sh"
in_background mypy mypy
bash "$ROOT/scripts/js-deps.sh"
tests/js/node_modules/.bin/eslint -c tests/js/eslint.config.mjs airflow_lineage_plus/ui/static tests/js
node --test tests/js/
echo "==> mypy"
await_background mypy
echo "==> pytest"
# Both cores (more where there are more, up to 4). Tests are distributed by file (each file's module-scoped
# Airflow runs are made once) and the tests sharing the sample pipelines' recording run on one worker
# (the xdist groups of tests/conftest.py), taken longest first (the order conftest.py gives them). Each
# worker has its own AIRFLOW_HOME and metadata database. At the end pytest prints how many events were
# validated against the OpenLineage schemas and how many tests passed per area (tests/support/run_report.py).
set +e
python -m pytest -n auto --maxprocesses 4 --dist loadgroup --no-loadscope-reorder --durations 25 "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure" >&2
  exit 1
fi
exit "$status"
