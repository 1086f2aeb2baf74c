#!/usr/bin/env bash
# README command 2: install what the tests need (Node dependencies, build, the Python test environment) and run
# every test: the TypeScript suites through turbo, then the worker's pytest suite. Ends with a table of where the
# time went (set-up steps, each package's suite, the slowest test files) and the closing line "tests: N passed".
#   tooling/test.sh           everything
#   tooling/test.sh --quick   the inner loop: no lint/typecheck, no end-to-end files (*.e2e.test.ts), no release
#                             matrix, no client downloads; the unit suites and the worker's pytest suite
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
quick=0
[ "${1:-}" = "--quick" ] && quick=1
timings="$(mktemp -d)"
log="$timings/test.log"
trap 'status=$?; [ -z "${prefetch:-}" ] || kill "$prefetch" 2>/dev/null || true; rm -rf "$timings"; exit "$status"' EXIT
export IPYTHON_MCP_TEST_TIMINGS="$timings"
# Every step's wall time, for the table at the end: "name<TAB>seconds".
step() {
  local name="$1" started ended status=0
  shift
  started="$(date +%s.%N)"
  "$@" || status=$?
  ended="$(date +%s.%N)"
  printf '%s\t%s\n' "$name" "$(awk -v a="$ended" -v b="$started" 'BEGIN { printf "%.1f", a - b }')" >>"$timings/steps.tsv"
  return "$status"
}
run_started="$(date +%s.%N)"
prefetch=''
if [ "$quick" = 0 ]; then
  # The end-to-end suites' client CLIs and npm servers download beside the bootstrap, lint and typecheck (network
  # against CPU); the suites start once they are in place.
  node tooling/scripts/prefetch-clients.mjs 2>"$timings/prefetch.log" &
  prefetch=$!
fi
step 'bootstrap (install, build, test environments)' bash tooling/scripts/bootstrap.sh --dev
export PATH="$root/.tooling/node_modules/.bin:$PATH" TURBO_TELEMETRY_DISABLED=1
export IPYTHON_MCP_TEST_PYTHON="$root/.venv/bin/python"
# Two lanes side by side: the TypeScript suites in one; in the other lint and typecheck, then the Python side (the
# worker's pytest suite; the release matrix, which builds a fresh venv from PyPI and runs that suite again). Neither
# needs the other, and on two cores the e2e suites leave a core idle much of the time (they wait on start-ups,
# sockets and kernels). IPYTHON_MCP_TEST_LANES=1 runs everything one step after the other, as before.
python_lane=(--filter=@ipython-mcp/python-worker --filter=@ipython-mcp/release-matrix)
node_lane=(--filter='!@ipython-mcp/python-worker' --filter='!@ipython-mcp/release-matrix')
if [ "$quick" = 1 ]; then
  export IPYTHON_MCP_TEST_QUICK=1
  python_lane=(--filter=@ipython-mcp/python-worker)
fi
checks() {
  [ "$quick" = 1 ] && return 0
  # --only: no build tasks (the bootstrap built everything), so nothing rewrites dist/ while the other lane runs it.
  step 'lint and typecheck (turbo)' pnpm exec turbo run lint typecheck --only --output-logs=errors-only &&
    step 'tooling tests (node --test)' node --test tooling/scripts/lint-rules.test.mjs tooling/scripts/test-summary.test.mjs tooling/bench/lib/noise.test.mjs
}
# turbo's own run summary (.turbo/runs/*.json) gives each package's time; --only: the bootstrap built everything.
suites() {
  local lane_log="$1"
  shift
  pnpm exec turbo run test --only --concurrency=1 --continue --output-logs=full --summarize "$@" 2>&1 | tee "$lane_log"
}
downloads() {
  if [ -n "$prefetch" ]; then
    step 'waiting for the client downloads' wait "$prefetch" || true
    cat "$timings/prefetch.log" >&2
  fi
}
rm -rf .turbo/runs
status=0
if [ "${IPYTHON_MCP_TEST_LANES:-2}" = 1 ]; then
  checks || status=$?
  downloads
  if [ "$quick" = 1 ]; then lanes=(--filter='!@ipython-mcp/release-matrix'); else lanes=(); fi
  step 'test suites (turbo run test, one lane)' suites "$log" "${lanes[@]}" || status=$?
else
  { checks && step 'test suites, Python lane (pytest, release matrix)' suites "$timings/python-lane.log" "${python_lane[@]}"; } &
  python_pid=$!
  downloads
  step 'test suites, TypeScript lane (vitest)' suites "$log" "${node_lane[@]}" || status=$?
  wait "$python_pid" || status=$?
  [ ! -f "$timings/python-lane.log" ] || cat "$timings/python-lane.log" >>"$log"
fi
cp .turbo/runs/*.json "$timings/" 2>/dev/null || true
step 'orphan check' bash tooling/scripts/check-orphans.sh || status=$?
printf '%s\t%s\n' 'total' "$(awk -v a="$(date +%s.%N)" -v b="$run_started" 'BEGIN { printf "%.1f", a - b }')" >>"$timings/steps.tsv"
node tooling/scripts/test-summary.mjs "$log" "$timings" || status=$?
exit "$status"
