#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# The ctest test servicebus_peer_vs_official_client: installs the npm packages (install.sh, cached
# in BUILD_DIR) and runs check.js, the scripted Service Bus peer against @azure/service-bus
# (../npm_check.sh).
#
# Usage: check.sh BUILD_DIR
# Exit status: 0 every check held; 1 a check failed or the tools are missing while CI is set;
# 77 (ctest: skipped) node or npm is missing outside CI.
set -euo pipefail
[ "$#" -eq 1 ] || {
  echo "usage: check.sh BUILD_DIR" >&2
  exit 2
}
here=$(cd "${BASH_SOURCE[0]%/*}" && pwd)
exec "$here/../npm_check.sh" "$here" "$1"
