#!/usr/bin/env bash
# The README's first command: set up .venv, then run the sample pipelines through real Airflow with
# airflow-lineage-plus, print the lineage report of the mart and serve the Airflow UI (Ctrl-C stops it all).
# Usage: bash scripts/demo.sh [--no-serve] [--port N] [--home DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=scripts/bootstrap.sh
source "$ROOT/scripts/bootstrap.sh" demo
# Python's default: keep the bytecode it compiles, so each of the demo's processes (airflow, dbt, the
# CLI) does not compile Airflow and dbt again (about 10 s a process on a busy 2-core machine).
unset PYTHONDONTWRITEBYTECODE
exec python -m demo "$@"
