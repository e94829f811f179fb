#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# The Python environment of boto3_peer.py (the boto3 interop peer of the SQS tests, issue 11):
# the testing kit's venv maker with boto3 and botocore from PyPI (pure Python; botocore speaks
# SQS's AWS JSON 1.0 protocol, like the transport).
#
# Usage: boto3_peer.sh VENV_DIR      prints VENV_DIR/bin/python on stdout
# Exit status: 0 ready, 1 the venv could not be made (reason on stderr), 2 bad usage.
set -euo pipefail

BABELQUEUE_PEER_REQUIREMENTS="boto3==1.44.5 botocore==1.44.5" BABELQUEUE_PEER_IMPORTS="boto3" \
  exec bash "$(dirname "${BASH_SOURCE[0]}")/../../../../testing/scripts/python_peer_env.sh" "$@"
