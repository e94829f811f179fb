#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# The Python environment of python_peer.py (the confluent-kafka interop peer, issue 10): a venv on
# Debian's /usr/bin/python3 with confluent-kafka from PyPI, whose CPython 3.11 x86_64 wheel
# bundles its own librdkafka. Made once; later calls only compare a stamp. Parallel callers
# wait for each other (flock).
#
# Usage: python_peer.sh VENV_DIR      prints VENV_DIR/bin/python on stdout
# Exit status: 0 ready, 1 the venv could not be made (reason on stderr), 2 bad usage.
# BABELQUEUE_PYTHON (default /usr/bin/python3) picks the interpreter; pip honours PIP_INDEX_URL.
set -euo pipefail

requirements=(confluent-kafka==2.6.1)

fail() {
  echo "python_peer: $*" >&2
  exit 1
}

[ "$#" -eq 1 ] || {
  echo "usage: python_peer.sh VENV_DIR" >&2
  exit 2
}
venv=$(realpath -m -- "$1")
python=${BABELQUEUE_PYTHON:-/usr/bin/python3}
stamp="$venv/kafka-peer.stamp"
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
if ! "$venv/bin/pip" install --disable-pip-version-check --no-input --quiet --only-binary=:all: \
  --retries 2 --timeout 20 "${requirements[@]}" >"$log" 2>&1; then
  rm -rf "$venv"
  tail -n 5 "$log" >&2
  fail "could not install ${requirements[*]} from PyPI (is the package index reachable?)"
fi
"$venv/bin/python" -c 'import confluent_kafka' || fail "the venv at $venv cannot import confluent_kafka"
echo "$wanted" >"$stamp"
echo "$venv/bin/python"
