#!/usr/bin/env bash
# Run the Airflow integration tests against the oldest versions pyproject.toml allows
# (Airflow 3.1, the OpenLineage provider and client floors), in .venv-floor. CI runs it after test.sh.
# Covered: a trivial DAG, the provider metadata, declared lineage and skip state (author/, emit/), the
# Lineage view (ui/: the API in Airflow's app and the browser) and the sample pipelines and demo (samples/).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
LINEAGE_PLUS_VENV="$ROOT/.venv-floor" source "$ROOT/scripts/bootstrap.sh" test
echo "==> pinning the floor versions"
uv pip install --quiet -p "$ROOT/.venv-floor/bin/python" \
  "apache-airflow==3.1.*" \
  "apache-airflow-providers-openlineage==2.20.0" \
  "openlineage-python==1.53.0" "openlineage-integration-common==1.53.0" "openlineage-sql==1.53.0" \
  "openlineage-dbt==1.53.0"
python -c 'import airflow, airflow.providers.openlineage as p; print("floor: Airflow", airflow.__version__, "provider", p.__version__)'
set +e
python -m pytest -n auto --maxprocesses 4 --dist loadgroup --durations 10 \
  tests/test_trivial_dag.py tests/test_provider_info.py tests/author tests/emit tests/ui tests/samples \
  "$@"
status=$?
set -e
[ "$status" -eq 5 ] && { echo "no floor test ran: that is a failure" >&2; exit 1; }
exit "$status"
