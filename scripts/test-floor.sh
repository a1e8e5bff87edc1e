#!/usr/bin/env bash
# Run the Airflow integration tests against the oldest versions pyproject.toml allows
# (Airflow 3.1, the OpenLineage provider and client floors), in .venv-floor. CI runs it after test.sh.
# Covered: a trivial DAG, the provider metadata, declared lineage and skip state (author/, emit/), the
# Lineage view (ui/: the API in Airflow's app and the browser) and the sample pipelines (samples/).
# Left to test.sh, as they test this package's own logic on seams the files above already cross on the
# floor: the demo (the same sample pipelines, started as a user would), the two schedulers on PostgreSQL
# (the database and the scheduler topology), data contracts (checked in the same listener call as the
# declared lineage), and the browser tests of the graph views and of the one-DAG user (the same page and
# permission filter; the auth manager's answers on the floor are tested by test_permissions_fab.py).
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
python -m pytest -n auto --maxprocesses 4 --dist loadgroup --no-loadscope-reorder --durations 10 \
  tests/test_trivial_dag.py tests/test_provider_info.py tests/author tests/emit tests/ui tests/samples \
  --ignore tests/samples/test_demo.py --ignore tests/emit/test_scheduler_postgres.py \
  --ignore tests/author/test_contracts.py --ignore tests/ui/test_graph_views_browser.py \
  --ignore tests/ui/test_permissions_browser.py \
  "$@"
status=$?
set -e
[ "$status" -eq 5 ] && { echo "no floor test ran: that is a failure" >&2; exit 1; }
exit "$status"
