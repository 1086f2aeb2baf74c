#!/usr/bin/env bash
# README command 1: install everything a source checkout needs (pinned pnpm, Node dependencies, build, the
# managed Python environment), then serve MCP on stdio. Set-up output goes to stderr only.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/tooling/scripts/bootstrap.sh"
exec node "$root/apps/ipython-mcp/dist/cli.js" "$@"
