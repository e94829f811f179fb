#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# Testing kit: the npm packages of the scripted Service Bus peer (rhea) and of its self-check (the
# official @azure/service-bus client), installed by ../npm_install.sh into BUILD_DIR/servicebus-peer.
#
# Usage: install.sh BUILD_DIR      prints the node_modules directory (use it as NODE_PATH)
# Exit status: 0 ready, 1 the packages could not be installed (reason on stderr), 2 bad usage.
set -euo pipefail
[ "$#" -eq 1 ] || {
  echo "usage: install.sh BUILD_DIR" >&2
  exit 2
}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "$here/../npm_install.sh" servicebus-peer "$here" "$1" rhea @azure/service-bus
