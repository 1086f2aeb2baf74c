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

pnpm_version="$(node -p "require('./package.json').packageManager.split('@')[1]")"
pnpm_bin="$root/.tooling/node_modules/.bin/pnpm"
if [ ! -x "$pnpm_bin" ] || [ "$("$pnpm_bin" --version 2>/dev/null)" != "$pnpm_version" ]; then
  echo "bootstrap: installing pnpm $pnpm_version into .tooling/"
  npm install --silent --no-audit --no-fund --prefix "$root/.tooling" "pnpm@$pnpm_version"
fi
export PATH="$root/.tooling/node_modules/.bin:$PATH" TURBO_TELEMETRY_DISABLED=1

if [ -n "${CI:-}" ] || [ ! -d node_modules/.pnpm ] || [ pnpm-lock.yaml -nt node_modules/.modules.yaml ]; then
  echo "bootstrap: installing Node dependencies"
  pnpm install --frozen-lockfile --reporter=append-only
fi
echo "bootstrap: building"
pnpm exec turbo run build --output-logs=errors-only

python_bin="${IPYTHON_MCP_BOOTSTRAP_PYTHON:-python3}"
if [ "$node_only" = 1 ]; then
  :
elif [ "$dev" = 1 ]; then
  # The --sandbox tests need the sandbox engine's system tools (bubblewrap, socat, ripgrep).
  bash tooling/scripts/sandbox-engine-deps.sh
  bash tooling/scripts/browser-deps.sh
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
  # Enterprise Gateway pins jupyter_client 6 and jupyter_server 1: it gets an environment of its own (pyproject's
  # enterprise-gateway extra; the Jupyter tests start it from there, and skip it, saying so, when it is missing).
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
else
  node apps/ipython-mcp/dist/cli.js setup
fi
echo "bootstrap: done"
