#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Self-check of the fake Pulsar broker (peer.js) against an independent client, pulsar-flex, and
// raw frames for what pulsar-flex does not exercise. Prints "ok NAME" / "FAIL NAME: why" per check
// and "N of M checks held"; exit 0 when all held.
//
// Usage: node check.js [--broker pulsar://127.0.0.1:PORT]
//   --broker: run the client checks against that broker (a real one) instead of a fake of their
//   own, leaving out the checks that need the fake's control channel.
'use strict';

const net = require('net');
const path = require('path');
const { spawn } = require('child_process');
const { Producer, Consumer, logLevel } = require('pulsar-flex');
const { CRC } = require('crc-full');
const codec = require('./codec');

const { pb, Type } = codec;
const SUB = Consumer.SUB_TYPES;

const argv = process.argv.slice(2);
const realBroker = argv[0] === '--broker' ? argv[1] : null;
const quiet = { logLevel: logLevel.NOTHING };
const run = `${process.pid}-${Date.now() % 100000}`;
let topicCount = 0;
const newTopic = (what) => `persistent://public/default/bq-check-${what}-${run}-${++topicCount}`;

// ---- helpers ----
function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(what, predicate, timeoutMs = 8000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}
function expectEqual(actual, wanted, what) {
  const a = JSON.stringify(actual);
  const w = JSON.stringify(wanted);
  if (a !== w) throw new Error(`${what}: got ${a}, expected ${w}`);
}

// A fake broker process: {host:port strings, control(line) -> reply, stop()}.
async function startFake(args = []) {
  const child = spawn(process.execPath, [path.join(__dirname, 'peer.js'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  process.on('exit', () => child.kill('SIGKILL')); // also when a check crashes the process
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const lines = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const got = out.split('\n').filter(Boolean);
      if (got.length >= 3) resolve(got);
    });
    child.once('exit', (code) => reject(new Error(`fake broker exited (${code}): ${stderr}`)));
  });
  const address = (prefix) => lines.find((l) => l.startsWith(prefix)).slice(prefix.length);
  const fake = {
    primary: address('listening '),
    second: address('second '),
    controlAddress: address('control '),
    stderr: () => stderr,
  };
  const [host, port] = fake.controlAddress.split(':');
  const socket = net.connect(Number(port), host);
  socket.setEncoding('utf8');
  let buffered = '';
  const waiting = [];
  socket.on('data', (d) => {
    buffered += d;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      waiting.shift()(JSON.parse(line));
    }
  });
  await new Promise((resolve) => socket.once('connect', resolve));
  fake.control = (line) =>
    new Promise((resolve, reject) => {
      waiting.push((reply) => (reply.ok ? resolve(reply) : reject(new Error(`${line}: ${reply.error}`))));
      socket.write(`${line}\n`);
    });
  fake.stop = () => {
    socket.destroy();
    child.kill('SIGTERM');
  };
  return fake;
}

// pulsar-flex's producer and consumer on `server` (host:port).
function producer(server, topic, extra = {}) {
  return new Producer({ topic, discoveryServers: [server], ...quiet, ...extra });
}
// A subscribed, running consumer whose messages collect in `got`. `hold` (a promise) keeps the
// first onMessage from returning until it resolves. autoAck off: each entry of `got` has ack().
async function consumer(server, topic, { subType = SUB.SHARED, queue = 100, hold = null, extra = {} } = {}) {
  const c = new Consumer({
    topic,
    discoveryServers: [server],
    subscription: 'bq-check',
    subType,
    consumerName: `check-${topicCount}`,
    receiveQueueSize: queue,
    reconnectInterval: 200,
    ...quiet,
    ...extra,
  });
  const got = [];
  await c.subscribe();
  await c.run({
    autoAck: false,
    onMessage: async (m) => {
      got.push(m);
      if (hold) await hold;
    },
  });
  return { c, got };
}

// A raw connection on the codec: request(command) resolves with the next frame of `type`.
async function rawConnection(server) {
  const [host, port] = server.split(':');
  const socket = net.connect(Number(port), host);
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const reader = new codec.FrameReader(16 << 20);
  const frames = [];
  socket.on('data', (chunk) => frames.push(...reader.feed(chunk)));
  const raw = {
    frames,
    write: (command) => socket.write(codec.commandFrame(command)),
    writePayload: (command, metadata, payload, corrupt = false) => {
      const frame = codec.payloadFrame(command, metadata, payload);
      if (corrupt) frame[frame.length - 1] ^= 0xff;
      socket.write(frame);
    },
    next: (type) =>
      waitFor(`frame type ${type}`, () => {
        const i = frames.findIndex((f) => f.command.getType() === type);
        return i >= 0 ? frames.splice(i, 1)[0] : null;
      }),
    close: () => socket.destroy(),
  };
  raw.write(new pb.BaseCommand().setType(Type.CONNECT).setConnect(
    new pb.CommandConnect().setClientVersion('bq-check').setProtocolVersion(17)));
  await raw.next(Type.CONNECTED);
  return raw;
}

// ---- checks against any broker (pulsar-flex only) ----
const common = [];
const fakeOnly = [];
const check = (list, name, fn) => list.push({ name, fn });

check(common, 'send receipt carries the ledger and entry of each message', async ({ server }) => {
  const topic = newTopic('receipt');
  const p = producer(server, topic);
  await p.create();
  const receipts = []; // as pulsar-flex parsed them (sendMessage resolves on the receipt)
  p._client.getResponseEvents().on('sendReceipt', ({ command }) => receipts.push(command));
  expectEqual(await p.sendMessage({ payload: 'one', properties: { a: '1' } }), true, 'first send');
  expectEqual(await p.sendMessage({ payload: 'two', properties: {} }), true, 'second send');
  expectEqual(receipts.length, 2, 'receipts');
  const [first, second] = receipts;
  expect(first.messageId && second.messageId, 'receipts without a message id');
  expectEqual(second.messageId.ledgerid, first.messageId.ledgerid, 'ledger of the second receipt');
  expectEqual(second.messageId.entryid, first.messageId.entryid + 1, 'entry of the second receipt');
  expectEqual(second.sequenceId, first.sequenceId + 1, 'sequence id of the second receipt');
  await p.close();
});

check(common, 'round trip: payload, properties, redelivery count 0, individual ack', async ({ server, fake }) => {
  const topic = newTopic('roundtrip');
  const { c, got } = await consumer(server, topic);
  const p = producer(server, topic);
  await p.create();
  for (let i = 0; i < 3; i++) await p.sendMessage({ payload: `m${i}`, properties: { i: String(i), kind: 'check' } });
  await waitFor('3 messages', () => got.length >= 3);
  expectEqual(got.map((m) => m.message.toString()), ['m0', 'm1', 'm2'], 'payloads');
  expectEqual(got.map((m) => m.properties), [0, 1, 2].map((i) => ({ i: String(i), kind: 'check' })), 'properties');
  expectEqual(got.map((m) => m.redeliveryCount), [0, 0, 0], 'redelivery counts');
  for (const m of got) await m.ack();
  if (fake) {
    const s = await fake.control(`stats ${topic} bq-check`);
    expectEqual([s.subscriptions['bq-check'].acked, s.subscriptions['bq-check'].backlog], [3, 0], 'acked, backlog');
  }
  await c.unsubscribe();
  await p.close();
});

check(common, 'a batch of pulsar-flex arrives as its single messages', async ({ server, fake }) => {
  const topic = newTopic('flexbatch');
  const { c, got } = await consumer(server, topic);
  const p = producer(server, topic);
  await p.create();
  await p.sendBatch({ messages: [0, 1, 2].map((i) => ({ payload: `b${i}`, properties: { n: String(i) } })) });
  await waitFor('3 batch entries', () => got.length >= 3);
  expectEqual(got.map((m) => m.message.toString()), ['b0', 'b1', 'b2'], 'payloads');
  expectEqual(got.map((m) => m.properties.n), ['0', '1', '2'], 'properties');
  if (fake) expectEqual((await fake.control(`stats ${topic}`)).entries, 1, 'entries stored');
  await got[2].ack();
  await c.unsubscribe();
  await p.close();
});

check(common, 'negative ack: redelivered with redelivery count 1, then 2 (Shared)', async ({ server }) => {
  const topic = newTopic('nack');
  const { c, got } = await consumer(server, topic);
  const p = producer(server, topic);
  await p.create();
  await p.sendMessage({ payload: 'again', properties: {} });
  await waitFor('first delivery', () => got.length >= 1);
  await got[0].ack({ type: Consumer.ACK_TYPES.NEGATIVE });
  await waitFor('redelivery', () => got.length >= 2, 15000);
  await got[1].ack({ type: Consumer.ACK_TYPES.NEGATIVE });
  await waitFor('second redelivery', () => got.length >= 3, 15000);
  expectEqual(got.map((m) => m.redeliveryCount || 0), [0, 1, 2], 'redelivery counts');
  expectEqual(got.map((m) => m.message.toString()), ['again', 'again', 'again'], 'payloads');
  await got[2].ack();
  await c.unsubscribe();
  await p.close();
});

check(common, 'a second Exclusive consumer is refused (ConsumerBusy)', async ({ server }) => {
  const topic = newTopic('exclusive');
  const { c } = await consumer(server, topic, { subType: SUB.EXCLUSIVE });
  const other = new Consumer({ topic, discoveryServers: [server], subscription: 'bq-check', subType: SUB.EXCLUSIVE, consumerName: 'x', ...quiet });
  let refused = null;
  try {
    await other.subscribe();
  } catch (e) {
    refused = e;
  }
  expect(refused, 'the second Exclusive subscribe succeeded');
  await c.unsubscribe();
});

check(common, 'a consumer whose connection closes: its unacked message goes to the next, count kept', async ({ server }) => {
  const topic = newTopic('handover');
  const subscribeRaw = async (consumerId) => {
    const raw = await rawConnection(server);
    raw.write(new pb.BaseCommand().setType(Type.LOOKUP).setLookuptopic(new pb.CommandLookupTopic().setTopic(topic).setRequestId(1)));
    await raw.next(Type.LOOKUP_RESPONSE);
    raw.write(new pb.BaseCommand().setType(Type.SUBSCRIBE).setSubscribe(new pb.CommandSubscribe().setTopic(topic).setSubscription('handover')
      .setSubtype(pb.CommandSubscribe.SubType.SHARED).setConsumerId(consumerId).setRequestId(2)
      .setInitialposition(pb.CommandSubscribe.InitialPosition.EARLIEST)));
    await raw.next(Type.SUCCESS);
    raw.write(new pb.BaseCommand().setType(Type.FLOW).setFlow(new pb.CommandFlow().setConsumerId(consumerId).setMessagepermits(10)));
    return raw;
  };
  const first = await subscribeRaw(1);
  const p = producer(server, topic);
  await p.create();
  await p.sendMessage({ payload: 'handed over', properties: {} });
  const delivered = (await first.next(Type.MESSAGE)).command.getMessage();
  expectEqual(delivered.getRedeliveryCount(), 0, 'first delivery count');
  first.close();
  const second = await subscribeRaw(2);
  const frame = await second.next(Type.MESSAGE);
  const again = frame.command.getMessage();
  expectEqual([again.getMessageId().getLedgerid(), again.getMessageId().getEntryid()],
    [delivered.getMessageId().getLedgerid(), delivered.getMessageId().getEntryid()], 'message id');
  expectEqual(again.getRedeliveryCount(), 0, 'redelivery count after the handover');
  expectEqual(codec.readEntry(frame.metadata, frame.payload)[0].payload.toString(), 'handed over', 'payload');
  second.close();
  await p.close();
});

// ---- checks of the fake's scripted behaviour ----
check(fakeOnly, 'ping from the broker is answered with pong', async ({ server, fake }) => {
  const p = producer(server, newTopic('ping'));
  await p.create();
  const reply = await fake.control('ping');
  expect(reply.pinged >= 1, `pinged ${reply.pinged}`);
  expectEqual(reply.ponged, reply.pinged, 'pongs');
  await p.close();
});

check(fakeOnly, 'flow permits: no more messages than permits granted', async ({ server, fake }) => {
  const topic = newTopic('flow');
  let release;
  const hold = new Promise((resolve) => {
    release = resolve;
  });
  const { c, got } = await consumer(server, topic, { queue: 4, hold });
  for (let i = 0; i < 12; i++) await fake.control(`enqueue ${JSON.stringify({ topic, payload: `f${i}` })}`);
  await waitFor('the first message', () => got.length >= 1);
  await sleep(300); // time for anything beyond the permits to arrive, were it sent
  let s = (await fake.control(`stats ${topic} bq-check`)).subscriptions['bq-check'];
  expectEqual([s.consumers[0].granted, s.consumers[0].delivered, s.consumers[0].permits], [4, 4, 0], 'granted, delivered, permits');
  release();
  // pulsar-flex re-flows 2 at a time here and polls an empty queue once a second: up to ~5 s.
  await waitFor('every message', () => got.length >= 12, 30000);
  s = (await fake.control(`stats ${topic} bq-check`)).subscriptions['bq-check'];
  expect(s.consumers[0].delivered <= s.consumers[0].granted, `delivered ${s.consumers[0].delivered} > granted ${s.consumers[0].granted}`);
  expectEqual(got.map((m) => m.message.toString()), [...Array(12).keys()].map((i) => `f${i}`), 'order');
  await c.unsubscribe();
});

check(fakeOnly, 'lookup redirects to the second listener, which serves the topic', async ({ server, fake }) => {
  const topic = newTopic('redirect');
  await fake.control(`redirect ${topic} second`);
  const before = (await fake.control('connections')).connects.second;
  const { c, got } = await consumer(server, topic);
  const p = producer(server, topic);
  await p.create();
  await p.sendMessage({ payload: 'via second', properties: {} });
  await waitFor('the message', () => got.length >= 1);
  expectEqual(got[0].message.toString(), 'via second', 'payload');
  const after = (await fake.control('connections')).connects.second;
  expect(after >= before + 2, `connections to the second listener: ${before} -> ${after}`);
  // The primary listener refuses to serve it (a client that ignored the redirect).
  const raw = await rawConnection(server);
  raw.write(new pb.BaseCommand().setType(Type.PRODUCER).setProducer(new pb.CommandProducer().setTopic(topic).setProducerId(1).setRequestId(7)));
  const refused = (await raw.next(Type.ERROR)).command.getError();
  expectEqual([refused.getRequestId(), refused.getError()], [7, pb.ServerError.SERVICENOTREADY], 'PRODUCER on the primary');
  raw.close();
  await c.unsubscribe();
  await p.close();
});

check(fakeOnly, 'self redirects (authoritative) then Connect; partitioned metadata', async ({ server, fake }) => {
  const topic = newTopic('meta');
  await fake.control(`redirect ${topic} self 2`);
  await fake.control(`partition ${topic} 3`);
  const raw = await rawConnection(server);
  const lookup = async (id) => {
    raw.write(new pb.BaseCommand().setType(Type.LOOKUP).setLookuptopic(new pb.CommandLookupTopic().setTopic(topic).setRequestId(id)));
    return (await raw.next(Type.LOOKUP_RESPONSE)).command.getLookuptopicresponse();
  };
  const answers = [await lookup(1), await lookup(2), await lookup(3)];
  const R = pb.CommandLookupTopicResponse.LookupType;
  expectEqual(answers.map((a) => a.getResponse()), [R.REDIRECT, R.REDIRECT, R.CONNECT], 'lookup answers');
  expectEqual(answers.map((a) => a.getAuthoritative()), [true, true, true], 'authoritative');
  expectEqual(answers[2].getBrokerserviceurl(), `pulsar://${server}`, 'broker URL');
  raw.write(new pb.BaseCommand().setType(Type.PARTITIONED_METADATA).setPartitionmetadata(new pb.CommandPartitionedTopicMetadata().setTopic(topic).setRequestId(4)));
  const meta = (await raw.next(Type.PARTITIONED_METADATA_RESPONSE)).command.getPartitionmetadataresponse();
  expectEqual([meta.getRequestId(), meta.getPartitions()], [4, 3], 'partitions');
  raw.close();
  // Partition 1 is a topic of its own; its messages carry the partition index.
  const part = `${topic}-partition-1`;
  const { c, got } = await consumer(server, part);
  const p = producer(server, part);
  await p.create();
  await p.sendMessage({ payload: 'p1', properties: {} });
  await waitFor('the message', () => got.length >= 1);
  expectEqual(got[0].command.messageId.partition, 1, 'partition of the message id');
  await c.unsubscribe();
  await p.close();
});

check(fakeOnly, 'drop: pulsar-flex reconnects, unacked messages come back, new ones flow', async ({ server, fake }) => {
  const topic = newTopic('drop');
  const { c, got } = await consumer(server, topic);
  await fake.control(`enqueue ${JSON.stringify({ topic, payload: 'before' })}`);
  await waitFor('the first delivery', () => got.length >= 1);
  const before = (await fake.control('connections')).connects.primary;
  const dropped = await fake.control('drop');
  expect(dropped.dropped >= 1, `dropped ${dropped.dropped}`);
  await waitFor('redelivery after the reconnect', () => got.length >= 2, 15000);
  expectEqual(got[1].message.toString(), 'before', 'redelivered payload');
  await fake.control(`enqueue ${JSON.stringify({ topic, payload: 'after' })}`);
  await waitFor('a new message', () => got.length >= 3, 15000);
  expectEqual(got[2].message.toString(), 'after', 'new payload');
  const after = (await fake.control('connections')).connects.primary;
  expect(after > before, `connections ${before} -> ${after}`);
  await got[1].ack();
  await got[2].ack();
  const s = (await fake.control(`stats ${topic} bq-check`)).subscriptions['bq-check'];
  expectEqual([s.acked, s.backlog], [2, 0], 'acked, backlog');
  await c.unsubscribe();
});

check(fakeOnly, 'CLOSE_CONSUMER from the broker: pulsar-flex subscribes again', async ({ server, fake }) => {
  const topic = newTopic('close');
  const { c, got } = await consumer(server, topic);
  expectEqual((await fake.control(`close-consumers ${topic}`)).closed, 1, 'closed consumers');
  await waitFor('the consumer back', async () =>
    ((await fake.control(`stats ${topic} bq-check`)).subscriptions['bq-check'].consumers.length === 1), 15000);
  await fake.control(`enqueue ${JSON.stringify({ topic, payload: 'x' })}`);
  await waitFor('a message', () => got.length >= 1, 15000);
  await c.unsubscribe();
});

check(fakeOnly, 'scripted redelivery count and an uncompressed Java-style batch', async ({ server, fake }) => {
  const topic = newTopic('scripted');
  const { c, got } = await consumer(server, topic);
  await fake.control(`enqueue ${JSON.stringify({ topic, payload: 'r', redelivery_count: 3 })}`);
  await fake.control(`enqueue ${JSON.stringify({
    topic, batch: true,
    messages: [{ payload: 'x0', properties: { k: 'a' }, key: 'K' }, { payload: 'x1', properties: { k: 'b' } }],
  })}`);
  await waitFor('4 messages', () => got.length >= 3);
  expectEqual(got[0].redeliveryCount, 3, 'scripted redelivery count');
  expectEqual(got.slice(1).map((m) => [m.message.toString(), m.properties.k]), [['x0', 'a'], ['x1', 'b']], 'batch entries');
  expectEqual(got[1].metadata.partitionKey, 'K', 'partition key of the first entry');
  await c.unsubscribe();
});

check(fakeOnly, 'compressed batches (LZ4, ZLIB Java and Go, ZSTD, SNAPPY): checksum and contents', async ({ server, fake }) => {
  const crc = new CRC('CRC32_C', 32, 0x1edc6f41, 0xffffffff, 0xffffffff, true, true); // pulsar-flex's own
  const cases = [['LZ4', 'java'], ['ZLIB', 'java'], ['ZLIB', 'go'], ['ZSTD', 'java'], ['SNAPPY', 'java']];
  for (const [compression, writer] of cases) {
    const topic = newTopic(`codec-${compression}-${writer}`);
    const messages = [0, 1, 2].map((i) => ({ payload: `${compression} entry ${i} `.repeat(20), properties: { i: String(i) } }));
    await fake.control(`enqueue ${JSON.stringify({ topic, batch: true, compression, writer, messages })}`);
    const raw = await rawConnection(server);
    raw.write(new pb.BaseCommand().setType(Type.SUBSCRIBE).setSubscribe(new pb.CommandSubscribe().setTopic(topic).setSubscription('s')
      .setSubtype(pb.CommandSubscribe.SubType.SHARED).setConsumerId(1).setRequestId(1)
      .setInitialposition(pb.CommandSubscribe.InitialPosition.EARLIEST)));
    await raw.next(Type.SUCCESS);
    raw.write(new pb.BaseCommand().setType(Type.FLOW).setFlow(new pb.CommandFlow().setConsumerId(1).setMessagepermits(10)));
    const frame = await raw.next(Type.MESSAGE);
    raw.close();
    expectEqual(frame.checksumOk, true, `${compression} checksum (codec)`);
    const meta = pb.MessageMetadata.deserializeBinary(frame.metadata);
    expectEqual(meta.getCompression(), codec.COMPRESSIONS[compression], `${compression} compression field`);
    expectEqual(meta.getNumMessagesInBatch(), 3, `${compression} num_messages_in_batch`);
    const sizeBuffer = Buffer.alloc(4);
    sizeBuffer.writeUInt32BE(frame.metadata.length);
    expectEqual(crc.compute(Buffer.concat([sizeBuffer, frame.metadata, frame.payload])) >>> 0, codec.crc32c(sizeBuffer, frame.metadata, frame.payload), `${compression} checksum (crc-full)`);
    const entries = codec.readEntry(frame.metadata, frame.payload);
    expectEqual(entries.map((e) => [e.payload.toString(), e.properties.i]), messages.map((m) => [m.payload, m.properties.i]), `${compression} entries`);
    if (compression === 'ZLIB') {
      const stream = frame.payload;
      const complete = stream.length >= 4 && stream.subarray(-4).toString('hex') !== '0000ffff';
      expectEqual(complete, writer === 'go', `ZLIB ${writer}: ends with a complete stream`);
    }
  }
});

check(fakeOnly, 'a payload with a bad checksum gets SEND_ERROR ChecksumError', async ({ server }) => {
  const topic = newTopic('crc');
  const raw = await rawConnection(server);
  raw.write(new pb.BaseCommand().setType(Type.PRODUCER).setProducer(new pb.CommandProducer().setTopic(topic).setProducerId(1).setRequestId(1)));
  await raw.next(Type.PRODUCER_SUCCESS);
  const metadata = Buffer.from(new pb.MessageMetadata().setProducerName('p').setSequenceId(0).setPublishTime(1).serializeBinary());
  raw.writePayload(new pb.BaseCommand().setType(Type.SEND).setSend(new pb.CommandSend().setProducerId(1).setSequenceId(0)), metadata, Buffer.from('payload'), true);
  const error = (await raw.next(Type.SEND_ERROR)).command.getSendError();
  expectEqual(error.getError(), pb.ServerError.CHECKSUMERROR, 'error');
  raw.close();
});

check(fakeOnly, 'token auth: the right JWT connects, a wrong or missing one is refused', async () => {
  const secured = await startFake(['--token', 'check-secret']);
  try {
    const topic = newTopic('auth');
    const good = producer(secured.primary, topic, { jwt: 'check-secret' });
    await good.create();
    await good.sendMessage({ payload: 'authed', properties: {} });
    await good.close();
    for (const jwt of ['wrong', undefined]) {
      const bad = producer(secured.primary, topic, jwt ? { jwt } : {});
      let refused = null;
      try {
        await bad.create();
      } catch (e) {
        refused = e;
      }
      expect(refused && /authenticate/i.test(refused.message || ''), `jwt ${jwt}: ${refused ? refused.message : 'connected'}`);
    }
    expectEqual((await secured.control('connections')).refused_auth, 2, 'refused connections');
  } finally {
    secured.stop();
  }
});

async function main() {
  await codec.ready();
  let fake = null;
  let server = null;
  let list = common;
  if (realBroker) {
    server = realBroker.replace(/^pulsar:\/\//, '').replace(/\/$/, '');
    console.log(`client checks against ${realBroker}`);
  } else {
    fake = await startFake();
    server = fake.primary;
    list = [...common, ...fakeOnly];
  }
  let held = 0;
  for (const { name, fn } of list) {
    try {
      await fn({ server, fake });
      console.log(`ok ${name}`);
      held++;
    } catch (e) {
      console.log(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
    }
  }
  console.log(`${held} of ${list.length} checks held`);
  if (fake && held !== list.length) console.log(`fake broker stderr:\n${fake.stderr()}`);
  if (fake) fake.stop();
  process.exit(held === list.length ? 0 : 1);
}

main().catch((e) => {
  console.log(`FAIL: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
