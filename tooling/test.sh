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
# The suites in lanes side by side, since on two cores the end-to-end files leave a core idle much of the time (they
# wait on start-ups, sockets and kernels):
#   - apps/ipython-mcp's end-to-end files that may run beside others (its `side by side` group, three at a time);
#   - beside them: lint and typecheck, then the worker's pytest suite, then the other TypeScript packages' suites, two
#     at a time;
#   - once both are done, apps/ipython-mcp's files that must not run three at a time with the rest: its `timing` group
#     (faults, deadlines, interrupts) beside its `pages` group (the browser, JupyterHub), one file of each at a time,
#     and beside them the release matrix (which builds a fresh venv from PyPI and runs the worker's suite again);
#   - then its `memory` group with nothing beside it (docs/decisions/0018-bench-ci.md).
# --quick: the Python suite beside the TypeScript unit suites. IPYTHON_MCP_TEST_LANES=1 runs everything one step after
# the other.
# The worker's pytest suite; the release matrix (a fresh venv from PyPI, the same suite again) is a step of its own.
python_lane=(--filter=@ipython-mcp/python-worker)
node_lane=(--filter='!@ipython-mcp/python-worker' --filter='!@ipython-mcp/release-matrix')
other_packages=("${node_lane[@]}" --filter='!ipython-mcp')
if [ "$quick" = 1 ]; then
  export IPYTHON_MCP_TEST_QUICK=1
fi
checks() {
  [ "$quick" = 1 ] && return 0
  # --only: no build tasks (the bootstrap built everything), so nothing rewrites dist/ while the other lane runs it.
  step 'lint and typecheck (turbo)' pnpm exec turbo run lint typecheck --only --output-logs=errors-only &&
    step 'tooling tests (node --test)' node --test tooling/scripts/lint-rules.test.mjs tooling/scripts/test-summary.test.mjs tooling/bench/lib/noise.test.mjs
}
# One turbo run of the test task as one step of the table (packages one at a time, or $concurrency at a time); turbo's run summary (.turbo/runs/*.json: each package's
# time) is kept with the step's name, so the table lists each package under the step that ran it.
# --only: the bootstrap built everything.
suites() {
  local name="$1" lane_log="$2" status=0 summary
  shift 2
  IPYTHON_MCP_TEST_STEP="$name" pnpm exec turbo run test --only --concurrency="${concurrency:-1}" --continue --output-logs=full --summarize "$@" 2>&1 | tee "$lane_log" || status=$?
  summary="$(grep -ao '/[^[:space:]]*/\.turbo/runs/[[:alnum:]_-]*\.json' "$lane_log" | tail -n 1 || true)"
  if [ -n "$summary" ] && [ -f "$summary" ]; then
    cp "$summary" "$timings/"
    printf '%s\t%s\n' "$name" "$(basename "$summary")" >>"$timings/turbo-steps.tsv"
  fi
  return "$status"
}
suite_step() {
  step "$1" suites "$@"
}
downloads() {
  if [ -n "$prefetch" ]; then
    step 'waiting for the client downloads' wait "$prefetch" || true
    cat "$timings/prefetch.log" >&2
  fi
}
# Beside apps/ipython-mcp's side-by-side files: everything but apps/ipython-mcp, each step run whatever the one
# before it gave (a failure does not hide the later suites).
beside() {
  local status=0
  checks || status=$?
  suite_step 'test suites, Python (pytest)' "$timings/python-lane.log" "${python_lane[@]}" || status=$?
  # Two at a time: the suites wait on workers, kernels and pip more than they compute.
  concurrency=2 suite_step 'test suites, the other TypeScript packages' "$timings/packages-lane.log" "${other_packages[@]}" || status=$?
  return "$status"
}
rm -rf .turbo/runs
status=0
if [ "${IPYTHON_MCP_TEST_LANES:-2}" = 1 ]; then
  checks || status=$?
  downloads
  if [ "$quick" = 1 ]; then lanes=(--filter='!@ipython-mcp/release-matrix'); else lanes=(); fi
  suite_step 'test suites (turbo run test, one lane)' "$log" "${lanes[@]}" || status=$?
elif [ "$quick" = 1 ]; then
  suite_step 'test suites, Python lane (pytest)' "$timings/python-lane.log" "${python_lane[@]}" &
  python_pid=$!
  suite_step 'test suites, TypeScript lane (vitest)' "$log" "${node_lane[@]}" || status=$?
  wait "$python_pid" || status=$?
  cat "$timings/python-lane.log" >>"$log"
else
  beside &
  beside_pid=$!
  downloads
  IPYTHON_MCP_E2E_GROUP='side by side' suite_step 'test suites, apps/ipython-mcp: files side by side' "$log" --filter=ipython-mcp || status=$?
  wait "$beside_pid" || status=$?
  suite_step 'test suites, the release matrix (beside the browser and timing files)' "$timings/matrix.log" --filter=@ipython-mcp/release-matrix &
  matrix_pid=$!
  IPYTHON_MCP_E2E_GROUP=pages suite_step 'test suites, apps/ipython-mcp: the browser and JupyterHub files' "$timings/pages.log" --filter=ipython-mcp &
  pages_pid=$!
  IPYTHON_MCP_E2E_GROUP=timing suite_step 'test suites, apps/ipython-mcp: the fault and timing files (beside the browser files)' "$timings/timing.log" --filter=ipython-mcp || status=$?
  wait "$pages_pid" || status=$?
  wait "$matrix_pid" || status=$?
  IPYTHON_MCP_E2E_GROUP=memory suite_step 'test suites, apps/ipython-mcp: the memory files (nothing beside them)' "$timings/memory.log" --filter=ipython-mcp || status=$?
  for lane in python-lane packages-lane matrix pages timing memory; do
    [ ! -f "$timings/$lane.log" ] || cat "$timings/$lane.log" >>"$log"
  done
fi
step 'orphan check' bash tooling/scripts/check-orphans.sh || status=$?
printf '%s\t%s\n' 'total' "$(awk -v a="$(date +%s.%N)" -v b="$run_started" 'BEGIN { printf "%.1f", a - b }')" >>"$timings/steps.tsv"
node tooling/scripts/test-summary.mjs "$log" "$timings" || status=$?
exit "$status"
