#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# Testing kit: the npm packages of the fake Pulsar broker (pulsar-flex's protocol code, lz4js,
# snappyjs, zstd-codec) and of its self-check (pulsar-flex as the client), installed by
# ../npm_install.sh into BUILD_DIR/pulsar-peer.
#
# Usage: install.sh BUILD_DIR      prints the node_modules directory (use it as NODE_PATH)
# Exit status: 0 ready, 1 the packages could not be installed (reason on stderr), 2 bad usage.
set -euo pipefail
[ "$#" -eq 1 ] || {
  echo "usage: install.sh BUILD_DIR" >&2
  exit 2
}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "$here/../npm_install.sh" pulsar-peer "$here" "$1" pulsar-flex lz4js snappyjs zstd-codec
