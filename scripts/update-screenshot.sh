#!/usr/bin/env bash
# Refresh the pictures of the Lineage view in the docs: docs/images/lineage-view.png (the README's: the mart
# table, its upstream hops, the failed job) and docs/images/what-changed.png (docs/what-changed.md's: the
# "What changed" panel of the sample's contact dimension). Runs the browser tests that take them, with
# their screenshots written to docs/images instead of a temporary folder.
# Usage: bash scripts/update-screenshot.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=scripts/bootstrap.sh
source "$ROOT/scripts/bootstrap.sh" test
bash "$ROOT/scripts/system-deps.sh"
LINEAGE_PLUS_SCREENSHOT_DIR="$ROOT/docs/images" python -m pytest -p no:xdist -q \
  "tests/ui/test_lineage_browser.py::test_user_finds_the_mart_table_sees_three_hops_and_the_failed_job" \
  "tests/ui/test_lineage_browser.py::test_the_first_page_needs_attention_and_a_dataset_says_what_changed_upstream_of_it"
echo "==> updated docs/images/lineage-view.png and docs/images/what-changed.png"
