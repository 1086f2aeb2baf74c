#!/usr/bin/env bash
# Installs everything a source checkout needs, idempotently. All chatter goes to stderr, so this can run in
# front of the MCP server without touching its stdout.
#   bootstrap.sh           Node deps (pinned pnpm), build, managed Python env for the server
#   bootstrap.sh --dev     the same, plus the Python test environment (.venv) used by the test suite
#   bootstrap.sh --node    Node deps and build only (what `npm run pack` needs)
set -euo pipefail
exec 3>&1 1>&2
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
dev=0
node_only=0
[ "${1:-}" = "--dev" ] && dev=1
[ "${1:-}" = "--node" ] && node_only=1
# No "update available" advice from npm or pnpm: the versions here are pinned on purpose.
export npm_config_update_notifier=false NPM_CONFIG_UPDATE_NOTIFIER=false

# Each phase's wall time goes to $IPYTHON_MCP_TEST_TIMINGS/steps.tsv when tooling/test.sh asks (its closing table).
timed() {
  local name="$1" started status=0
  shift
  started="$(date +%s.%N)"
  "$@" || status=$?
  if [ -n "${IPYTHON_MCP_TEST_TIMINGS:-}" ]; then
    printf '  %s\t%s\n' "$name" "$(awk -v a="$(date +%s.%N)" -v b="$started" 'BEGIN { printf "%.1f", a - b }')" >>"$IPYTHON_MCP_TEST_TIMINGS/steps.tsv"
  fi
  return "$status"
}

pnpm_version="$(node -p "require('./package.json').packageManager.split('@')[1]")"
pnpm_bin="$root/.tooling/node_modules/.bin/pnpm"
if [ ! -x "$pnpm_bin" ] || [ "$("$pnpm_bin" --version 2>/dev/null)" != "$pnpm_version" ]; then
  echo "bootstrap: installing pnpm $pnpm_version into .tooling/"
  timed 'bootstrap: pnpm download (npm)' npm install --silent --no-audit --no-fund --prefix "$root/.tooling" "pnpm@$pnpm_version"
fi
export PATH="$root/.tooling/node_modules/.bin:$PATH" TURBO_TELEMETRY_DISABLED=1

python_bin="${IPYTHON_MCP_BOOTSTRAP_PYTHON:-python3}"
# The Python test environments (.venv, .venv-eg) install from PyPI while Node installs from npm: they depend on
# nothing of each other, and on a fresh clone both wait mostly on downloads. Their output is shown when they end.
test_env() {
  if [ ! -x .venv/bin/python ]; then
    echo "bootstrap: creating the Python test environment .venv"
    "$python_bin" -m venv .venv
  fi
  stamp=.venv/.installed-$(cat python/pyproject.toml | cksum | cut -d' ' -f1)
  if [ ! -f "$stamp" ]; then
    echo "bootstrap: installing the worker and its test dependencies into .venv"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e "python[test]"
    touch "$stamp"
  fi
}
# Enterprise Gateway pins jupyter_client 6 and jupyter_server 1: it gets an environment of its own (pyproject's
# enterprise-gateway extra; the Jupyter tests start it from there, and skip it, saying so, when it is missing).
eg_env() {
  if [ ! -x .venv-eg/bin/python ]; then
    echo "bootstrap: creating the Enterprise Gateway test environment .venv-eg"
    "$python_bin" -m venv .venv-eg
  fi
  eg_stamp=.venv-eg/.installed-$(cat python/pyproject.toml | cksum | cut -d' ' -f1)
  if [ ! -f "$eg_stamp" ]; then
    echo "bootstrap: installing Enterprise Gateway into .venv-eg"
    .venv-eg/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
    .venv-eg/bin/python -m pip install --quiet --disable-pip-version-check -e "python[enterprise-gateway]"
    touch "$eg_stamp"
  fi
}
background_logs="$(mktemp -d)"
trap 'status=$?; for job in $(jobs -p); do kill "$job" 2>/dev/null || true; done; rm -rf "$background_logs"; exit "$status"' EXIT
background=()
if [ "$dev" = 1 ]; then
  # The --sandbox tests need the sandbox engine's system tools (bubblewrap, socat, ripgrep).
  timed 'bootstrap: sandbox engine tools (apt)' bash tooling/scripts/sandbox-engine-deps.sh
  timed 'bootstrap: browser (apt)' bash tooling/scripts/browser-deps.sh
  # One after the other: both editable installs of python/ write its .egg-info.
  {
    timed 'bootstrap: Python test environment .venv (pip, beside Node)' test_env &&
      timed 'bootstrap: Enterprise Gateway environment .venv-eg (pip, beside Node)' eg_env
  } >"$background_logs/python.log" 2>&1 &
  background+=("$!:python")
fi
if [ -n "${CI:-}" ] || [ ! -d node_modules/.pnpm ] || [ pnpm-lock.yaml -nt node_modules/.modules.yaml ]; then
  echo "bootstrap: installing Node dependencies"
  timed 'bootstrap: Node dependencies (pnpm install)' pnpm install --frozen-lockfile --reporter=append-only
fi
echo "bootstrap: building"
timed 'bootstrap: build (turbo)' pnpm exec turbo run build --output-logs=errors-only

failed=0
for entry in "${background[@]}"; do
  status=0
  wait "${entry%%:*}" || status=$?
  cat "$background_logs/${entry#*:}.log"
  if [ "$status" != 0 ]; then
    echo "bootstrap: setting up the ${entry#*:} test environments failed (exit $status)"
    failed=1
  fi
done
[ "$failed" = 0 ] || exit 1
if [ "$dev" = 1 ]; then
  # ipython-mcp's JupyterLab extension (packages/jupyterlab-extension, built above) in the test environment's
  # JupyterLab, as a prebuilt extension: a link to the build, so a rebuild is what the next JupyterLab loads.
  labextensions=.venv/share/jupyter/labextensions/@ipython-mcp
  mkdir -p "$labextensions"
  ln -sfn "$root/packages/jupyterlab-extension/dist/labextension" "$labextensions/jupyterlab-extension"
fi
if [ "$node_only" = 0 ] && [ "$dev" = 0 ]; then
  node apps/ipython-mcp/dist/cli.js setup
fi
echo "bootstrap: done"
