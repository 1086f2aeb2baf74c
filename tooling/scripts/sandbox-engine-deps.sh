#!/usr/bin/env bash
# Installs what the opt-in sandbox's engine (@anthropic-ai/sandbox-runtime) needs on Linux when it is missing:
# bubblewrap, socat and ripgrep, through apt-get as root. The sandbox tests then run, never skip, on a fresh
# machine. Elsewhere (not Linux, no apt-get, not root) it says what to install and carries on: the tests will
# then fail loudly, which is the point.
set -euo pipefail
[ "$(uname -s)" = Linux ] || exit 0
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v socat >/dev/null 2>&1 || missing+=(socat)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
[ "${#missing[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "sandbox engine: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
else
  echo "sandbox engine: missing ${missing[*]}; install them (e.g. sudo apt-get install ${missing[*]}) or the --sandbox tests fail" >&2
fi
