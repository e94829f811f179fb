#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# The SQS emulator the tests and scripts/bench-sqs run (issue 11, BROKERS.md "Amazon SQS",
# transports/sqs/README.md "Emulator"): ElasticMQ's server (org.elasticmq:elasticmq-server_2.13)
# and its dependencies, copied from Maven Central into DIR/libs by Maven. Fetched once; later
# calls only check a stamp. Safe to call from parallel test binaries (flock; built in a temp dir,
# renamed). Run it with elasticmq_run.sh.
#
# Usage: elasticmq_dist.sh DIR      prints DIR/libs
# Exit status: 0 ready, 1 the jars could not be fetched (reason on stderr), 2 bad usage.
# BABELQUEUE_MVN (default mvn on PATH) picks Maven; its settings (~/.m2) apply.
set -euo pipefail

elasticmq_version=1.7.1

fail() {
  echo "elasticmq_dist: $*" >&2
  exit 1
}

[ "$#" -eq 1 ] || {
  echo "usage: elasticmq_dist.sh DIR" >&2
  exit 2
}
dir=$(realpath -m -- "$1")
wanted="elasticmq-server_2.13-$elasticmq_version"
stamp="$dir/libs/babelqueue-elasticmq.stamp"

ready() { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; }

if ready; then
  echo "$dir/libs"
  exit 0
fi

mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if ready; then
  echo "$dir/libs"
  exit 0
fi

mvn=${BABELQUEUE_MVN:-$(command -v mvn || true)}
[ -n "$mvn" ] || fail "Maven not found (Debian: apt-get install maven, see scripts/install-deps)"
work=$(mktemp -d -p "$dir" fetch.XXXXXX)
trap 'rm -rf "$work"' EXIT
cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>babelqueue.test</groupId>
  <artifactId>elasticmq-dist</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>org.elasticmq</groupId>
      <artifactId>elasticmq-server_2.13</artifactId>
      <version>$elasticmq_version</version>
    </dependency>
  </dependencies>
</project>
POM
if ! "$mvn" -q -B -f "$work/pom.xml" dependency:copy-dependencies \
  -DincludeScope=runtime -DoutputDirectory="$work/libs" >"$work/mvn.log" 2>&1; then
  tail -n 20 "$work/mvn.log" >&2
  fail "could not fetch elasticmq-server_2.13 $elasticmq_version from Maven Central (is it reachable?)"
fi
[ -f "$work/libs/$wanted.jar" ] || fail "Maven left no $wanted jar"
echo "$wanted" >"$work/libs/babelqueue-elasticmq.stamp"
rm -rf "$dir/libs"
mv "$work/libs" "$dir/libs"
echo "$dir/libs"
