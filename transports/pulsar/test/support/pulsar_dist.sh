#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# The Apache Pulsar standalone broker the tests run (issue 13, BROKERS.md "Apache Pulsar"):
# org.apache.pulsar:pulsar-broker and its dependencies (~240 MB, 328 jars), at the versions
# Pulsar's parent POM pins (imported: without it Maven mixes releases, e.g. two OpenTelemetry
# SDK lines, and the broker fails at start with a NoSuchMethodError), fetched once by the
# testing kit's Maven fetcher into DIR/libs. The broker logs through log4j2 (among the jars).
#
# Usage: pulsar_dist.sh DIR      prints DIR/libs
#   (run: java -cp 'DIR/libs/*' org.apache.pulsar.PulsarStandaloneStarter ...)
# Exit status: 0 ready, 1 the jars could not be fetched (reason on stderr), 2 bad usage.
set -euo pipefail

pulsar_version=4.2.4

[ "$#" -eq 1 ] || {
  echo "usage: pulsar_dist.sh DIR" >&2
  exit 2
}
exec bash "$(dirname "${BASH_SOURCE[0]}")/../../../../testing/scripts/maven_dist.sh" pulsar "$1" \
  "org.apache.pulsar:pulsar-broker:$pulsar_version" "bom:org.apache.pulsar:pulsar:$pulsar_version"
