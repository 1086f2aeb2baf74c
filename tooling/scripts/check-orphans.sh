#!/usr/bin/env bash
# Fails if anything started from this checkout's tests is left behind after the suites ran:
# - a worker process re-parented to init (every worker must have an owner that ends it);
# - a process a test's cell started (it carries IPYTHON_MCP_TEST_RUN_TAG and this checkout's paths in its
#   environment) whose worker, the leader of its process group, is gone: the group must end with its worker;
# - a Jupyter server, Kernel Gateway or kernel started with this checkout's .venv (by absolute path, as they are).
# A worker's group watchdog (`ipython-mcp-wd`) is re-parented to init by design; it is left behind only once its
# worker is gone.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
sleep 1

# Whether the leader of process group $1 is alive (not a zombie).
leader_alive() {
  local state
  state="$(awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null || true)"
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

orphans=()
for status in /proc/[0-9]*/status; do
  pid="${status#/proc/}"; pid="${pid%/status}"
  [ "$pid" = "$$" ] && continue
  state="$(awk '/^State:/ {print $2}' "$status" 2>/dev/null || true)"
  { [ -z "$state" ] || [ "$state" = Z ]; } && continue
  stat="$(cat "/proc/$pid/stat" 2>/dev/null || true)"
  [ -z "$stat" ] && continue
  read -r _state ppid pgid _rest <<< "${stat##*) }"
  cmdline="$( { tr '\0' ' ' < "/proc/$pid/cmdline"; } 2>/dev/null || true)"
  case "$cmdline" in
    *ipython_mcp_worker*"$root"*|*"$root"*ipython_mcp_worker*)
      if [ "$ppid" = 1 ]; then
        comm="$(cat "/proc/$pid/comm" 2>/dev/null || true)"
        if [ "$comm" = ipython-mcp-wd ] && leader_alive "$pgid"; then continue; fi
        orphans+=("$pid")
      fi
      continue ;;
  esac
  # A Jupyter server, Kernel Gateway or kernel from this checkout's test .venv outlives no suite: each test file
  # stops its server and every kernel under it.
  case "$cmdline" in
    "$root"/.venv/bin/python*" -m jupyter "*|"$root"/.venv/bin/python*ipykernel_launcher*)
      orphans+=("$pid"); continue ;;
  esac
  environ="$( { tr '\0' '\n' < "/proc/$pid/environ"; } 2>/dev/null || true)"
  case "$environ" in *IPYTHON_MCP_TEST_RUN_TAG=*) ;; *) continue ;; esac
  case "$environ" in *"$root"*) ;; *) continue ;; esac
  if [ "$pgid" != "$pid" ] && ! leader_alive "$pgid"; then orphans+=("$pid"); fi
done
if [ ${#orphans[@]} -gt 0 ]; then
  echo "check-orphans: ${#orphans[@]} process(es) left behind: ${orphans[*]}" >&2
  for pid in "${orphans[@]}"; do echo "  $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-120)" >&2; done
  exit 1
fi
echo "check-orphans: no orphaned worker processes and nothing left behind by a cell"
