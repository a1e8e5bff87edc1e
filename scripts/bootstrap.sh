#!/usr/bin/env bash
# Create or reuse .venv and install airflow-lineage-plus with the given extras (default: none).
# Sourced by scripts/demo.sh and scripts/test.sh; safe to run again (it only installs what changed).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${LINEAGE_PLUS_VENV:-$ROOT/.venv}"
EXTRAS="${1:-}"
PY="${PYTHON:-python3}"

"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python 3.10+ is required")'
if [ ! -x "$VENV/bin/python" ]; then
  echo "==> creating virtual environment $VENV"
  "$PY" -m venv "$VENV"
fi
if [ ! -x "$VENV/bin/uv" ]; then
  echo "==> installing uv (fast installer) into $VENV"
  "$VENV/bin/python" -m pip --version >/dev/null 2>&1 || "$VENV/bin/python" -m ensurepip --upgrade >/dev/null
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check uv
fi
target="$ROOT"
[ -n "$EXTRAS" ] && target="$ROOT[$EXTRAS]"
echo "==> installing airflow-lineage-plus${EXTRAS:+[$EXTRAS]} (editable) and Airflow into $VENV"
# LINEAGE_PLUS_PINS (an array the sourcing script may set): versions resolved in the same install
# (scripts/test-floor.sh's floor), so nothing of a newer release is installed first and left behind
"$VENV/bin/uv" pip install --quiet -p "$VENV/bin/python" -e "$target" ${LINEAGE_PLUS_PINS[@]+"${LINEAGE_PLUS_PINS[@]}"}
export PATH="$VENV/bin:$PATH"
# Compiled bytecode, as pip leaves it (uv compiles none): Airflow is some 1,500 modules, and without their
# bytecode every process the demo and the tests start (the tests start hundreds) compiles them again.
# Measured on a busy 2-core machine: a one-task `airflow dags test` took 15.4 s of CPU without it, 11 s
# with it. compileall skips what is up to date; the package's own modules are compiled too (editable).
# test.sh and test-floor.sh call it (the processes tests start write no bytecode: tests/support/harness.py);
# the demo's processes write their own (scripts/demo.sh).
compile_bytecode() {
  local site
  site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  "$VENV/bin/python" -m compileall -qq -j 0 "$site" "$ROOT/airflow_lineage_plus" "$ROOT/demo" \
    "$ROOT/tests/support" >/dev/null 2>&1 || true  # some packages ship files of other Python versions
}
