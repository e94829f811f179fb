# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
"""The confluent-kafka peer of the Kafka interop tests (issue 10).

  python_peer.py produce BOOTSTRAP TOPIC RECORD_JSON
      RECORD_JSON = {"key": HEX|null, "value": HEX, "headers": [[NAME, HEX|null], ...]}
      produces one record and waits for its delivery report; prints "DELIVERED <offset>".
  python_peer.py consume BOOTSTRAP TOPIC COUNT TIMEOUT_SECONDS
      reads COUNT records from the start of TOPIC in a fresh group that commits nothing and
      prints one line "RECORD <json>" each, the json like RECORD_JSON plus "partition",
      "offset" and "timestamp".

Bytes travel as hex so that null, empty and arbitrary bytes stay apart. Exit status: 0 done,
1 a Kafka error or too few records, 2 bad usage.
"""

import json
import sys
import time
import uuid

from confluent_kafka import Consumer, KafkaException, Producer


def from_hex(text):
    return None if text is None else bytes.fromhex(text)


def to_hex(data):
    return None if data is None else data.hex()


def produce(bootstrap, topic, record_json):
    record = json.loads(record_json)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    reports = []
    producer.produce(
        topic,
        value=from_hex(record["value"]),
        key=from_hex(record.get("key")),
        headers=[(name, from_hex(value)) for name, value in record.get("headers", [])],
        on_delivery=lambda err, msg: reports.append((err, msg)),
    )
    if producer.flush(30) != 0 or not reports:
        print("python_peer: no delivery report within 30 s", file=sys.stderr)
        return 1
    err, msg = reports[0]
    if err is not None:
        print(f"python_peer: delivery failed: {err}", file=sys.stderr)
        return 1
    print(f"DELIVERED {msg.offset()}", flush=True)
    return 0


def consume(bootstrap, topic, count, timeout_s):
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "python-peer-" + uuid.uuid4().hex,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    deadline = time.monotonic() + timeout_s
    got = 0
    try:
        while got < count and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            if msg.error() is not None:
                raise KafkaException(msg.error())
            line = {
                "partition": msg.partition(),
                "offset": msg.offset(),
                "timestamp": msg.timestamp()[1],
                "key": to_hex(msg.key()),
                "value": to_hex(msg.value()),
                "headers": [[name, to_hex(value)] for name, value in (msg.headers() or [])],
            }
            print("RECORD " + json.dumps(line), flush=True)
            got += 1
    finally:
        consumer.close()
    if got < count:
        print(f"python_peer: {got} of {count} records within {timeout_s} s", file=sys.stderr)
        return 1
    return 0


def main(argv):
    if len(argv) == 4 and argv[0] == "produce":
        return produce(argv[1], argv[2], argv[3])
    if len(argv) == 5 and argv[0] == "consume":
        return consume(argv[1], argv[2], int(argv[3]), float(argv[4]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
