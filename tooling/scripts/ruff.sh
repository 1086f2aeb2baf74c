#!/usr/bin/env bash
# The Python lint: ruff on the worker and its tests, then mypy strict on the worker package (python/pyproject.toml,
# [tool.mypy]). Both come from the test environment (.venv, made by `bootstrap.sh --dev`).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root/python"
"$root/.venv/bin/ruff" check ipython_mcp_worker tests
exec "$root/.venv/bin/python" -m mypy
