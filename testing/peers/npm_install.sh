#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# Testing kit: the npm packages of a scripted peer (peers/<peer>/package-lock.json), installed
# with `npm ci` into BUILD_DIR/<NAME> (never into the source tree). Installed once; later calls
# only check a stamp naming the lock file's hash and the Node version. Safe to call from parallel
# tests (flock). Each peer's install.sh calls it with its name and the modules it loads.
#
# Usage: npm_install.sh NAME PEER_DIR BUILD_DIR MODULE...
#   prints the node_modules directory (use it as NODE_PATH); MODULE... must load afterwards.
# Exit status: 0 ready, 1 the packages could not be installed (reason on stderr), 2 bad usage.
# BABELQUEUE_NODE and BABELQUEUE_NPM (default node and npm on PATH) pick the tools; npm's own
# settings (registry, cache) apply.
set -euo pipefail

[ "$#" -ge 4 ] || {
  echo "usage: npm_install.sh NAME PEER_DIR BUILD_DIR MODULE..." >&2
  exit 2
}
name=$1
here=$(cd "$2" && pwd)
dir=$(realpath -m -- "$3/$name")
shift 3
modules=("$@")

fail() {
  echo "${name//-/_}_install: $*" >&2
  exit 1
}

node=${BABELQUEUE_NODE:-$(command -v node || true)}
npm=${BABELQUEUE_NPM:-$(command -v npm || true)}
[ -n "$node" ] || fail "node not found (Node.js 20 from nodejs.org/NodeSource, or Debian's nodejs)"
[ -n "$npm" ] || fail "npm not found (Debian: apt-get install npm)"
wanted="$(sha256sum "$here/package-lock.json" | cut -d' ' -f1) node $("$node" --version)"
stamp="$dir/babelqueue-$name.stamp"
ready() { [ -d "$dir/node_modules" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; }

if ready; then
  echo "$dir/node_modules"
  exit 0
fi

mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
if ready; then
  echo "$dir/node_modules"
  exit 0
fi

rm -rf "$dir"
mkdir -p "$dir"
cp "$here/package.json" "$here/package-lock.json" "$dir/"
log="$dir/npm.log"
if ! "$npm" ci --prefix "$dir" --no-audit --no-fund --ignore-scripts >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  rm -rf "$dir/node_modules"
  fail "npm ci failed for $here/package-lock.json (is the npm registry reachable?)"
fi
for module in "${modules[@]}"; do
  NODE_PATH="$dir/node_modules" "$node" -e "require(process.argv[1])" "$module" ||
    fail "$module in $dir/node_modules does not load on node $("$node" --version)"
done
echo "$wanted" >"$stamp"
echo "$dir/node_modules"
