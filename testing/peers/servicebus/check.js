#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Self-check of the scripted Service Bus peer (peer.js) against the official client,
// @azure/service-bus: starts the peer, runs every check, prints one line per check
// ("ok NAME" or "FAIL NAME: why") and exits 0 only if every check held.
//
// Usage: node check.js   (run from a directory whose node_modules holds the pinned packages, or
// with NODE_PATH pointing at it: install.sh prints that directory)
'use strict';

const { spawn } = require('child_process');
const net = require('net');
const path = require('path');
const readline = require('readline');
const { ServiceBusClient } = require('@azure/service-bus');

const LOCK_MS = 2000;
const results = [];

function check(name, held, why) {
  results.push(held);
  process.stdout.write(held ? `ok   ${name}\n` : `FAIL ${name}: ${why}\n`);
}

function startPeer() {
  const peer = spawn(process.execPath, [path.join(__dirname, 'peer.js'), '--key-name', 'k', '--key', 'v',
    '--lock-duration-ms', String(LOCK_MS), '--max-delivery-count', '10'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: peer.stdout });
    const found = {};
    const timer = setTimeout(() => reject(new Error('the peer printed no ports within 10 s')), 10000);
    peer.on('exit', (code) => reject(new Error(`the peer exited with ${code}`)));
    lines.on('line', (line) => {
      const m = /^(listening|control) 127\.0\.0\.1:(\d+)$/.exec(line);
      if (m) found[m[1]] = Number(m[2]);
      if (found.listening && found.control) {
        clearTimeout(timer);
        resolve({ peer, port: found.listening, controlPort: found.control });
      }
    });
  });
}

// One control command, its JSON reply.
function control(port, line) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`${line}\n`));
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      buffered += chunk;
      if (buffered.includes('\n')) {
        socket.end();
        resolve(JSON.parse(buffered.slice(0, buffered.indexOf('\n'))));
      }
    });
    socket.on('error', reject);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const connectionString = (port, key) =>
  `Endpoint=sb://127.0.0.1:${port}/;SharedAccessKeyName=k;SharedAccessKey=${key};UseDevelopmentEmulator=true`;
const fast = { retryOptions: { maxRetries: 0, timeoutInMs: 5000 } };

async function receiveOne(receiver) {
  const [message] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 5000 });
  if (!message) throw new Error('no message received within 5 s');
  return message;
}

async function expectUnauthorized(name, port, key) {
  const client = new ServiceBusClient(connectionString(port, key), fast);
  try {
    await client.createSender('orders').sendMessages({ body: 'refused' });
    check(name, false, 'the send succeeded');
  } catch (e) {
    check(name, e.code === 'UnauthorizedAccess', `error code ${e.code}: ${e.message}`);
  } finally {
    await client.close();
  }
}

async function run({ port, controlPort }) {
  const client = new ServiceBusClient(connectionString(port, 'v'));
  const sender = client.createSender('orders');
  const receiver = client.createReceiver('orders', { receiveMode: 'peekLock' });
  const counts = (entity) => control(controlPort, `counts ${entity}`);

  await sender.sendMessages({ body: 'first', messageId: 'm-1', applicationProperties: { 'bq-source-lang': 'node' } });
  check('send: accepted and stored', (await counts('orders')).active === 1, JSON.stringify(await counts('orders')));

  let m = await receiveOne(receiver);
  const firstLock = m.lockedUntilUtc;
  check('peekLock receive: body, message-id, application property, deliveryCount 0',
    m.body === 'first' && m.messageId === 'm-1' && m.applicationProperties['bq-source-lang'] === 'node' && m.deliveryCount === 0,
    JSON.stringify({ body: m.body, messageId: m.messageId, props: m.applicationProperties, deliveryCount: m.deliveryCount }));
  check('peekLock receive: lock token, sequence number 1, enqueued time, locked until ahead',
    /^[0-9a-f-]{36}$/.test(m.lockToken || '') && Number(m.sequenceNumber) === 1 && m.enqueuedTimeUtc instanceof Date &&
      firstLock instanceof Date && firstLock.getTime() > Date.now(),
    JSON.stringify({ lockToken: m.lockToken, seq: String(m.sequenceNumber), enq: m.enqueuedTimeUtc, until: firstLock }));
  check('peekLock receive: the message is locked, not removed', (await counts('orders')).locked === 1, JSON.stringify(await counts('orders')));

  await sleep(20);
  const renewed = await receiver.renewMessageLock(m);
  check('renewMessageLock extends lockedUntil', renewed.getTime() > firstLock.getTime(), `${renewed.toISOString()} <= ${firstLock.toISOString()}`);

  await receiver.abandonMessage(m);
  m = await receiveOne(receiver);
  check('abandon: redelivered with deliveryCount 1', m.deliveryCount === 1, `deliveryCount ${m.deliveryCount}`);
  await receiver.abandonMessage(m);
  m = await receiveOne(receiver);
  check('abandon: redelivered with deliveryCount 2', m.deliveryCount === 2, `deliveryCount ${m.deliveryCount}`);

  await receiver.completeMessage(m);
  const afterComplete = await counts('orders');
  check('complete: removed', afterComplete.active === 0 && afterComplete.locked === 0, JSON.stringify(afterComplete));

  await sender.sendMessages({ body: 'poison', messageId: 'm-2' });
  m = await receiveOne(receiver);
  await receiver.deadLetterMessage(m, { deadLetterReason: 'poison', deadLetterErrorDescription: 'not an envelope' });
  const dlqReceiver = client.createReceiver('orders', { subQueueType: 'deadLetter', receiveMode: 'peekLock' });
  const dead = await receiveOne(dlqReceiver);
  check('deadLetter: in $DeadLetterQueue with reason and description',
    dead.body === 'poison' && dead.deadLetterReason === 'poison' && dead.deadLetterErrorDescription === 'not an envelope',
    JSON.stringify({ body: dead.body, reason: dead.deadLetterReason, description: dead.deadLetterErrorDescription }));
  await dlqReceiver.completeMessage(dead);
  check('deadLetter: the DLQ message completes', (await counts('orders')).dead_lettered === 0, JSON.stringify(await counts('orders')));

  await sender.sendMessages([{ body: 'peek-a', messageId: 'p-1' }, { body: 'peek-b', messageId: 'p-2' }]);
  const peeked = await receiver.peekMessages(10, { fromSequenceNumber: require('long').fromNumber(1) });
  const afterPeek = await counts('orders');
  check('peekMessages: both, in sequence order, without locking',
    peeked.length === 2 && peeked[0].body === 'peek-a' && peeked[1].body === 'peek-b' &&
      Number(peeked[0].sequenceNumber) < Number(peeked[1].sequenceNumber) && peeked[0].lockToken === undefined &&
      afterPeek.locked === 0 && afterPeek.active === 2,
    JSON.stringify({ n: peeked.length, bodies: peeked.map((p) => p.body), counts: afterPeek }));

  m = await receiveOne(receiver);
  const afterOne = await counts('orders');
  check('credit honoured: receiveMessages(1) locks exactly one', afterOne.locked === 1 && afterOne.active === 1, JSON.stringify(afterOne));
  await receiver.completeMessage(m);
  m = await receiveOne(receiver);
  await receiver.completeMessage(m);
  const empty = await receiver.receiveMessages(1, { maxWaitTimeInMs: 300 });
  check('drain: an empty receive returns nothing', empty.length === 0, `${empty.length} messages`);

  // Lock expiry: redelivered with one more delivery; settling the expired lock fails. (The SDK
  // renews locks by itself, which the other receivers show: here auto-renewal is off.)
  await sender.sendMessages({ body: 'slow', messageId: 's-1' });
  const lapsing = client.createReceiver('orders', { receiveMode: 'peekLock', maxAutoLockRenewalDurationInMs: 0 });
  const held = await receiveOne(lapsing);
  await sleep(LOCK_MS + 200);
  const again = await receiveOne(receiver);
  check('lock expiry: redelivered with deliveryCount 1', again.body === 'slow' && again.deliveryCount === 1, `deliveryCount ${again.deliveryCount}`);
  try {
    await lapsing.completeMessage(held);
    check('lock expiry: completing the expired lock fails with MessageLockLost', false, 'completed');
  } catch (e) {
    check('lock expiry: completing the expired lock fails with MessageLockLost', e.code === 'MessageLockLost', `code ${e.code}: ${e.message}`);
  }
  await receiver.completeMessage(again);

  // MaxDeliveryCount: a scripted message at delivery-count 9 is dead-lettered on its tenth abandon.
  await control(controlPort, 'enqueue {"entity":"orders","delivery_count":9,"body":"tired","message_id":"t-1"}');
  m = await receiveOne(receiver);
  const nine = m.deliveryCount;
  await receiver.abandonMessage(m);
  const maxed = await receiveOne(dlqReceiver);
  check('MaxDeliveryCount: the tenth abandon dead-letters with MaxDeliveryCountExceeded',
    nine === 9 && maxed.messageId === 't-1' && maxed.deadLetterReason === 'MaxDeliveryCountExceeded',
    JSON.stringify({ nine, id: maxed.messageId, reason: maxed.deadLetterReason }));
  await dlqReceiver.completeMessage(maxed);

  // Dropped connection (a network cut): the SDK reconnects when it notices. Its streaming receiver
  // re-attaches by itself once the connection is refreshed (new connection, new put-token); a send
  // issued before the SDK has noticed the cut waits for its operation timeout (SDK behaviour), so
  // the check waits for the re-attach first.
  const streamed = [];
  const streaming = client.createReceiver('recovery');
  const subscription = streaming.subscribe({
    processMessage: async (message) => { streamed.push(message.body); },
    processError: async () => {},
  });
  const waitFor = async (what, predicate) => {
    const start = Date.now();
    while (Date.now() - start < 30000) {
      if (await predicate()) return true;
      await sleep(20);
    }
    throw new Error(`${what} within 30 s`);
  };
  await waitFor('no streaming receiver attached', async () => (await counts('recovery')).receivers >= 1);
  const dropped = await control(controlPort, 'drop');
  const t0 = Date.now();
  await waitFor('the streaming receiver did not re-attach', async () => (await counts('recovery')).receivers >= 1);
  const reattached = Date.now() - t0;
  await sender.sendMessages([{ body: 'after-drop', messageId: 'd-1' }]);
  await client.createSender('recovery').sendMessages({ body: 'streamed', messageId: 'd-2' });
  m = await receiveOne(receiver);
  await receiver.completeMessage(m);
  await waitFor('the streaming receiver got nothing', async () => streamed.length > 0);
  await subscription.close();
  check('dropped connection: the client recovers (re-attach, send, receive, complete)',
    dropped.dropped >= 1 && m.messageId === 'd-1' && streamed[0] === 'streamed' && (await counts('orders')).active === 0,
    JSON.stringify({ dropped, id: m.messageId, streamed }));
  process.stdout.write(`     (re-attached after ${reattached} ms)\n`);

  await expectUnauthorized('wrong key: refused as UnauthorizedAccess', port, 'wrong');
  await control(controlPort, 'refuse-next-put-token');
  await expectUnauthorized('refused put-token (control channel): UnauthorizedAccess', port, 'v');

  await client.close();
}

async function main() {
  let started;
  try {
    started = await startPeer();
    await run(started);
  } catch (e) {
    check('run', false, e.stack || String(e));
  } finally {
    if (started) started.peer.kill('SIGTERM');
  }
  const failed = results.filter((r) => !r).length;
  process.stdout.write(`${results.length - failed} of ${results.length} checks held\n`);
  process.exit(failed === 0 && results.length > 0 ? 0 : 1);
}

main();
