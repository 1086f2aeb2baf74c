#!/usr/bin/env bash
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root/python"
exec "$root/.venv/bin/ruff" check ipython_mcp_worker tests
