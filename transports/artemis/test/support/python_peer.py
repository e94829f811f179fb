#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
"""An independent AMQP 1.0 peer for the Artemis interop tests: Qpid Proton's Python binding
(Debian python3-qpid-proton 0.37), no BabelQueue code.

  python_peer.py receive URL ADDRESS TIMEOUT_S
      receives one message (the link with the `queue` capability), accepts it and prints
      "MESSAGE <json>": body, body_type, annotations, correlation_id, creation_time_ms,
      properties, durable.
  python_peer.py send URL ADDRESS JSON
      sends {"body", "annotations", "correlation_id", "properties"} as a durable message with a
      string body (annotation keys as symbols) and prints "ACCEPTED" once the broker accepted it.

URL: amqp://user:password@host:port (SASL PLAIN over plain TCP)."""

import json
import sys

from proton import Message, symbol
from proton.reactor import LinkOption
from proton.utils import BlockingConnection


class QueueCapability(LinkOption):
    """The terminus capability `queue`: Artemis makes the address anycast (spec/05 ART-3)."""

    def apply(self, link):
        terminus = link.source if link.is_receiver else link.target
        terminus.capabilities.put_symbol("queue")


def connect(url):
    return BlockingConnection(url, timeout=30, allowed_mechs="PLAIN", allow_insecure_mechs=True)


def receive(url, address, timeout):
    conn = connect(url)
    try:
        receiver = conn.create_receiver(address, options=QueueCapability())
        m = receiver.receive(timeout=float(timeout))
        receiver.accept()
        body = m.body
        if isinstance(body, str):
            body_type = "string"
        else:
            body_type = type(body).__name__
            body = bytes(body).decode("utf-8", "replace")
        out = {
            "body": body,
            "body_type": body_type,
            "annotations": {str(k): str(v) for k, v in (m.annotations or {}).items()},
            "annotation_key_types": sorted({type(k).__name__ for k in (m.annotations or {})}),
            "correlation_id": m.correlation_id,
            "correlation_id_type": type(m.correlation_id).__name__,
            "creation_time_ms": round(m.creation_time * 1000),
            "properties": {str(k): v for k, v in (m.properties or {}).items()},
            "durable": m.durable,
        }
        print("MESSAGE " + json.dumps(out, sort_keys=True), flush=True)
    finally:
        conn.close()


def send(url, address, spec):
    s = json.loads(spec)
    conn = connect(url)
    try:
        sender = conn.create_sender(address, options=QueueCapability())
        m = Message(body=s["body"], durable=True)
        m.annotations = {symbol(k): v for k, v in s.get("annotations", {}).items()}
        if "correlation_id" in s:
            m.correlation_id = s["correlation_id"]
        m.properties = s.get("properties", {})
        sender.send(m)
        print("ACCEPTED", flush=True)
    finally:
        conn.close()


def main():
    command = sys.argv[1]
    if command == "receive":
        receive(sys.argv[2], sys.argv[3], sys.argv[4])
    elif command == "send":
        send(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main()
