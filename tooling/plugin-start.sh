#!/usr/bin/env bash
# The plugin's MCP server command (.mcp.json at the repository root), for Claude Code and Codex alike. It maps the
# options a user set at install to the server's settings, sets the plugin up on its first start, then serves MCP
# on stdio. Everything but the protocol goes to stderr; the set-up's own output goes to a log file.
#
# Options arrive as IPYTHON_MCP_PLUGIN_* variables. Claude Code substitutes ${user_config.KEY} into them (an unset
# option is empty); Codex has no install-time options and hands the placeholder on as written, so a value that is
# still a `${...}` placeholder counts as unset. An unset option leaves the usual IPYTHON_MCP_* variables alone.
#
# The set-up (tooling/scripts/bootstrap.sh: pinned pnpm, Node dependencies, build, the managed Python environment)
# runs in a copy of the plugin's files under ipython-mcp's own data directory, one per content of those files:
# the plugin's folder is the client's (Codex re-copies it when a session starts, removing whatever was built in it).
# It runs in a process of its own session, so a client that stops waiting (its MCP start-up timeout) does not cut
# it short: it finishes, and the next start finds it ready. A start while it runs waits for it.
# `--set-up-now BUILD` is that detached set-up (internal).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
data="${IPYTHON_MCP_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/ipython-mcp}/plugin"
# What is not the plugin's source: build output, dependencies, environments, git's own files.
skip='node_modules dist .tooling .git .turbo .venv .venv-eg __pycache__ .pytest_cache .ruff_cache .mypy_cache'

if [ "${1:-}" = "--set-up-now" ]; then
  build="$2"
  cd "$(dirname "$build")"
  status=0
  {
    rm -rf "$build"
    mkdir -p "$build"
    excludes=()
    for name in $skip; do excludes+=(--exclude="$name"); done
    tar -C "$root" "${excludes[@]}" -cf - . | tar -C "$build" -xf -
    bash "$build/tooling/scripts/bootstrap.sh"
  } >"$build.log" 2>&1 || status=$?
  [ "$status" = 0 ] && mkdir -p "$build/.tooling" && date >"$build/.tooling/plugin-ready"
  rm -rf "$build.lock"
  exit "$status"
fi

# The set-up copy of these exact files: a hash of their paths and contents.
key="$(SKIP="$skip" node -e '
  const { createHash } = require("crypto"); const { readdirSync, readFileSync } = require("fs"); const { join } = require("path");
  const skip = new Set(process.env.SKIP.split(" ")); const hash = createHash("sha256");
  // At the top, a client may add files of its own (Claude Code `.in_use`, Codex `.codex-marketplace-install.json`).
  const topDotted = new Set([".claude-plugin", ".mcp.json", ".npmrc"]);
  const walk = (dir, rel) => { for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (skip.has(entry.name) || (rel === "" && entry.name.startsWith(".") && !topDotted.has(entry.name))) continue;
    const path = join(dir, entry.name), name = rel + "/" + entry.name;
    if (entry.isDirectory()) walk(path, name);
    else if (entry.isFile()) hash.update(name + "\0").update(readFileSync(path)).update("\0");
  } };
  walk(process.argv[1], ""); process.stdout.write(hash.digest("hex").slice(0, 16));' "$root")"
build="$data/$key"
lock="$build.lock"
log="$build.log"

# Is the set-up running (its lock held by a live process)? A lock left by a killed set-up is taken over.
set_up_running() {
  local pid
  [ -d "$lock" ] || return 1
  pid="$(cat "$lock/pid" 2>/dev/null || true)"
  # Just made by another start, which writes its pid at once.
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    [ -n "$pid" ] && break
    sleep 0.5
    pid="$(cat "$lock/pid" 2>/dev/null || true)"
  done
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then return 0; fi
  rm -rf "$lock"
  return 1
}

if [ ! -f "$build/.tooling/plugin-ready" ]; then
  mkdir -p "$data"
  if ! set_up_running && mkdir "$lock" 2>/dev/null; then
    # This start holds the lock until the set-up's own pid replaces its own (starting node may take seconds).
    echo "$$" >"$lock/pid"
    echo "ipython-mcp: first start: setting up (Node dependencies, build, Python environment; a few minutes; log: $log)" >&2
    # Node's detached spawn makes a new session (setsid) on every POSIX system, macOS included.
    set_up_pid="$(node -e 'const c = require("child_process").spawn("bash", process.argv.slice(1), { detached: true, stdio: "ignore" }); c.unref(); process.stdout.write(String(c.pid))' \
      "$root/tooling/plugin-start.sh" --set-up-now "$build")"
    # The set-up removes the lock when it ends: write its pid only while the lock is still there.
    { [ -d "$lock" ] && echo "$set_up_pid" >"$lock/pid.new" && mv "$lock/pid.new" "$lock/pid"; } 2>/dev/null || true
  else
    echo "ipython-mcp: waiting for the set-up another start began (log: $log)" >&2
  fi
  while set_up_running; do sleep 0.5; done
  if [ ! -f "$build/.tooling/plugin-ready" ]; then
    echo "ipython-mcp: set-up failed; its output follows ($log)" >&2
    cat "$log" >&2 2>/dev/null || true
    exit 1
  fi
fi

# A plugin option, or nothing when unset or still a `${...}` placeholder.
option() {
  local value="${!1:-}"
  case "$value" in '${'*'}') value='' ;; esac
  printf '%s' "$value"
}
flags=()
python="$(option IPYTHON_MCP_PLUGIN_PYTHON)"
[ -n "$python" ] && export IPYTHON_MCP_PYTHON="${python/#\~/$HOME}"
case "$(option IPYTHON_MCP_PLUGIN_SANDBOX)" in true | 1) export IPYTHON_MCP_SANDBOX=1 ;; esac
token="$(option IPYTHON_MCP_PLUGIN_JUPYTER_TOKEN)"
[ -n "$token" ] && export IPYTHON_MCP_JUPYTER_TOKEN="$token"
url="$(option IPYTHON_MCP_PLUGIN_JUPYTER_URL)"
if [ -n "$url" ]; then
  flags+=(--jupyter "$url")
  notebook="$(option IPYTHON_MCP_PLUGIN_JUPYTER_NOTEBOOK)"
  if [ -n "$notebook" ]; then flags+=(--notebook "$notebook"); else flags+=(--kernel-name python3); fi
fi
unset IPYTHON_MCP_PLUGIN_JUPYTER_URL IPYTHON_MCP_PLUGIN_JUPYTER_TOKEN IPYTHON_MCP_PLUGIN_JUPYTER_NOTEBOOK \
  IPYTHON_MCP_PLUGIN_PYTHON IPYTHON_MCP_PLUGIN_SANDBOX token
# Codex starts the server in the plugin's folder, which it replaces when a later session starts (a worker started
# in a removed directory cannot start): there, work from HOME. Claude Code starts it in the project; stay there.
if [ "$(pwd -P 2>/dev/null)" = "$root" ] || ! pwd -P >/dev/null 2>&1; then cd "$HOME"; fi
exec node "$build/apps/ipython-mcp/dist/cli.js" ${flags[@]+"${flags[@]}"}
