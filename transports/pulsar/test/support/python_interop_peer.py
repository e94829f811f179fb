#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The independent client of the Pulsar interop tests (transports/pulsar/test/interop_test.cpp):
# the official Python `pulsar-client` wheel from PyPI (the Pulsar C++ library inside), in the
# venv of testing/scripts/python_peer_env.sh.
#
#   produce URL TOPIC    sends every line of stdin (the hex of one body) as one message, with
#                        producer batching (all of them in batches of 10) and LZ4 compression,
#                        property peer=python; prints "SENT <n>"
#   consume URL TOPIC SUBSCRIPTION N
#                        receives N messages on the Shared subscription (from the earliest),
#                        acks each; prints "MSG <json>" per message: payload (hex), properties,
#                        redelivery_count
import json
import sys

import pulsar


def client(url):
    return pulsar.Client(url, operation_timeout_seconds=30,
                         logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Error))


def produce(url, topic):
    bodies = [bytes.fromhex(line.strip()) for line in sys.stdin if line.strip()]
    c = client(url)
    producer = c.create_producer(topic, batching_enabled=True, batching_max_messages=10,
                                 batching_max_publish_delay_ms=1000,
                                 compression_type=pulsar.CompressionType.LZ4)
    results = []
    for body in bodies:
        producer.send_async(body, lambda result, _id: results.append(result),
                            properties={"peer": "python"})
    producer.flush()
    producer.close()
    c.close()
    failed = [r for r in results if r != pulsar.Result.Ok]
    if len(results) != len(bodies) or failed:
        print(f"FAILED {len(results)} results, {len(failed)} failed", flush=True)
        sys.exit(1)
    print(f"SENT {len(bodies)}", flush=True)


def consume(url, topic, subscription, n):
    c = client(url)
    consumer = c.subscribe(topic, subscription, consumer_type=pulsar.ConsumerType.Shared,
                           initial_position=pulsar.InitialPosition.Earliest)
    for _ in range(n):
        msg = consumer.receive(timeout_millis=30000)
        print("MSG " + json.dumps({"payload": msg.data().hex(), "properties": msg.properties(),
                                   "redelivery_count": msg.redelivery_count()}), flush=True)
        consumer.acknowledge(msg)
    consumer.close()
    c.close()


if __name__ == "__main__":
    if sys.argv[1] == "produce":
        produce(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "consume":
        consume(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        sys.exit(2)
