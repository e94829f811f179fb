#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The independent client of scripts/bench-pulsar: the official Python `pulsar-client` wheel
# (PyPI; the Pulsar C++ library inside), doing what `babelqueue bench transport` does with the
# same message bytes and properties: publish one at a time (each send waits for its receipt),
# publish in pipelined groups of 16 (send_async, then every receipt awaited; no producer-side
# batching), and consume with one consumer (receiver queue 100, an individual ack per message).
# Prints one JSON object.
import json
import os
import sys
import threading
import time

import pulsar

BATCH = 16  # kBenchBatch of tools/babelqueue/src/bench_transport.cpp


def main():
    url, body_file, messages = sys.argv[1], sys.argv[2], int(sys.argv[3])
    body = open(body_file, "rb").read()
    envelope = json.loads(body)
    properties = {
        "bq-job": envelope["job"],
        "bq-trace-id": envelope["trace_id"],
        "bq-message-id": envelope["meta"]["id"],
        "bq-schema-version": str(envelope["meta"]["schema_version"]),
        "bq-source-lang": envelope["meta"]["lang"],
        "bq-attempts": str(envelope.get("attempts", 0)),
    }
    client = pulsar.Client(url, operation_timeout_seconds=30, log_conf_file_path=None,
                           logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Error))
    topic = "persistent://public/default/pybench-" + os.urandom(4).hex()
    # The subscription first (as the transport's first publish makes it).
    client.subscribe(topic, "babelqueue", consumer_type=pulsar.ConsumerType.Shared,
                     initial_position=pulsar.InitialPosition.Earliest).close()
    producer = client.create_producer(topic, batching_enabled=False, block_if_queue_full=True)

    warm = min(1000, messages)
    for _ in range(warm):
        producer.send(body, properties=properties)
    start = time.perf_counter()
    for _ in range(messages):
        producer.send(body, properties=properties)
    one = time.perf_counter() - start

    def batched(n):
        done = threading.Semaphore(0)
        errors = []

        def sent(result, _id):
            if result != pulsar.Result.Ok:
                errors.append(result)
            done.release()

        left = n
        while left > 0:
            k = min(BATCH, left)
            for _ in range(k):
                producer.send_async(body, sent, properties=properties)
            for _ in range(k):
                done.acquire()
            left -= k
        if errors:
            raise RuntimeError(f"{len(errors)} sends failed: {errors[0]}")

    batched(warm)
    start = time.perf_counter()
    batched(messages)
    many = time.perf_counter() - start

    total = 2 * (warm + messages)
    consumer = client.subscribe(topic, "babelqueue", consumer_type=pulsar.ConsumerType.Shared,
                                receiver_queue_size=100,
                                initial_position=pulsar.InitialPosition.Earliest)
    for _ in range(warm):
        consumer.acknowledge(consumer.receive(timeout_millis=30000))
    start = time.perf_counter()
    for _ in range(total - warm):
        consumer.acknowledge(consumer.receive(timeout_millis=30000))
    consumed = time.perf_counter() - start
    consumer.close()
    producer.close()
    client.close()
    print(json.dumps({
        "client": "pulsar-client " + pulsar.__version__ + " (Python, C++ library inside)",
        "messages": messages,
        "publish_msgs_per_s": messages / one,
        "publish_batch_msgs_per_s": messages / many,
        "consume_msgs_per_s": (total - warm) / consumed,
    }))


if __name__ == "__main__":
    main()
