#!/usr/bin/env bash
# Runs the worker's pytest suite in the project's test environment (.venv, made by `bootstrap.sh --dev`).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root/python"
exec "$root/.venv/bin/python" -m pytest -p no:cacheprovider "$@"
