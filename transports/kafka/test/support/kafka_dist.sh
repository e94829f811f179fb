#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# The Apache Kafka broker the tests and scripts/bench-kafka run (issue 10, BROKERS.md "Kafka"):
# org.apache.kafka:kafka_2.13 and its dependencies, plus slf4j-simple so the broker logs to its
# stdout/stderr, fetched once by the testing kit's Maven fetcher into DIR/libs.
#
# Usage: kafka_dist.sh DIR      prints DIR/libs (run: java -cp 'DIR/libs/*' kafka.Kafka ...)
# Exit status: 0 ready, 1 the jars could not be fetched (reason on stderr), 2 bad usage.
set -euo pipefail

kafka_version=4.4.0
slf4j_version=1.7.36  # the slf4j-api line kafka_2.13 4.4.0 depends on

[ "$#" -eq 1 ] || {
  echo "usage: kafka_dist.sh DIR" >&2
  exit 2
}
exec bash "$(dirname "${BASH_SOURCE[0]}")/../../../../testing/scripts/maven_dist.sh" kafka "$1" \
  "org.apache.kafka:kafka_2.13:$kafka_version" "org.slf4j:slf4j-simple:$slf4j_version"
