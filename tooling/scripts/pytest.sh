#!/usr/bin/env bash
# Runs the worker's pytest suite in the project's test environment (.venv, made by `bootstrap.sh --dev`).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root/python"
# Under tooling/test.sh, each test's time goes to a JUnit XML file for the closing table (the release matrix runs
# pytest its own way, so its copy of the suite does not overwrite this one).
timing=()
[ -z "${IPYTHON_MCP_TEST_TIMINGS:-}" ] || timing=(--junitxml="$IPYTHON_MCP_TEST_TIMINGS/pytest.xml")
exec "$root/.venv/bin/python" -m pytest -p no:cacheprovider "${timing[@]}" "$@"
