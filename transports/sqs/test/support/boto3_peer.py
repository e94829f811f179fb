# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
"""The boto3 peer of the SQS interop tests (issue 11).

  boto3_peer.py send ENDPOINT QUEUE_URL MESSAGE_JSON
      MESSAGE_JSON = {"body": HEX, "attributes": {NAME: {"DataType": TYPE, "StringValue": TEXT}
                      or {"DataType": "Binary", "BinaryValue": HEX}, ...}}
      one SendMessage; prints "SENT <MessageId>".
  boto3_peer.py receive ENDPOINT QUEUE_URL COUNT TIMEOUT_SECONDS
      long-polls until COUNT messages came (or the timeout passed), deletes each and prints one
      line "MESSAGE <json>" per message: {"body": HEX, "attributes": {...as above...},
      "receive_count": TEXT}.

Credentials and region come from the standard AWS environment variables the test sets. Bodies
and binary values travel as hex so that the bytes are compared exactly. Exit status: 0 done,
1 an SQS error or too few messages, 2 bad usage.
"""

import json
import sys
import time

import boto3
from botocore.exceptions import BotoCoreError, ClientError


def client(endpoint):
    return boto3.client("sqs", endpoint_url=endpoint)


def send(endpoint, queue_url, message_json):
    message = json.loads(message_json)
    attributes = {}
    for name, value in message.get("attributes", {}).items():
        if value["DataType"] == "Binary":
            attributes[name] = {"DataType": "Binary",
                                "BinaryValue": bytes.fromhex(value["BinaryValue"])}
        else:
            attributes[name] = {"DataType": value["DataType"],
                                "StringValue": value["StringValue"]}
    sent = client(endpoint).send_message(
        QueueUrl=queue_url,
        MessageBody=bytes.fromhex(message["body"]).decode("utf-8"),
        MessageAttributes=attributes,
    )
    print(f"SENT {sent['MessageId']}", flush=True)
    return 0


def as_json(message):
    attributes = {}
    for name, value in message.get("MessageAttributes", {}).items():
        if value["DataType"] == "Binary":
            attributes[name] = {"DataType": "Binary", "BinaryValue": value["BinaryValue"].hex()}
        else:
            attributes[name] = {"DataType": value["DataType"],
                                "StringValue": value["StringValue"]}
    return {
        "body": message["Body"].encode("utf-8").hex(),
        "attributes": attributes,
        "receive_count": message.get("Attributes", {}).get("ApproximateReceiveCount"),
    }


def receive(endpoint, queue_url, count, timeout_s):
    sqs = client(endpoint)
    got = 0
    deadline = time.monotonic() + timeout_s
    while got < count and time.monotonic() < deadline:
        answer = sqs.receive_message(
            QueueUrl=queue_url,
            MaxNumberOfMessages=min(10, count - got),
            WaitTimeSeconds=1,
            MessageAttributeNames=["All"],
            AttributeNames=["ApproximateReceiveCount"],
        )
        for message in answer.get("Messages", []):
            print("MESSAGE " + json.dumps(as_json(message)), flush=True)
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
            got += 1
    if got < count:
        print(f"boto3_peer: {got} of {count} messages within {timeout_s} s", file=sys.stderr)
        return 1
    return 0


def main(argv):
    try:
        if len(argv) == 4 and argv[0] == "send":
            return send(argv[1], argv[2], argv[3])
        if len(argv) == 5 and argv[0] == "receive":
            return receive(argv[1], argv[2], int(argv[3]), float(argv[4]))
    except (BotoCoreError, ClientError) as e:
        print(f"boto3_peer: {e}", file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
