#!/usr/bin/env bash
# README command 1: install everything a source checkout needs (pinned pnpm, Node dependencies, build, the
# managed Python environment), then serve MCP on stdio. The set-up's output goes to a log file and is shown
# only when it fails, so a client sees one set-up line and the server's one-line banner, on stderr only.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$root/.tooling"
log="$root/.tooling/bootstrap.log"
echo "ipython-mcp: setting up the checkout (the first run takes a minute or two; log: $log)" >&2
if ! bash "$root/tooling/scripts/bootstrap.sh" >"$log" 2>&1; then
  echo "ipython-mcp: set-up failed; its output follows ($log)" >&2
  cat "$log" >&2
  exit 1
fi
exec node "$root/apps/ipython-mcp/dist/cli.js" "$@"
