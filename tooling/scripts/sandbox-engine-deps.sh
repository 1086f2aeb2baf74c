#!/usr/bin/env bash
# Installs the system tools the tests need on Linux when they are missing, through apt-get as root: what the
# opt-in sandbox's engine (@anthropic-ai/sandbox-runtime) needs (bubblewrap, socat, ripgrep), and an SSH server and
# client for the tested SSH-tunnel recipe of docs/clients.md (openssh-server, openssh-client). The sandbox tests then run, never skip, on a fresh
# machine. Elsewhere (not Linux, no apt-get, not root) it says what to install and carries on: the tests will
# then fail loudly, which is the point.
set -euo pipefail
[ "$(uname -s)" = Linux ] || exit 0
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v socat >/dev/null 2>&1 || missing+=(socat)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
[ "${#missing[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test system tools: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
else
  echo "test system tools: missing ${missing[*]}; install them (e.g. sudo apt-get install ${missing[*]}) or the --sandbox and SSH-tunnel tests fail" >&2
fi
