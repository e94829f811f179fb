#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# Writes Pulsar protocol frames encoded here, independently of the C++ codec (protobuf varints,
# CRC-32C and the framing written from the protocol's documentation), into DIR: the seeds of
# fuzz/fuzz_pulsar_frame (fuzz/corpus/fuzz_pulsar_frame) and the vectors that
# transports/pulsar/test/vectors_unit_test.cpp decodes.
#
# Usage: make_vectors.py DIR
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def varint(n):
    out = b""
    while True:
        low, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([low])
        out += bytes([low | 0x80])


def field(number, wire_type, value):
    key = varint((number << 3) | wire_type)
    return key + (varint(value) if wire_type == 0 else varint(len(value)) + value)


def simple_frame(command):
    return struct.pack(">II", len(command) + 4, len(command)) + command


def payload_frame(command, metadata, payload):
    checked = struct.pack(">I", len(metadata)) + metadata + payload
    rest = (struct.pack(">I", len(command)) + command + b"\x0e\x01" +
            struct.pack(">I", crc32c(checked)) + checked)
    return struct.pack(">I", len(rest)) + rest


def batch_entry(payload):
    single = field(3, 0, len(payload))  # SingleMessageMetadata.payload_size
    return struct.pack(">I", len(single)) + single + payload


def main(directory):
    assert crc32c(b"123456789") == 0xE3069283
    # BaseCommand: type = 1, ping = 18; MESSAGE = 9 {consumer_id 1, message_id 2 {ledgerId 1,
    # entryId 2}, redelivery_count 3}.
    ping = field(1, 0, 18) + field(18, 2, b"")
    message_id = field(1, 0, 5) + field(2, 0, 9)
    message = field(1, 0, 9) + field(9, 2, field(1, 0, 1) + field(2, 2, message_id) +
                                     field(3, 0, 2))
    # MessageMetadata: producer_name 1, sequence_id 2, publish_time 3, properties 4 {key 1,
    # value 2}, compression 8, uncompressed_size 9, num_messages_in_batch 11.
    job = field(4, 2, field(1, 2, b"bq-job") + field(2, 2, b"urn:bq:job:x:v1"))
    metadata = field(1, 2, b"p") + field(2, 0, 0) + field(3, 0, 1700000000000) + job
    batch = batch_entry(b"one") + batch_entry(b"two!")
    batch_metadata = field(1, 2, b"p") + field(2, 0, 1) + field(3, 0, 1) + field(11, 0, 2)
    # Raw Snappy: varint length, one literal (tag (n-1) << 2).
    snappy = varint(len(batch)) + bytes([(len(batch) - 1) << 2]) + batch
    # An LZ4 block of literals only: token 0xF0, then the length beyond 15 in 255-steps.
    extra = len(batch) - 15
    lz4 = bytes([0xF0]) + bytes([255] * (extra // 255)) + bytes([extra % 255]) + batch
    vectors = {
        "ping": simple_frame(ping),
        "message": payload_frame(message, metadata, b'{"job":"urn:bq:job:x:v1"}'),
        "batch": payload_frame(message, batch_metadata, batch),
        "batch-snappy": payload_frame(
            message, batch_metadata + field(8, 0, 4) + field(9, 0, len(batch)), snappy),
        "batch-lz4": payload_frame(
            message, batch_metadata + field(8, 0, 1) + field(9, 0, len(batch)), lz4),
    }
    for name, data in vectors.items():
        with open(f"{directory}/{name}", "wb") as out:
            out.write(data)


if __name__ == "__main__":
    main(sys.argv[1])
