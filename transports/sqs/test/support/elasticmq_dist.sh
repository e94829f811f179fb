#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# The SQS emulator the tests and scripts/bench-sqs run (issue 11, BROKERS.md "Amazon SQS",
# transports/sqs/README.md "Emulator"): ElasticMQ's server (org.elasticmq:elasticmq-server_2.13)
# and its dependencies, fetched once by the testing kit's Maven fetcher into DIR/libs. Run it
# with elasticmq_run.sh.
#
# Usage: elasticmq_dist.sh DIR      prints DIR/libs
# Exit status: 0 ready, 1 the jars could not be fetched (reason on stderr), 2 bad usage.
set -euo pipefail

elasticmq_version=1.7.1

[ "$#" -eq 1 ] || {
  echo "usage: elasticmq_dist.sh DIR" >&2
  exit 2
}
exec bash "$(dirname "${BASH_SOURCE[0]}")/../../../../testing/scripts/maven_dist.sh" elasticmq \
  "$1" "org.elasticmq:elasticmq-server_2.13:$elasticmq_version"
