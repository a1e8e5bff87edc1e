#!/usr/bin/env bash
# The whole test suite against the oldest versions pyproject.toml allows (Airflow 3.1, the OpenLineage
# provider and client floors), in .venv-floor. CI runs it after test.sh.
# Every file of tests/ runs here except those named in LEFT_OUT below, each with its reason;
# tests/test_floor_coverage.py (which runs here too) fails when a named path no longer exists or its
# reason says nothing, and when the run is not the whole of tests/ less those paths.
# Usage: bash scripts/test-floor.sh [extra pytest args]
#        bash scripts/test-floor.sh --prepare   (set up .venv-floor only; .ci/run does it beside test.sh)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# path | why it does not run on the floor (CI's budget: the whole of .ci/run under 25 minutes on 2 cores)
LEFT_OUT=(
  "tests/graph|Airflow-free (test_no_airflow.py checks graph/ imports no Airflow): the Airflow and provider versions cannot change it; test-py310.sh runs it on the lowest Python"
  "tests/samples/test_demo.py|the same sample pipelines as samples/test_sample_pipelines.py (run here), only started as a user would; 1.6 minutes"
  "tests/emit/test_scheduler_postgres.py|the database and the two-scheduler topology, not the Airflow version: the same race runs here on SQLite (reliability/test_listener_idempotence.py)"
  "tests/author/test_contracts.py|data contracts are checked in the same listener call as the declared lineage, which author/ runs here"
  "tests/ui/test_graph_views_browser.py|the same page and API as ui/test_lineage_browser.py (run here), other graph shapes"
  "tests/ui/test_permissions_browser.py|the same permission filter as ui/test_permissions_fab.py (run here: the FAB auth manager's answers on the floor), in the browser"
  "tests/reliability/test_fault_injection.py|3.7 minutes of timed runs the CI budget cannot afford twice; the containment it times is this package's code, and the provider seams it crosses (listener, transport factory, execution_timeout) are crossed here by emit/, deliver/ and act/"
  "tests/cli/test_what_changed_command.py|what-changed is graph/ reading the lineage store (Airflow-free, left out above); the Airflow seams its 9 recorded runs cross (TaskFlow @lineage, runtime.record, set_schema, assertion, sql, a failed task) are crossed here by author/test_declared_lineage_runs.py, and set_execution_mode by author/test_declared_skip.py; 1.2 minutes"
  "tests/test_reference_specs.py|how the tests find the OpenLineage and Marquez specs (this repository's copy, ../shared, the cache) and that a fresh clone validates offline: files and lookups of this repository that the Airflow and provider versions cannot change; every floor test that validates an event uses the same lookup here"
  "tests/deploy/test_production_topology.py|the deployment (PostgreSQL, Redis, Celery, two API servers, network namespaces), not the Airflow version: the endpoint, the transport's spool and its retry run here in ui/test_collector.py and deliver/test_collector_writer.py; 2.4 minutes"
  "tests/deliver/test_redaction_catalogue.py|Airflow-free (the catalogue's patterns over plain strings and JSON bytes): the Airflow and provider versions cannot change it, and test-py310.sh runs it on the lowest Python; the same kinds of secret go through the real transport with Airflow's masker loaded in deliver/test_secret_kinds.py, run here"
  "tests/author/test_gx_quality.py|Great Expectations' results become dataQualityAssertions by this package's code and reach the provider's own run the way runtime.assertion's do, which author/test_declared_lineage_runs.py runs here; GX has no floor of its own"
  "tests/declared/test_diff_samples.py|lineage-plus diff parses each git ref with the same DagBag parse as declared/test_static_lineage.py (run here) and weighs the changes with graph/ (Airflow-free)"
  "tests/reliability/test_api_server_reader.py|the memory of this package's reader over 200 refreshes; Airflow's API server with the plugin is started here by ui/test_permissions_fab.py and ui/test_lineage_browser.py"
)

# The floor's versions, resolved with the package in one install (scripts/bootstrap.sh).
# cryptography<51: Airflow 3.1's get_fernet sets an attribute on cryptography's MultiFernet, which
# cryptography 51 (a Rust class now) refuses, so every connection password reads as nothing once a
# fernet key is set (the ingest key, SMTP's password). Airflow's constraints file for 3.1.8 pins it lower;
# Airflow 3.2 and later wrap MultiFernet and run with 51 (scripts/test.sh).
LINEAGE_PLUS_PINS=(
  "apache-airflow==3.1.*" "cryptography<51"
  "apache-airflow-providers-openlineage==2.20.0"
  "openlineage-python==1.53.0" "openlineage-integration-common==1.53.0" "openlineage-sql==1.53.0"
  "openlineage-dbt==1.53.0"
)
echo "==> the floor: ${LINEAGE_PLUS_PINS[*]}"
LINEAGE_PLUS_VENV="$ROOT/.venv-floor" source "$ROOT/scripts/bootstrap.sh" test
compile_bytecode  # the floor's versions (scripts/bootstrap.sh)
python -c 'import airflow, airflow.providers.openlineage as p; print("floor: Airflow", airflow.__version__, "provider", p.__version__)'
[ "${1:-}" = "--prepare" ] && exit 0
ignores=()
echo "==> left out on the floor:"
for entry in "${LEFT_OUT[@]}"; do
  echo "    ${entry%%|*}: ${entry#*|}"
  ignores+=(--ignore "${entry%%|*}")
done
set +e
python -m pytest -n auto --maxprocesses 4 --dist loadgroup --no-loadscope-reorder --durations 10 \
  tests "${ignores[@]}" "$@"
status=$?
set -e
[ "$status" -eq 5 ] && { echo "no floor test ran: that is a failure" >&2; exit 1; }
exit "$status"
