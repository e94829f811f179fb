#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# The Apache Kafka broker the tests and scripts/bench-kafka run (issue 10, BROKERS.md "Kafka"):
# org.apache.kafka:kafka_2.13 and its dependencies, plus slf4j-simple so the broker logs to its
# stdout/stderr, copied from Maven Central into DIR/libs by Maven. Fetched once; later calls only
# check a stamp. Safe to call from parallel test binaries (flock; built in a temp dir, renamed).
#
# Usage: kafka_dist.sh DIR      prints DIR/libs (run: java -cp 'DIR/libs/*' kafka.Kafka ...)
# Exit status: 0 ready, 1 the jars could not be fetched (reason on stderr), 2 bad usage.
# BABELQUEUE_MVN (default mvn on PATH) picks Maven; its settings (~/.m2) apply.
set -euo pipefail

kafka_version=4.4.0
slf4j_version=1.7.36  # the slf4j-api line kafka_2.13 4.4.0 depends on

fail() {
  echo "kafka_dist: $*" >&2
  exit 1
}

[ "$#" -eq 1 ] || {
  echo "usage: kafka_dist.sh DIR" >&2
  exit 2
}
dir=$(realpath -m -- "$1")
wanted="kafka_2.13-$kafka_version slf4j-simple-$slf4j_version"
stamp="$dir/libs/babelqueue-kafka.stamp"

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
  <artifactId>kafka-dist</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>$kafka_version</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-simple</artifactId>
      <version>$slf4j_version</version>
    </dependency>
  </dependencies>
</project>
POM
if ! "$mvn" -q -B -f "$work/pom.xml" dependency:copy-dependencies \
  -DincludeScope=runtime -DoutputDirectory="$work/libs" >"$work/mvn.log" 2>&1; then
  tail -n 20 "$work/mvn.log" >&2
  fail "could not fetch kafka_2.13 $kafka_version from Maven Central (is it reachable?)"
fi
[ -f "$work/libs/kafka_2.13-$kafka_version.jar" ] || fail "Maven left no kafka_2.13 jar"
echo "$wanted" >"$work/libs/babelqueue-kafka.stamp"
rm -rf "$dir/libs"
mv "$work/libs" "$dir/libs"
echo "$dir/libs"
