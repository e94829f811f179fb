#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# Runs the ElasticMQ server of elasticmq_dist.sh on 127.0.0.1:PORT (never 0.0.0.0), its
# configuration written to DATA_DIR/elasticmq.conf, then exec's java: the caller's PID is the
# JVM's (the test fixture and scripts/bench-sqs stop it by PID).
#
#   - Queue URLs are http://127.0.0.1:PORT/000000000000/<name>; ARNs
#     arn:aws:sqs:us-east-1:000000000000:<name>; "strict" SQS limits (names, sizes, batches).
#   - Persistent by default: queues and messages live in an H2 database in DATA_DIR and survive
#     a restart, a kill -9 included (WRITE_DELAY=0: every change is written when it is made; H2's
#     default 500 ms delay lost 99 of 100 messages sent just before a kill -9). --in-memory
#     keeps them in memory only (faster; the benchmark).
#   - ElasticMQ does not verify signatures: any credentials are accepted.
#
# Usage: elasticmq_run.sh [--in-memory] LIBS PORT DATA_DIR [JVM_OPTION...]
# BABELQUEUE_JAVA (default java on PATH) picks the JVM.
set -euo pipefail

persistent=true
if [ "${1:-}" = "--in-memory" ]; then
  persistent=false
  shift
fi
[ "$#" -ge 3 ] || {
  echo "usage: elasticmq_run.sh [--in-memory] LIBS PORT DATA_DIR [JVM_OPTION...]" >&2
  exit 2
}
libs=$1 port=$2
data=$(realpath -m -- "$3")
shift 3
java=${BABELQUEUE_JAVA:-$(command -v java || true)}
[ -n "$java" ] || {
  echo "elasticmq_run: java not found (Debian: apt-get install default-jre-headless)" >&2
  exit 1
}
mkdir -p "$data"
# The classpath's application.conf holds ElasticMQ's HTTP settings (a 21 s request timeout for
# 20 s long polls, 256k URIs); -Dconfig.file replaces it unless it is included.
cat >"$data/elasticmq.conf" <<CONF
include classpath("application.conf")
node-address { protocol = http, host = "127.0.0.1", port = $port, context-path = "" }
rest-sqs { enabled = true, bind-port = $port, bind-hostname = "127.0.0.1", sqs-limits = strict }
generate-node-address = false
aws { region = "us-east-1", accountId = "000000000000" }
messages-storage {
  enabled = $persistent
  uri = "jdbc:h2:$data/elasticmq-h2;WRITE_DELAY=0"
}
CONF
exec "$java" "$@" -Dconfig.file="$data/elasticmq.conf" -cp "$libs/*" org.elasticmq.server.Main
