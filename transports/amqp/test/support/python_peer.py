# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
"""The Python reference SDK (PyPI `babelqueue`, transport `PikaTransport`) as the other side of
the RabbitMQ interop tests (issue 9; spec/04 §10, AMQP-T3, T6, T7, T8).

Every line on stdout is one JSON object with an "event" member; diagnostics go to stderr.
Bodies are carried as base64 of the exact bytes ("body_b64"). Exit status: 0 done, 1 failure or
timeout (the reason on stderr), 2 bad arguments.

  produce  --url URL --queue Q --count N [--urn URN] [--prefix ID] [--data JSON] [--header K=V]
      Builds N envelopes with EnvelopeCodec.make/encode and publishes them through
      PikaTransport (publish_with_headers when --header is given). One "produced" line each.
  consume  --url URL --queue Q --count N --timeout S [--urn URN]... [--fail-first K | --fail-all]
           [--max-attempts M]
      Runs the SDK's App (BabelQueue, dead_letter on, DLQ <Q>.dlq) with one handler per URN.
      The handler fails while the delivery's attempts < K (or always), so the App retries with
      attempts + 1 and dead-letters once attempts + 1 reaches M. One "delivery" line per handler
      call and one "published" line per message the App writes back (kind "retry" or
      "dead_letter"). Stops once N messages are settled (handled, or written to the DLQ, poison
      bodies included), then prints "done".
  peek     --url URL --queue Q [--count N] [--ack]     (alias: peek-dlq)
      Reads up to N messages with plain pika basic.get and prints body, properties and the
      decoded header table. Without --ack they are requeued when the connection closes.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import decimal
import json
import logging
import sys
import threading
from typing import Any, Callable, Dict, List, Optional

import pika
import pika.exceptions
from babelqueue import BabelQueue, EnvelopeCodec, headers_from_context
from babelqueue.pika_transport import PikaTransport
from babelqueue.transport import ReceivedMessage

DEFAULT_URN = "urn:babel:interop:ping"
POLL_SECONDS = 0.05


class PeerError(Exception):
    pass


def emit(event: str, **fields: Any) -> None:
    fields = {"event": event, **fields}
    sys.stdout.write(json.dumps(fields, default=_json_value) + "\n")
    sys.stdout.flush()


def _json_value(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return {"b64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, datetime.datetime):
        return int(value.replace(tzinfo=datetime.timezone.utc).timestamp())
    raise TypeError(f"cannot print a {type(value).__name__}")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def wire_bytes(text: str) -> bytes:
    """The bytes PikaTransport carries for a body it holds as text (it reads surrogateescape)."""
    return text.encode("utf-8", "surrogateescape")


def produce(args: argparse.Namespace) -> None:
    base = json.loads(args.data)
    if not isinstance(base, dict):
        raise PeerError("--data must be a JSON object")
    headers = dict(_split_header(h) for h in args.header)
    transport = PikaTransport(args.url)
    try:
        for seq in range(args.count):
            data = {**base, "run": args.prefix, "seq": seq}
            envelope = EnvelopeCodec.make(args.urn, data, queue=args.queue)
            body = EnvelopeCodec.encode(envelope)
            if headers:
                transport.publish_with_headers(args.queue, body, headers)
            else:
                transport.publish(args.queue, body)
            emit(
                "produced",
                id=envelope["meta"]["id"],
                trace_id=envelope["trace_id"],
                urn=envelope["job"],
                queue=args.queue,
                seq=seq,
                body_b64=b64(wire_bytes(body)),
            )
    finally:
        transport.close()


def _split_header(item: str) -> tuple:
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise PeerError(f"--header wants KEY=VALUE, got {item!r}")
    return key, value


class RecordingTransport(PikaTransport):
    """PikaTransport that remembers the delivery being handled and reports the App's writes."""

    def __init__(self, url: str, on_publish: Callable[[str, str], None]) -> None:
        super().__init__(url)
        self.current: Optional[ReceivedMessage] = None
        self.on_publish = on_publish

    def pop(self, queue: str, timeout: float = 1.0) -> Optional[ReceivedMessage]:
        self.current = super().pop(queue, timeout)
        return self.current

    def publish(self, queue: str, body: str) -> None:
        super().publish(queue, body)
        self.on_publish(queue, body)


class Consumer:
    """Settled = handled by the handler, or written to the DLQ (a failure past max_attempts, an
    unknown URN or a poison body, which never reaches the handler)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.transport = RecordingTransport(args.url, self.published)
        self.app = BabelQueue(
            transport=self.transport,
            queue=args.queue,
            max_attempts=args.max_attempts,
            dead_letter=True,
        )
        for urn in args.urn:
            self.app.register(urn, self.handle)
        self.settled = 0
        self.deliveries = 0
        self.timed_out = threading.Event()

    def handle(self, data: Dict[str, Any], meta: Dict[str, Any], envelope: Dict[str, Any]) -> None:
        attempts = envelope.get("attempts", 0)
        fail = self.args.fail_all or attempts < self.args.fail_first
        if not fail:
            outcome = "handled"
        elif attempts + 1 < self.args.max_attempts:
            outcome = "retry"
        else:
            outcome = "dead_letter"
        received = self.transport.current
        self.deliveries += 1
        emit(
            "delivery",
            id=meta.get("id"),
            attempts=attempts,
            urn=envelope.get("job"),
            trace_id=envelope.get("trace_id"),
            data=data,
            headers=dict(headers_from_context()),
            body_b64=b64(wire_bytes(received.body)) if received is not None else None,
            outcome=outcome,
        )
        if fail:
            raise RuntimeError(f"python_peer: failing delivery with attempts {attempts} on purpose")
        self.settle()

    def published(self, queue: str, body: str) -> None:
        dead_letter = queue != self.args.queue
        emit(
            "published",
            kind="dead_letter" if dead_letter else "retry",
            queue=queue,
            body_b64=b64(wire_bytes(body)),
        )
        if dead_letter:
            self.settle()

    def settle(self) -> None:
        self.settled += 1
        if self.settled >= self.args.count:
            self.app.stop()

    def on_timeout(self) -> None:
        self.timed_out.set()
        self.app.stop()

    def run(self) -> None:
        timer = threading.Timer(self.args.timeout, self.on_timeout)
        timer.daemon = True
        timer.start()
        try:
            self.app.consume(timeout=POLL_SECONDS)
        finally:
            timer.cancel()
            self.transport.close()
        emit("done", settled=self.settled, deliveries=self.deliveries)
        if self.settled < self.args.count:
            cause = f"timeout after {self.args.timeout} s" if self.timed_out.is_set() else "interrupted"
            raise PeerError(
                f"{cause}: {self.settled} of {self.args.count} messages settled "
                f"({self.deliveries} deliveries)"
            )


def consume(args: argparse.Namespace) -> None:
    if args.max_attempts < 1:
        raise PeerError("--max-attempts must be at least 1")
    Consumer(args).run()


def peek(args: argparse.Namespace) -> None:
    connection = pika.BlockingConnection(pika.URLParameters(args.url))
    try:
        channel = connection.channel()
        channel.queue_declare(queue=args.queue, durable=True)
        taken = 0
        while args.count is None or taken < args.count:
            method, props, body = channel.basic_get(queue=args.queue, auto_ack=False)
            if method is None:
                break
            taken += 1
            table = props.headers or {}
            emit(
                "message",
                queue=args.queue,
                redelivered=method.redelivered,
                body_b64=b64(body),
                properties=_properties(props),
                headers=table,
                header_types={k: type(v).__name__ for k, v in table.items()},
            )
            if args.ack:
                channel.basic_ack(method.delivery_tag)
        emit("done", count=taken)
    finally:
        connection.close()


def _properties(props: Any) -> Dict[str, Any]:
    names = (
        "content_type", "content_encoding", "delivery_mode", "priority", "correlation_id",
        "reply_to", "expiration", "message_id", "timestamp", "type", "user_id", "app_id",
    )
    return {n: getattr(props, n) for n in names if getattr(props, n) is not None}


def parse_args(argv: List[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python_peer.py", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    def common(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--url", required=True, help="amqp://user:pass@host:port/vhost")
        sub.add_argument("--queue", required=True)

    p = commands.add_parser("produce", help="publish N envelopes through PikaTransport")
    common(p)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--urn", default=DEFAULT_URN)
    p.add_argument("--prefix", default="py", help="stored as data.run of every envelope")
    p.add_argument("--data", default="{}", help="JSON object merged into every data block")
    p.add_argument("--header", action="append", default=[], help="out-of-band KEY=VALUE")
    p.set_defaults(run=produce)

    c = commands.add_parser("consume", help="run the SDK's App worker")
    common(c)
    c.add_argument("--count", type=int, required=True, help="messages to settle")
    c.add_argument("--timeout", type=float, required=True, help="seconds before giving up")
    c.add_argument("--urn", action="append", default=None, help="handled URN (repeatable)")
    failing = c.add_mutually_exclusive_group()
    failing.add_argument("--fail-first", type=int, default=0, metavar="K",
                         help="fail deliveries whose attempts < K")
    failing.add_argument("--fail-all", action="store_true")
    c.add_argument("--max-attempts", type=int, default=3)
    c.set_defaults(run=consume)

    k = commands.add_parser("peek", aliases=["peek-dlq"], help="read messages with plain pika")
    common(k)
    k.add_argument("--count", type=int, default=None, help="at most N (default: all)")
    k.add_argument("--ack", action="store_true", help="remove what was read")
    k.set_defaults(run=peek)

    args = parser.parse_args(argv)
    if args.run is consume and args.urn is None:
        args.urn = [DEFAULT_URN]
    return args


def main(argv: List[str]) -> int:
    args = parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="python_peer %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pika").setLevel(logging.CRITICAL)
    try:
        args.run(args)
    except (PeerError, ValueError, pika.exceptions.AMQPError, OSError) as exc:
        reason = str(exc) or f"cannot reach the broker at {args.url}"
        sys.stderr.write(f"python_peer {args.command}: {type(exc).__name__}: {reason}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
