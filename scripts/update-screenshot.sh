#!/usr/bin/env bash
# Refresh docs/images/lineage-view.png (the README's picture of the Lineage view): runs the browser test that
# takes it, with its screenshot written to docs/images instead of a temporary folder.
# Usage: bash scripts/update-screenshot.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=scripts/bootstrap.sh
source "$ROOT/scripts/bootstrap.sh" test
bash "$ROOT/scripts/system-deps.sh"
LINEAGE_PLUS_SCREENSHOT_DIR="$ROOT/docs/images" python -m pytest -p no:xdist -q \
  "tests/ui/test_lineage_browser.py::test_user_finds_the_mart_table_sees_three_hops_and_the_failed_job"
echo "==> updated docs/images/lineage-view.png"
