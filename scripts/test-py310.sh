#!/usr/bin/env bash
# The Airflow-free unit tests (graph, redaction, time parsing) on the lowest Python pyproject.toml allows
# (3.10), in .venv-py310. CI runs it after test.sh; it installs no Airflow (about 30 s when cached).
# A Python 3.10: $LINEAGE_PLUS_PY310, else one found on this machine (pyenv, /usr/bin), else the one uv
# downloads (`uv venv -p 3.10`, which needs the network to python-build-standalone).
# Usage: bash scripts/test-py310.sh [extra pytest args]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv-py310"
UV="${UV:-$ROOT/.venv/bin/uv}"
if [ ! -x "$UV" ]; then
  # shellcheck source=scripts/bootstrap.sh
  source "$ROOT/scripts/bootstrap.sh"  # creates .venv with uv (test.sh, run first in CI, already did)
  UV="$ROOT/.venv/bin/uv"
fi

find_python310() {
  if [ -n "${LINEAGE_PLUS_PY310:-}" ]; then echo "$LINEAGE_PLUS_PY310"; return; fi
  local candidate
  for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.10*/bin/python3.10 /usr/bin/python3.10 \
    /usr/local/bin/python3.10; do
    if [ -x "$candidate" ]; then echo "$candidate"; return; fi
  done
  echo "3.10"  # uv finds one on PATH or downloads a managed build
}

if [ ! -x "$VENV/bin/python" ]; then
  PY310="$(find_python310)"
  echo "==> creating $VENV with Python $PY310"
  "$UV" venv --quiet -p "$PY310" "$VENV"
fi
"$VENV/bin/python" -c 'import sys; assert sys.version_info[:2] == (3, 10), sys.version'

# pyproject's runtime dependencies without Airflow and its providers, and the test tools these tests use
mapfile -t REQUIREMENTS < <("$VENV/bin/python" - <<'PY'
import re
text = open("pyproject.toml").read()
def block(name):
    body = re.search(rf"^{name} = \[(.*?)^\]", text, re.S | re.M).group(1)
    return re.findall(r'^\s*"([^"]+)"', body, re.M)
wanted = {"pytest", "pytest-timeout", "pytest-xdist", "hypothesis", "jsonschema", "referencing", "psycopg"}
for requirement in block("dependencies"):
    if not requirement.startswith("apache-airflow"):
        print(requirement)
for requirement in block("test"):
    if re.split(r"[<>=\[ ]", requirement)[0] in wanted:
        print(requirement)
print("pyyaml")
PY
)
echo "==> installing ${REQUIREMENTS[*]} and airflow-lineage-plus (no Airflow) into $VENV"
"$UV" pip install --quiet -p "$VENV/bin/python" "${REQUIREMENTS[@]}"
"$UV" pip install --quiet -p "$VENV/bin/python" --compile-bytecode --no-deps -e "$ROOT"  # bootstrap.sh: why

echo "==> pytest on Python 3.10 (Airflow-free tests)"
set +e
# The same tests/conftest.py as test.sh (it loads without Airflow): the assertion-count guard (which
# tests/test_assertion_count.py checks on this Python too), the fresh-process hook and the end-of-run
# counts apply here too.
# The store's import test runs the lineage-plus CLI, which reads [lineage_plus] without Airflow (conf.py).
# On every core, as test.sh runs (groups and order from the same conftest).
"$VENV/bin/python" -m pytest -n auto --maxprocesses 4 --dist loadgroup --no-loadscope-reorder --durations 5 \
  tests/graph tests/deliver/test_redaction_catalogue.py tests/test_timestamps.py tests/test_py310_guard.py \
  tests/test_assertion_count.py "$@"
status=$?
set -e
[ "$status" -eq 5 ] && { echo "no Python 3.10 test ran: that is a failure" >&2; exit 1; }
exit "$status"
