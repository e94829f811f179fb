#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# The Apache ActiveMQ Artemis broker the tests run (issue 12, BROKERS.md "AMQP 1.0"): the binary
# distribution org.apache.activemq:apache-artemis (tar.gz, classifier bin; 2.40.0 is the newest
# served and runs on Java 17), fetched once by the testing kit's Maven fetcher and unpacked into
# DIR/home. The fixture (artemis_server.cpp) creates an instance per broker with
# DIR/home/bin/artemis create. transports/artemis and transports/amqp10 test on it.
#
# Usage: artemis_dist.sh DIR      prints DIR/home
# Exit status: 0 ready, 1 the archive could not be fetched (reason on stderr), 2 bad usage.
set -euo pipefail

artemis_version=2.40.0

[ "$#" -eq 1 ] || {
  echo "usage: artemis_dist.sh DIR" >&2
  exit 2
}
exec bash "$(dirname "${BASH_SOURCE[0]}")/../../../../testing/scripts/maven_dist.sh" artemis "$1" \
  "org.apache.activemq:apache-artemis:$artemis_version:tar.gz:bin"
