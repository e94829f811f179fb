#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# The Python environment of python_peer.py (the confluent-kafka interop peer, issue 10): the
# testing kit's venv maker with confluent-kafka from PyPI, whose CPython 3.11 x86_64 wheel bundles
# its own librdkafka.
#
# Usage: python_peer.sh VENV_DIR      prints VENV_DIR/bin/python on stdout
# Exit status: 0 ready, 1 the venv could not be made (reason on stderr), 2 bad usage.
set -euo pipefail

BABELQUEUE_PEER_REQUIREMENTS="confluent-kafka==2.6.1" BABELQUEUE_PEER_IMPORTS="confluent_kafka" \
  exec bash "$(dirname "${BASH_SOURCE[0]}")/../../../../testing/scripts/python_peer_env.sh" "$@"
