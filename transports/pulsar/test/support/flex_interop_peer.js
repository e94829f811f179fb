#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The independent Node.js client of the Pulsar interop tests (transports/pulsar/test/
// interop_flex_test.cpp): pulsar-flex 1.1.1 (npm, pure JavaScript, its own protocol code), from
// the node_modules of testing/peers/pulsar/install.sh (NODE_PATH).
//
//   produce URL TOPIC        sends every line of stdin, {"payload_hex": HEX, "properties": {..}},
//                            as one message (sendMessage, each waiting for its receipt);
//                            prints "SENT <n>"
//   produce-batch URL TOPIC  the same lines as one batch message (sendBatch: num_messages_in_batch
//                            and a SingleMessageMetadata with the properties per message);
//                            prints "SENT <n>"
//   consume URL TOPIC SUBSCRIPTION N
//                            receives N messages on the Shared subscription (from the earliest),
//                            acks each; prints "MSG <json>" per message: payload_hex, properties,
//                            redelivery_count; exit 1 when they do not all come within 30 s
// URL is pulsar://127.0.0.1:PORT. Exit status 0 when done, 1 on a failure (reason on stdout).
'use strict';

const readline = require('readline');
const { Producer, Consumer, logLevel } = require('pulsar-flex');

const quiet = { logLevel: logLevel.NOTHING };
const kConsumeTimeoutMs = 30000;

const server = (url) => url.replace(/^pulsar:\/\//, '').replace(/\/$/, '');

async function readInput() {
  const lines = [];
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (line.trim() === '') continue;
    const { payload_hex: hex, properties } = JSON.parse(line);
    lines.push({ payload: Buffer.from(hex, 'hex'), properties });
  }
  return lines;
}

async function produce(url, topic, batch) {
  const messages = await readInput();
  const producer = new Producer({ topic, discoveryServers: [server(url)], ...quiet });
  await producer.create();
  if (batch) {
    await producer.sendBatch({ messages });
  } else {
    for (const message of messages) await producer.sendMessage(message);
  }
  await producer.close();
  console.log(`SENT ${messages.length}`);
}

async function consume(url, topic, subscription, n) {
  const consumer = new Consumer({
    topic,
    discoveryServers: [server(url)],
    subscription,
    subType: Consumer.SUB_TYPES.SHARED,
    consumerName: 'flex-interop',
    initialPosition: Consumer.INITIAL_POSITION.EARLIEST,
    receiveQueueSize: 100,
    ...quiet,
  });
  let received = 0;
  let done;
  const all = new Promise((resolve) => {
    done = resolve;
  });
  await consumer.subscribe();
  await consumer.run({
    autoAck: false,
    onMessage: async ({ message, properties, redeliveryCount, ack }) => {
      console.log(
        `MSG ${JSON.stringify({
          payload_hex: Buffer.from(message).toString('hex'),
          properties,
          redelivery_count: redeliveryCount || 0,
        })}`
      );
      await ack();
      if (++received === n) done();
    },
  });
  const timer = setTimeout(() => {
    console.log(`FAILED ${received} of ${n} messages within ${kConsumeTimeoutMs} ms`);
    process.exit(1);
  }, kConsumeTimeoutMs);
  await all;
  clearTimeout(timer);
  await consumer.unsubscribe();
}

async function main() {
  const [command, url, topic, subscription, n] = process.argv.slice(2);
  if (command === 'produce' || command === 'produce-batch') {
    await produce(url, topic, command === 'produce-batch');
  } else if (command === 'consume') {
    await consume(url, topic, subscription, Number(n));
  } else {
    console.log(`FAILED unknown command ${command}`);
    process.exit(2);
  }
  process.exit(0); // pulsar-flex keeps timers of its own
}

main().catch((e) => {
  console.log(`FAILED ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
