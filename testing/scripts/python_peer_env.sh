#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# Testing kit: the Python environment of a transport's interop peer (a Python client run by its
# tests): a venv on Debian's /usr/bin/python3 with pinned packages from PyPI; by default the
# Python reference SDK and its AMQP client (the RabbitMQ peer, transports/amqp/test/support).
# Created once; later calls only check a stamp. Safe to call from parallel tests (flock).
#
# Usage: python_peer_env.sh VENV_DIR      prints VENV_DIR/bin/python on stdout
# Exit status: 0 ready, 1 the venv could not be made (reason on stderr), 2 bad usage.
# BABELQUEUE_PYTHON (default /usr/bin/python3) picks the interpreter; pip honours PIP_INDEX_URL.
# Other peers reuse it with their own pins: BABELQUEUE_PEER_REQUIREMENTS (space-separated) and
# BABELQUEUE_PEER_IMPORTS (the modules the venv must import, comma-separated), e.g. the Kafka
# tests' support/python_peer.sh.
set -euo pipefail

read -r -a requirements <<<"${BABELQUEUE_PEER_REQUIREMENTS:-babelqueue==1.24.0 pika==1.4.4}"
imports=${BABELQUEUE_PEER_IMPORTS:-babelqueue, pika, babelqueue.pika_transport}

fail() {
  echo "python_peer_env: $*" >&2
  exit 1
}

[ "$#" -eq 1 ] || {
  echo "usage: python_peer_env.sh VENV_DIR" >&2
  exit 2
}
venv=$(realpath -m -- "$1")
python=${BABELQUEUE_PYTHON:-/usr/bin/python3}
stamp="$venv/babelqueue-peer.stamp"
wanted="${requirements[*]} $("$python" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null)" ||
  fail "no usable interpreter at $python"

ready() { [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; }

if ready; then
  echo "$venv/bin/python"
  exit 0
fi

mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if ready; then
  echo "$venv/bin/python"
  exit 0
fi

rm -rf "$venv"
"$python" -m venv "$venv" >&2 ||
  fail "'$python -m venv' failed (Debian: apt-get install python3-venv, see scripts/install-deps)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! "$venv/bin/pip" install --disable-pip-version-check --no-input --quiet \
  --retries 2 --timeout 20 "${requirements[@]}" >"$log" 2>&1; then
  rm -rf "$venv"
  tail -n 5 "$log" >&2
  fail "could not install ${requirements[*]} from PyPI (is the package index reachable?)"
fi
"$venv/bin/python" -c "import $imports" || fail "the venv at $venv cannot import $imports"
echo "$wanted" >"$stamp"
echo "$venv/bin/python"
