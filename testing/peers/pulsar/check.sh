#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# The ctest test pulsar_fake_broker_vs_pulsar_flex: installs the npm packages (install.sh, cached
# in BUILD_DIR) and runs check.js, the fake Pulsar broker against pulsar-flex (../npm_check.sh).
# With --broker pulsar://127.0.0.1:PORT the client checks run against that broker instead (a real
# one) and the fake-only checks are left out.
#
# Usage: check.sh BUILD_DIR [--broker URL]
# Exit status: 0 every check held; 1 a check failed or the tools are missing while CI is set;
# 77 (ctest: skipped) node or npm is missing outside CI.
set -euo pipefail
[ "$#" -ge 1 ] || {
  echo "usage: check.sh BUILD_DIR [--broker URL]" >&2
  exit 2
}
here=$(cd "${BASH_SOURCE[0]%/*}" && pwd)
build=$1
shift
exec "$here/../npm_check.sh" "$here" "$build" "$@"
