#!/usr/bin/env bash
# Installs the browser the notebook tests drive (apps/ipython-mcp/test/notebook-browser.e2e.test.ts): Debian's
# chromium package, through apt-get as root, when it is missing. playwright-core drives it by its path; no browser is
# ever downloaded from elsewhere. Elsewhere (not Linux, no apt-get, not root) it says what to install and carries on:
# the browser test then fails loudly, which is the point.
set -euo pipefail
[ "$(uname -s)" = Linux ] || exit 0
command -v chromium >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test browser: installing chromium" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
else
  echo "test browser: chromium is missing; install it (e.g. sudo apt-get install chromium) or the notebook browser test fails" >&2
fi
