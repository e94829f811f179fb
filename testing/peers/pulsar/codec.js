// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Pulsar binary-protocol framing for the fake broker and its self-check, on pulsar-flex's
// generated protobuf (pulsar_pb.js): frames, CRC32C, batch payloads and the four compressions as
// the Java and Go clients write them.
'use strict';

const zlib = require('zlib');
const lz4 = require('lz4js');
const snappy = require('snappyjs');
const pb = require('pulsar-flex/src/commands/protocol/pulsar/pulsar_pb');

const Type = pb.BaseCommand.Type;
const MAGIC_CRC32C = 0x0e01;
const MAGIC_BROKER_ENTRY_METADATA = 0x0e02;

// ---- CRC32C (Castagnoli), reflected, table-driven ----
const CRC_TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

function crc32c(...buffers) {
  let crc = -1;
  for (const buffer of buffers) {
    for (let i = 0; i < buffer.length; i++) crc = CRC_TABLE[(crc ^ buffer[i]) & 0xff] ^ (crc >>> 8);
  }
  return (crc ^ -1) >>> 0;
}

// ---- frames ----
function u32(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

// A simple command frame: [total][command size][command].
function commandFrame(command) {
  const body = Buffer.from(command.serializeBinary());
  return Buffer.concat([u32(body.length + 4), u32(body.length), body]);
}

// A payload frame: [total][command size][command][0x0e01][crc32c][metadata size][metadata][payload].
// `metadata` is the serialized MessageMetadata (bytes as the producer wrote them).
function payloadFrame(command, metadata, payload) {
  const body = Buffer.from(command.serializeBinary());
  const metaSize = u32(metadata.length);
  const crc = u32(crc32c(metaSize, metadata, payload));
  const magic = Buffer.from([MAGIC_CRC32C >> 8, MAGIC_CRC32C & 0xff]);
  const rest = Buffer.concat([magic, crc, metaSize, metadata, payload]);
  return Buffer.concat([u32(4 + body.length + rest.length), u32(body.length), body, rest]);
}

// Splits a byte stream into frames. feed() returns the complete frames read so far, each
// {command (BaseCommand), metadata (Buffer|null), payload (Buffer|null), checksumOk (bool|null)}.
class FrameReader {
  constructor(maxFrameSize) {
    this.max = maxFrameSize;
    this.pending = Buffer.alloc(0);
  }

  feed(chunk) {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const frames = [];
    while (this.pending.length >= 4) {
      const total = this.pending.readUInt32BE(0);
      if (total > this.max) throw new Error(`frame of ${total} bytes exceeds ${this.max}`);
      if (this.pending.length < 4 + total) break;
      frames.push(parseFrame(this.pending.subarray(4, 4 + total)));
      this.pending = this.pending.subarray(4 + total);
    }
    return frames;
  }
}

function parseFrame(frame) {
  const size = frame.readUInt32BE(0);
  if (size + 4 > frame.length) throw new Error('command size exceeds the frame');
  const command = pb.BaseCommand.deserializeBinary(frame.subarray(4, 4 + size));
  let rest = frame.subarray(4 + size);
  if (rest.length === 0) return { command, metadata: null, payload: null, checksumOk: null };
  if (rest.length >= 2 && rest.readUInt16BE(0) === MAGIC_BROKER_ENTRY_METADATA) {
    const n = rest.readUInt32BE(2);
    rest = rest.subarray(6 + n);
  }
  let checksumOk = null;
  let checksum = null;
  if (rest.length >= 6 && rest.readUInt16BE(0) === MAGIC_CRC32C) {
    checksum = rest.readUInt32BE(2);
    rest = rest.subarray(6);
  }
  if (rest.length < 4) throw new Error('payload frame without metadata');
  const metaSize = rest.readUInt32BE(0);
  if (4 + metaSize > rest.length) throw new Error('metadata size exceeds the frame');
  if (checksum !== null) checksumOk = crc32c(rest) === checksum;
  return {
    command,
    metadata: Buffer.from(rest.subarray(4, 4 + metaSize)),
    payload: Buffer.from(rest.subarray(4 + metaSize)),
    checksumOk,
  };
}

// ---- compression ----
let zstd = null; // set by ready()

// Loads the ZSTD codec (WebAssembly, asynchronous start).
function ready() {
  return new Promise((resolve) => {
    require('zstd-codec').ZstdCodec.run((binding) => {
      zstd = new binding.Simple();
      resolve();
    });
  });
}

const COMPRESSIONS = {
  NONE: pb.CompressionType.NONE,
  LZ4: pb.CompressionType.LZ4,
  ZLIB: pb.CompressionType.ZLIB,
  ZSTD: pb.CompressionType.ZSTD,
  SNAPPY: pb.CompressionType.SNAPPY,
};

// `data` compressed with `name` as `writer` ("java" or "go") writes it: LZ4 a raw block (lz4-java
// and pierrec/lz4 alike); ZLIB a zlib stream, from Java's Deflater ended by a sync flush (no
// final block, no Adler-32), from Go's compress/zlib complete; ZSTD one frame; SNAPPY raw.
function compress(name, data, writer = 'java') {
  switch (name) {
    case 'NONE':
      return data;
    case 'LZ4': {
      const out = Buffer.alloc(lz4.compressBound(data.length));
      const n = lz4.compressBlock(data, out, 0, data.length, new Uint32Array(1 << 16));
      if (n === 0) {
        // lz4js leaves input it cannot shrink as is: a literal-only block is valid LZ4.
        return literalLz4Block(data);
      }
      return out.subarray(0, n);
    }
    case 'ZLIB':
      return writer === 'go'
        ? zlib.deflateSync(data)
        : zlib.deflateSync(data, { finishFlush: zlib.constants.Z_SYNC_FLUSH });
    case 'ZSTD':
      return Buffer.from(zstd.compress(data, 3));
    case 'SNAPPY':
      return Buffer.from(snappy.compress(data));
    default:
      throw new Error(`unknown compression ${name}`);
  }
}

// One LZ4 sequence of literals only.
function literalLz4Block(data) {
  const head = [];
  let n = data.length;
  if (n < 15) {
    head.push(n << 4);
  } else {
    head.push(0xf0);
    n -= 15;
    while (n >= 255) {
      head.push(255);
      n -= 255;
    }
    head.push(n);
  }
  return Buffer.concat([Buffer.from(head), data]);
}

function decompress(type, data, size) {
  switch (type) {
    case pb.CompressionType.NONE:
      return data;
    case pb.CompressionType.LZ4: {
      const out = Buffer.alloc(size);
      const n = lz4.decompressBlock(data, out, 0, data.length, 0);
      if (n !== size) throw new Error(`LZ4: ${n} bytes, expected ${size}`);
      return out;
    }
    case pb.CompressionType.ZLIB:
      return zlib.inflateSync(data, { finishFlush: zlib.constants.Z_SYNC_FLUSH });
    case pb.CompressionType.ZSTD:
      return Buffer.from(zstd.decompress(data));
    case pb.CompressionType.SNAPPY:
      return Buffer.from(snappy.uncompress(data));
    default:
      throw new Error(`unknown compression ${type}`);
  }
}

// ---- messages ----
function keyValues(properties) {
  return Object.entries(properties || {}).map(([k, v]) =>
    new pb.KeyValue().setKey(k).setValue(String(v)),
  );
}

function payloadOf(message) {
  if (message.payload_base64 !== undefined) return Buffer.from(message.payload_base64, 'base64');
  if (message.payload_hex !== undefined) return Buffer.from(message.payload_hex, 'hex');
  return Buffer.from(message.payload === undefined ? '' : String(message.payload), 'utf8');
}

// {metadata (Buffer), payload (Buffer), count} of an entry as a Java or Go producer writes it:
// `messages` [{payload | payload_base64 | payload_hex, properties, key}], one plain message or (batch) a
// batch payload of single-message metadata + payload per message, compressed with `compression`.
function buildEntry({ messages, batch, compression = 'NONE', writer = 'java', producer, sequence }) {
  if (!(compression in COMPRESSIONS)) throw new Error(`unknown compression ${compression}`);
  if (!Array.isArray(messages) || messages.length === 0) throw new Error('no messages');
  if (!batch && messages.length !== 1) throw new Error('several messages need "batch": true');
  const metadata = new pb.MessageMetadata()
    .setProducerName(producer)
    .setSequenceId(sequence)
    .setPublishTime(Date.now());
  let raw;
  if (batch) {
    raw = Buffer.concat(
      messages.map((m, i) => {
        const payload = payloadOf(m);
        const single = new pb.SingleMessageMetadata()
          .setPropertiesList(keyValues(m.properties))
          .setPayloadSize(payload.length)
          .setSequenceId(sequence + i);
        if (m.key !== undefined) single.setPartitionKey(m.key);
        const bytes = Buffer.from(single.serializeBinary());
        return Buffer.concat([u32(bytes.length), bytes, payload]);
      }),
    );
    metadata.setNumMessagesInBatch(messages.length);
  } else {
    raw = payloadOf(messages[0]);
    metadata.setPropertiesList(keyValues(messages[0].properties));
    if (messages[0].key !== undefined) metadata.setPartitionKey(messages[0].key);
  }
  if (compression !== 'NONE') {
    metadata.setCompression(COMPRESSIONS[compression]).setUncompressedSize(raw.length);
  }
  return {
    metadata: Buffer.from(metadata.serializeBinary()),
    payload: compress(compression, raw, writer),
    count: messages.length,
  };
}

// The messages of an entry: [{payload, properties, key}], batches split, payload decompressed.
function readEntry(metadataBytes, payload) {
  const metadata = pb.MessageMetadata.deserializeBinary(metadataBytes);
  const data = decompress(metadata.getCompression(), payload, metadata.getUncompressedSize());
  const props = (list) => Object.fromEntries(list.map((kv) => [kv.getKey(), kv.getValue()]));
  if (!metadata.hasNumMessagesInBatch()) {
    return [
      {
        payload: data,
        properties: props(metadata.getPropertiesList()),
        key: metadata.hasPartitionKey() ? metadata.getPartitionKey() : undefined,
      },
    ];
  }
  const out = [];
  let at = 0;
  for (let i = 0; i < metadata.getNumMessagesInBatch(); i++) {
    const size = data.readUInt32BE(at);
    const single = pb.SingleMessageMetadata.deserializeBinary(data.subarray(at + 4, at + 4 + size));
    at += 4 + size;
    out.push({
      payload: data.subarray(at, at + single.getPayloadSize()),
      properties: props(single.getPropertiesList()),
      key: single.hasPartitionKey() ? single.getPartitionKey() : undefined,
    });
    at += single.getPayloadSize();
  }
  return out;
}

module.exports = {
  pb,
  Type,
  crc32c,
  commandFrame,
  payloadFrame,
  FrameReader,
  ready,
  compress,
  decompress,
  buildEntry,
  readEntry,
  COMPRESSIONS,
};
