#!/usr/bin/env bash
# System packages the tests need from Debian, installed only when missing:
#   chromium, chromium-driver   the browser tests (tests/ui)
#   nodejs, npm                 the Lineage view's JavaScript checks (node --test, ESLint: scripts/js-deps.sh)
#   postgresql                  the production-shaped tests (tests/emit/test_scheduler_postgres.py) and
#                               benchmarks/scheduler_bench.py; they run the server themselves from a temp dir
#   graphviz                    `dot -Tsvg` checks the CLI's `--format dot` pictures (tests/test_pictures.py)
#   redis-server, iproute2      the production-shaped test (tests/deploy): Celery's broker, and the workers'
#                               network namespaces (`ip netns`)
#   pgbouncer                   the lineage store behind a pooler in transaction mode (tests/store/test_pgbouncer.py)
#   nodejs, npm                 Mermaid's own parser checks the `--format mermaid` pictures (scripts/js-deps.sh)
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
# Debian keeps the server programs in /usr/lib/postgresql/<major>/bin, off PATH.
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
[ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "warning: apt-get not found; install ${missing[*]} yourself for the browser, JavaScript and PostgreSQL tests" >&2
  exit 0
fi
echo "==> apt-get install ${missing[*]}"
# Another apt-get may hold the dpkg lock on a shared machine: wait for it rather than fail.
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${missing[@]}" >/dev/null
