#!/usr/bin/env bash
# The plugin's MCP server command (.mcp.json at the repository root), for Claude Code and Codex alike. It maps the
# options a user set at install to the server's settings, sets the checkout up on its first start, then serves MCP
# on stdio. Everything but the protocol goes to stderr; the set-up's own output goes to .tooling/bootstrap.log.
#
# Options arrive as IPYTHON_MCP_PLUGIN_* variables. Claude Code substitutes ${user_config.KEY} into them (an unset
# option is empty); Codex has no install-time options and hands the placeholder on as written, so a value that is
# still a `${...}` placeholder counts as unset. An unset option leaves the usual IPYTHON_MCP_* variables alone.
#
# The first start runs the set-up (tooling/scripts/bootstrap.sh: pinned pnpm, Node dependencies, build, the
# managed Python environment) in a process of its own session, so a client that stops waiting (its MCP start-up
# timeout) does not cut it short: it finishes, and the next start finds the checkout ready. A second start while
# it runs waits for it. `--set-up-now` is that detached set-up (internal).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
state="$root/.tooling"
log="$state/bootstrap.log"
stamp="$state/plugin-ready"
lock="$state/plugin-set-up.lock"
# What the set-up was made from: the commit when the checkout is a git work tree (a clone marketplace that the
# user updates), else the plugin's own copy, which a client never changes in place.
revision() {
  if [ "$(git -C "$root" rev-parse --show-toplevel 2>/dev/null)" = "$root" ]; then git -C "$root" rev-parse HEAD; else echo copy; fi
}

if [ "${1:-}" = "--set-up-now" ]; then
  status=0
  bash "$root/tooling/scripts/bootstrap.sh" >"$log" 2>&1 || status=$?
  [ "$status" = 0 ] && revision >"$stamp"
  rm -rf "$lock"
  exit "$status"
fi

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

if [ ! -f "$root/apps/ipython-mcp/dist/cli.js" ] || [ "$(cat "$stamp" 2>/dev/null || true)" != "$(revision)" ]; then
  mkdir -p "$state"
  if ! set_up_running && mkdir "$lock" 2>/dev/null; then
    # This start holds the lock until the set-up's own pid replaces its own (starting node may take seconds).
    echo "$$" >"$lock/pid"
    echo "ipython-mcp: first start: setting up (Node dependencies, build, Python environment; a few minutes; log: $log)" >&2
    # Node's detached spawn makes a new session (setsid) on every POSIX system, macOS included.
    set_up_pid="$(node -e 'const c = require("child_process").spawn("bash", process.argv.slice(1), { detached: true, stdio: "ignore" }); c.unref(); process.stdout.write(String(c.pid))' \
      "$root/tooling/plugin-start.sh" --set-up-now)"
    # The set-up removes the lock when it ends: write its pid only while the lock is still there.
    [ -d "$lock" ] && echo "$set_up_pid" >"$lock/pid.new" && mv "$lock/pid.new" "$lock/pid" 2>/dev/null || true
  else
    echo "ipython-mcp: waiting for the set-up another start began (log: $log)" >&2
  fi
  while set_up_running; do sleep 0.5; done
  if [ "$(cat "$stamp" 2>/dev/null || true)" != "$(revision)" ]; then
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
exec node "$root/apps/ipython-mcp/dist/cli.js" ${flags[@]+"${flags[@]}"}
