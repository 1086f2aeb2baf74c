#!/usr/bin/env bash
# Fails if any worker process started from this checkout is left behind with no parent (re-parented to init)
# after the test suites ran: every process the tests start must have an owner that ends it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
sleep 1
orphans=()
for status in /proc/[0-9]*/status; do
  pid="${status#/proc/}"; pid="${pid%/status}"
  cmdline="$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null || true)"
  case "$cmdline" in
    *ipython_mcp_worker*) ;;
    *) continue ;;
  esac
  case "$cmdline" in
    *"$root"*) ;;
    *) continue ;;
  esac
  ppid="$(awk '/^PPid:/ {print $2}' "$status" 2>/dev/null || echo 0)"
  if [ "$ppid" = 1 ]; then orphans+=("$pid"); fi
done
if [ ${#orphans[@]} -gt 0 ]; then
  echo "check-orphans: ${#orphans[@]} orphaned worker process(es) left behind: ${orphans[*]}" >&2
  exit 1
fi
echo "check-orphans: no orphaned worker processes"
