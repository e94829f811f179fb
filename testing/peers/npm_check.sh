#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# The ctest command of a scripted peer's self-check: installs the peer's npm packages (its
# install.sh, cached in BUILD_DIR) and runs its check.js with the remaining arguments.
#
# Usage: npm_check.sh PEER_DIR BUILD_DIR [ARG...]
# Exit status: check.js's (0 every check held); 1 the tools are missing while CI is set;
# 77 (ctest: skipped) node or npm is missing outside CI.
set -euo pipefail

[ "$#" -ge 2 ] || {
  echo "usage: npm_check.sh PEER_DIR BUILD_DIR [ARG...]" >&2
  exit 2
}
peer=$(cd "$1" && pwd)
build=$2
shift 2
node=${BABELQUEUE_NODE:-$(command -v node || true)}
npm=${BABELQUEUE_NPM:-$(command -v npm || true)}
if [ -z "$node" ] || [ -z "$npm" ]; then
  reason="node and npm are needed for the scripted peer in $peer (found node='$node' npm='$npm')"
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: $reason; CI must provide them" >&2
    exit 1
  fi
  echo "SKIPPED: $reason" >&2
  exit 77
fi
modules=$("$peer/install.sh" "$build")
echo "node $("$node" --version), packages in $modules"
NODE_PATH="$modules" exec "$node" "$peer/check.js" "$@"
