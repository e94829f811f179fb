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


// ---------------------------------------------------------------- raw AMQP (rhea) checks
// What the C++ transport relies on and the official client does not exercise: token expiry and
// renewal, refused links, SASL PLAIN, typed application properties kept, modified{failed}.

const crypto = require('crypto');
const rhea = require('rhea');
const rheaMessage = require('rhea/lib/message.js');

// The SAS token of spec 05 ASB-3 (quote_plus-style encoding of the resource URI).
function sasToken(uri, keyName, key, expirySeconds) {
  const sr = encodeURIComponent(uri);
  const sig = crypto.createHmac('sha256', Buffer.from(key, 'utf8')).update(`${sr}\n${expirySeconds}`).digest('base64');
  return `SharedAccessSignature sr=${sr}&sig=${encodeURIComponent(sig)}&se=${expirySeconds}&skn=${keyName}`;
}

function rawConnection(port, extra = {}) {
  const container = rhea.create_container();
  const connection = container.connect({ host: '127.0.0.1', port, reconnect: false, ...extra });
  const opened = new Promise((resolve, reject) => {
    connection.once('connection_open', resolve);
    connection.once('connection_error', (c) => reject(new Error(`connection error ${JSON.stringify(c.connection.error)}`)));
    connection.once('disconnected', (c) => reject(new Error(`disconnected: ${c.error ? c.error.message : 'no reason'}`)));
  });
  connection.on('error', () => {});
  let replies = 0;
  // A request on a request/response node ($cbs, <entity>/$management): the response message.
  const request = async (node, applicationProperties, body) => {
    const replyTo = `reply-${++replies}`;
    const receiver = connection.open_receiver({ source: { address: node }, target: { address: replyTo } });
    const sender = connection.open_sender({ target: { address: node } });
    const response = new Promise((resolve) => receiver.once('message', (c) => resolve(c.message)));
    await new Promise((resolve) => sender.once('sendable', resolve));
    sender.send({ message_id: replyTo, reply_to: replyTo, to: node, body, application_properties: applicationProperties });
    const message = await within(response, 10000, `no response from ${node}`);
    receiver.close();
    sender.close();
    return message;
  };
  const putToken = async (name, token) => {
    const response = await request('$cbs', { operation: 'put-token', type: 'servicebus.windows.net:sastoken', name }, token);
    return response.application_properties['status-code'];
  };
  // Resolves {link} when attached with a terminus, {error} when refused or detached later.
  const attach = (options, kind) => {
    const link = kind === 'sender' ? connection.open_sender(options) : connection.open_receiver(options);
    const result = { link, error: null };
    result.closed = new Promise((resolve) => link.on(`${kind}_close`, (c) => { result.error = c[kind].error; resolve(result.error); }));
    link.on(`${kind}_error`, () => {});
    result.opened = new Promise((resolve) => {
      link.once(`${kind}_open`, () => resolve(true));
      result.closed.then(() => resolve(false));
    });
    return result;
  };
  return { container, connection, opened, request, putToken, attach, close: () => connection.close() };
}

// A promise's value, or an error naming what did not happen within ms.
const within = (promise, ms, what) => Promise.race([promise,
  new Promise((resolve, reject) => setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms).unref())]);

async function rawChecks({ port, controlPort }) {
  const uri = (entity) => `sb://127.0.0.1:${port}/${entity}`;
  const now = () => Math.floor(Date.now() / 1000);

  const a = rawConnection(port);
  await a.opened;
  const unauthorized = a.attach({ source: { address: 'raw' }, rcv_settle_mode: 1, autoaccept: false }, 'receiver');
  const refusedError = await within(unauthorized.closed, 10000, 'the unauthorized link was not detached');
  check('raw: a link without put-token is detached with amqp:unauthorized-access',
    refusedError && refusedError.condition === 'amqp:unauthorized-access', JSON.stringify(refusedError));

  const stale = await a.putToken(uri('raw'), sasToken(uri('raw'), 'k', 'v', now() - 10));
  const badSig = await a.putToken(uri('raw'), sasToken(uri('raw'), 'k', 'wrong', now() + 3600));
  const otherEntity = await a.putToken(uri('raw'), sasToken(uri('other'), 'k', 'v', now() + 3600));
  check('raw: put-token 401 for an expired token, a wrong signature, another audience',
    stale === 401 && badSig === 401 && otherEntity === 401, JSON.stringify({ stale, badSig, otherEntity }));

  // A token expiring in 2-3 s detaches the link; one renewed in time keeps it.
  const shortLived = await a.putToken(uri('raw'), sasToken(uri('raw'), 'k', 'v', now() + 3));
  const expiring = a.attach({ source: { address: 'raw' }, rcv_settle_mode: 1, autoaccept: false, credit_window: 0 }, 'receiver');
  const expiringOpened = await expiring.opened;
  const expiredError = await within(expiring.closed, 10000, 'the link was not detached when its token expired');
  check('raw: put-token 202; the link is detached with amqp:unauthorized-access when the token expires',
    shortLived === 202 && expiringOpened && expiredError && expiredError.condition === 'amqp:unauthorized-access',
    JSON.stringify({ shortLived, expiringOpened, expiredError }));

  const firstExpiry = now() + 4;
  await a.putToken(uri('raw'), sasToken(uri('raw'), 'k', 'v', firstExpiry));
  const renewedLink = a.attach({ source: { address: 'raw' }, rcv_settle_mode: 1, autoaccept: false, credit_window: 0 }, 'receiver');
  await renewedLink.opened;
  const renewal = await a.putToken(uri('raw'), sasToken(uri('raw'), 'k', 'v', now() + 3600));
  await sleep(firstExpiry * 1000 - Date.now() + 300); // past the first token's expiry
  check('raw: a put-token renewed before expiry keeps the link attached', renewal === 202 && renewedLink.error === null && renewedLink.link.is_open(),
    JSON.stringify({ renewal, error: renewedLink.error }));

  // Typed application properties come back with their AMQP types; modified{delivery-failed}
  // raises the delivery-count; modified{undeliverable-here} defers.
  const raws = [];
  const originalDecode = rheaMessage.decode;
  rheaMessage.decode = (buffer) => { raws.push(buffer); return originalDecode(buffer); };
  const sender = a.attach({ target: { address: 'raw' } }, 'sender');
  await sender.opened;
  const sent = new Promise((resolve) => sender.link.once('accepted', () => resolve(true)));
  sender.link.send({
    message_id: 'typed-1',
    application_properties: { 'bq-schema-version': rhea.types.wrap_long(1), small: rhea.types.wrap_int(1) },
    body: rhea.message.data_section(Buffer.from('{}')),
  });
  const accepted = await sent;
  const receiver = renewedLink.link;
  const next = () => new Promise((resolve) => {
    receiver.once('message', (c) => resolve(c));
    receiver.add_credit(1);
  });
  let c = await next();
  const typecodes = {};
  const reader = new rhea.types.Reader(raws[raws.length - 1]);
  while (reader.remaining()) {
    const section = reader.read();
    if (section.descriptor && Number(section.descriptor.value) === 0x74) {
      for (let i = 0; i < section.value.length; i += 2) typecodes[section.value[i].value] = section.value[i + 1].type.typecode;
    }
  }
  rheaMessage.decode = originalDecode;
  check('raw: typed application properties arrive with the types sent (long 1 stays long, int 1 int)',
    accepted && [0x81, 0x55].includes(typecodes['bq-schema-version']) && [0x71, 0x54].includes(typecodes.small),
    JSON.stringify(typecodes));
  check('raw: the delivery tag is the lock token in .NET GUID byte order, as x-opt-lock-token',
    c.delivery.tag.length === 16 && Buffer.isBuffer(c.message.message_annotations['x-opt-lock-token']) &&
      Buffer.from([...c.delivery.tag.subarray(0, 4)].reverse()).equals(c.message.message_annotations['x-opt-lock-token'].subarray(0, 4)),
    JSON.stringify({ tag: c.delivery.tag.toString('hex') }));
  const settledBack = (delivery) => new Promise((resolve) => receiver.once('settled', (ctx) => resolve(ctx.delivery === delivery)));
  let settled = settledBack(c.delivery);
  c.delivery.update(false, rhea.message.modified({ delivery_failed: true, undeliverable_here: false }).described());
  await settled;
  c = await next();
  check('raw: modified{delivery-failed} redelivers with header delivery-count 1', c.message.delivery_count === 1, `delivery-count ${c.message.delivery_count}`);
  settled = settledBack(c.delivery);
  c.delivery.update(false, rhea.message.modified({ delivery_failed: false, undeliverable_here: true }).described());
  await settled;
  const deferred = await control(controlPort, 'counts raw');
  check('raw: modified{undeliverable-here} defers (not redelivered)', deferred.deferred === 1 && deferred.active === 0, JSON.stringify(deferred));
  // $management update-disposition settles by lock token; renew-lock of a settled lock is 410.
  await control(controlPort, 'enqueue {"entity":"raw","body":"by-token","message_id":"u-1"}');
  c = await next();
  const token = c.message.message_annotations['x-opt-lock-token'];
  const lockTokens = rhea.types.wrap_array([token], 0x98);
  const disposed = await a.request('raw/$management', { operation: 'com.microsoft:update-disposition' },
    { 'lock-tokens': lockTokens, 'disposition-status': 'completed' });
  const afterDisposed = await control(controlPort, 'counts raw');
  const renewLost = await a.request('raw/$management', { operation: 'com.microsoft:renew-lock' }, { 'lock-tokens': lockTokens });
  check('raw: update-disposition completes by lock token (200); renew-lock then answers 410 message-lock-lost',
    disposed.application_properties.statusCode === 200 && afterDisposed.locked === 0 && afterDisposed.active === 0 &&
      renewLost.application_properties.statusCode === 410 && renewLost.application_properties.errorCondition === 'com.microsoft:message-lock-lost',
    JSON.stringify({ disposed: disposed.application_properties, afterDisposed, renewLost: renewLost.application_properties }));
  a.close();

  const plain = rawConnection(port, { username: 'k', password: 'v' });
  await plain.opened;
  const plainLink = plain.attach({ target: { address: 'raw' } }, 'sender');
  check('raw: SASL PLAIN with the key name and key authorizes links without put-token', await plainLink.opened, JSON.stringify(plainLink.error));
  plain.close();
  const wrongPlain = rawConnection(port, { username: 'k', password: 'nope' });
  let plainRefused = false;
  try {
    await wrongPlain.opened;
  } catch (e) {
    plainRefused = true;
  }
  check('raw: SASL PLAIN with a wrong key is refused', plainRefused, 'the connection opened');
}

async function main() {
  let started;
  try {
    started = await startPeer();
    await run(started);
    await rawChecks(started);
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
