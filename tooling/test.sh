#!/usr/bin/env bash
# README command 2: install what the tests need (Node dependencies, build, the Python test environment) and run
# every test: the TypeScript suites through turbo, then the worker's pytest suite.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash tooling/scripts/bootstrap.sh --dev
export PATH="$root/.tooling/node_modules/.bin:$PATH" TURBO_TELEMETRY_DISABLED=1
export IPYTHON_MCP_TEST_PYTHON="$root/.venv/bin/python"
pnpm exec turbo run lint typecheck --output-logs=errors-only
node --test tooling/scripts/lint-rules.test.mjs
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
pnpm exec turbo run test --concurrency=1 --output-logs=full 2>&1 | tee "$log"
bash tooling/scripts/check-orphans.sh
node tooling/scripts/test-summary.mjs "$log"
