#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Scripted Azure Service Bus peer (test tooling, issue 12, spec 05 §3): an AMQP 1.0 listener on
// rhea that behaves on the wire as Service Bus does for what the Azure SDKs and the C++ transport
// use: SASL ANONYMOUS/PLAIN, $cbs put-token with SAS tokens, PeekLock receivers with lock tokens,
// complete/abandon/dead-letter, MaxDeliveryCount, <entity>/$DeadLetterQueue, and the
// <entity>/$management operations peek-message, renew-lock and update-disposition.
// README.md (next to this file) lists every behaviour and where it differs from the service.
//
// Usage: node peer.js [--key-name k] [--key v] [--lock-duration-ms 30000]
//                     [--max-delivery-count 10] [--entities a,b,...] [--port 0] [--control-port 0]
//                     [--tls-cert server.pem --tls-key server.key]
// Prints "listening 127.0.0.1:PORT" then "control 127.0.0.1:PORT" on stdout, then runs until
// SIGTERM/SIGINT or the control command "quit". Diagnostics go to stderr.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const net = require('net');
const rhea = require('rhea');
const rheaMessage = require('rhea/lib/message.js');

const { types } = rhea;

// ---------------------------------------------------------------- options

function parseOptions(argv) {
  const options = {
    keyName: 'k',
    key: 'v',
    lockDurationMs: 30000,
    maxDeliveryCount: 10,
    entities: null, // null: entities are created on first use
    port: 0,
    controlPort: 0,
    tlsCert: null, // PEM files: the AMQP listener speaks TLS (amqps) when both are given
    tlsKey: null,
  };
  const numeric = {
    '--lock-duration-ms': 'lockDurationMs',
    '--max-delivery-count': 'maxDeliveryCount',
    '--port': 'port',
    '--control-port': 'controlPort',
  };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`option ${name} needs a value`);
    if (name === '--key-name') options.keyName = value;
    else if (name === '--key') options.key = value;
    else if (name === '--entities') options.entities = value.split(',').filter((e) => e !== '');
    else if (name === '--tls-cert') options.tlsCert = value;
    else if (name === '--tls-key') options.tlsKey = value;
    else if (numeric[name]) {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0) throw new Error(`option ${name} needs a whole number, got ${value}`);
      options[numeric[name]] = n;
    } else throw new Error(`unknown option ${name}`);
  }
  if (options.maxDeliveryCount < 1) throw new Error('--max-delivery-count must be at least 1');
  if ((options.tlsCert === null) !== (options.tlsKey === null)) throw new Error('--tls-cert and --tls-key go together');
  return options;
}

let options;
try {
  options = parseOptions(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`servicebus peer: ${e.message}\n`);
  process.exit(2);
}

const log = (text) => process.stderr.write(`servicebus peer: ${text}\n`);
const trace = (text) => process.env.BABELQUEUE_PEER_TRACE && log(text);

// ---------------------------------------------------------------- raw sections
// rhea decodes a transfer into plain JS values, which loses AMQP types (a long 1 comes back as an
// int 1). The peer keeps the bare message (properties, application properties, body, footer) as
// the bytes the sender wrote, so a receiver gets exactly what was sent: the decoder below attaches
// the raw buffer to every decoded message (non-enumerable, so rhea never encodes it).
const originalDecode = rheaMessage.decode;
rheaMessage.decode = (buffer) => {
  const decoded = originalDecode(buffer);
  Object.defineProperty(decoded, 'raw', { value: buffer, enumerable: false });
  return decoded;
};

const SECTION = { header: 0x70, deliveryAnnotations: 0x71, messageAnnotations: 0x72, applicationProperties: 0x74 };

// Splits an encoded message into [{code, bytes, value}] (value: the section's typed value).
function splitSections(buffer) {
  const reader = new types.Reader(buffer);
  const sections = [];
  while (reader.remaining()) {
    const start = reader.position;
    const section = reader.read();
    const code = section.descriptor ? Number(section.descriptor.value) : -1;
    sections.push({ code, bytes: buffer.subarray(start, reader.position), value: section.value });
  }
  return sections;
}

function encodeTyped(typed) {
  const writer = new types.Writer();
  writer.write(typed);
  return writer.toBuffer();
}

// Application properties with string entries added, other entries kept with their AMQP types.
function withApplicationProperties(stored, additions) {
  const entries = stored.applicationProperties ? [...stored.applicationProperties.value] : [];
  for (const [key, value] of Object.entries(additions)) {
    for (let i = 0; i < entries.length; i += 2) {
      if (entries[i].value === key) {
        entries.splice(i, 2);
        break;
      }
    }
    entries.push(types.wrap_string(key), types.wrap(value));
  }
  const map = types.wrap_map({});
  map.value = entries;
  return { value: entries, bytes: encodeTyped(types.described(types.wrap_ulong(SECTION.applicationProperties), map)) };
}

// ---------------------------------------------------------------- GUIDs (lock tokens)
// Service Bus sends the lock token as the delivery tag in .NET Guid byte order (the first three
// groups little-endian) and as the uuid annotation x-opt-lock-token (RFC byte order).
function dotnetGuidBytes(uuidBuffer) {
  const b = uuidBuffer;
  return Buffer.from([b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6], ...b.subarray(8, 16)]);
}

const uuidString = (b) => {
  const h = Buffer.from(b).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

// ---------------------------------------------------------------- entities and messages

const DLQ_SUFFIX = '/$deadletterqueue';
const entities = new Map(); // lower-case name -> Entity

class Entity {
  constructor(name) {
    this.name = name;
    this.nextSequence = 1;
    this.messages = new Map(); // sequence -> stored message (active, locked or deferred)
    this.receivers = new Set(); // rhea sender links (the peer sends to the clients' receivers)
    this.transferred = 0; // transfers to receivers so far (each one locked a message)
    this.drains = 0; // drain requests answered so far
  }
}

// Returns the entity for an address ("orders", "orders/$DeadLetterQueue"), creating it when the
// peer auto-creates; null when it does not exist.
function entityFor(address) {
  const key = address.toLowerCase();
  let entity = entities.get(key);
  if (entity) return entity;
  const base = key.endsWith(DLQ_SUFFIX) ? key.slice(0, -DLQ_SUFFIX.length) : key;
  if (options.entities && !options.entities.some((e) => e.toLowerCase() === base)) return null;
  if (base === '' || base.includes('$')) return null;
  entity = new Entity(address);
  entities.set(key, entity);
  return entity;
}

const deadLetterEntity = (entity) => entityFor(`${entity.name}/$DeadLetterQueue`);

// A stored message: bare sections as sent, plus what the broker tracks.
function storeMessage(entity, decoded, deliveryCount) {
  const sections = splitSections(decoded.raw);
  const bare = sections.filter((s) => s.code > SECTION.messageAnnotations);
  const stored = {
    sequence: entity.nextSequence++,
    enqueuedTime: Date.now(),
    deliveryCount,
    state: 'active',
    header: { durable: decoded.durable, priority: decoded.priority, ttl: decoded.ttl },
    annotations: { ...(decoded.message_annotations || {}) },
    applicationProperties: bare.find((s) => s.code === SECTION.applicationProperties) || null,
    bare,
    lock: null,
  };
  entity.messages.set(stored.sequence, stored);
  return stored;
}

function encodeStored(stored, withLock) {
  const annotations = { ...stored.annotations };
  annotations['x-opt-sequence-number'] = types.wrap_long(stored.sequence);
  annotations['x-opt-enqueued-time'] = types.wrap_timestamp(stored.enqueuedTime);
  if (withLock && stored.lock) {
    annotations['x-opt-lock-token'] = types.wrap_uuid(stored.lock.uuid);
    annotations['x-opt-locked-until'] = types.wrap_timestamp(stored.lock.until);
  }
  if (stored.state === 'deferred') annotations['x-opt-message-state'] = types.wrap_int(1);
  const head = rhea.message.encode({
    durable: stored.header.durable === undefined ? true : stored.header.durable,
    priority: stored.header.priority,
    ttl: stored.header.ttl,
    delivery_count: stored.deliveryCount,
    message_annotations: annotations,
  });
  // rhea encodes an empty amqp-value body when none is given: keep only its header and annotations.
  const headSections = splitSections(head).filter((s) => s.code <= SECTION.messageAnnotations);
  return Buffer.concat([...headSections.map((s) => s.bytes), ...stored.bare.map((s) => s.bytes)]);
}

function moveToDeadLetter(entity, stored, reason, description) {
  releaseLock(stored);
  entity.messages.delete(stored.sequence);
  const dlq = deadLetterEntity(entity);
  const additions = { DeadLetterReason: String(reason ?? '') };
  if (description !== undefined && description !== null) additions.DeadLetterErrorDescription = String(description);
  const props = withApplicationProperties(stored, additions);
  const section = { code: SECTION.applicationProperties, bytes: props.bytes, value: props.value };
  stored.bare = [...stored.bare.filter((s) => s.code !== SECTION.applicationProperties), section].sort((a, b) => a.code - b.code);
  stored.applicationProperties = section;
  stored.state = 'active';
  dlq.messages.set(stored.sequence, stored); // the dead-lettered message keeps its sequence number
  dlq.nextSequence = Math.max(dlq.nextSequence, stored.sequence + 1);
  schedule(dlq);
}

// Abandon, lock expiry: one more delivery counted; MaxDeliveryCount moves it to the DLQ (not in a
// $DeadLetterQueue itself: as in the service, its messages stay until they are completed).
function returnToQueue(entity, stored) {
  releaseLock(stored);
  stored.deliveryCount += 1;
  if (stored.deliveryCount >= options.maxDeliveryCount && !entity.name.toLowerCase().endsWith(DLQ_SUFFIX)) {
    moveToDeadLetter(entity, stored, 'MaxDeliveryCountExceeded',
      `Message could not be consumed after ${options.maxDeliveryCount} delivery attempts.`);
    return;
  }
  stored.state = 'active';
  schedule(entity);
}

function releaseLock(stored) {
  if (stored.lock) {
    clearTimeout(stored.lock.timer);
    locks.delete(stored.lock.token);
    stored.lock = null;
  }
}

const locks = new Map(); // lock token string -> {entity, stored}

function lockMessage(entity, stored) {
  const uuid = crypto.randomBytes(16);
  uuid[6] = (uuid[6] & 0x0f) | 0x40;
  uuid[8] = (uuid[8] & 0x3f) | 0x80;
  const token = uuidString(uuid);
  stored.state = 'locked';
  stored.lock = { uuid, token, until: Date.now() + options.lockDurationMs, timer: null };
  armLock(entity, stored);
  locks.set(token, { entity, stored });
}

function armLock(entity, stored) {
  clearTimeout(stored.lock.timer);
  stored.lock.timer = setTimeout(() => {
    log(`lock expired on ${entity.name} sequence ${stored.sequence}`);
    returnToQueue(entity, stored);
  }, Math.max(0, stored.lock.until - Date.now()));
}

// Settles a delivery the peer sent, from the outcome the client chose (rcv-settle-mode second: the
// client's disposition is unsettled, the peer answers with a settled one).
function settle(entity, stored, lockToken, outcome) {
  const live = locks.get(lockToken);
  if (!live || live.stored !== stored) return { condition: 'com.microsoft:message-lock-lost', description: 'The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue.' };
  switch (outcome.kind) {
    case 'complete':
      releaseLock(stored);
      entity.messages.delete(stored.sequence);
      break;
    case 'abandon':
      if (outcome.properties) applyProperties(stored, outcome.properties);
      returnToQueue(entity, stored);
      break;
    case 'defer':
      if (outcome.properties) applyProperties(stored, outcome.properties);
      releaseLock(stored);
      stored.state = 'deferred';
      break;
    case 'deadletter':
      if (outcome.properties) applyProperties(stored, outcome.properties);
      moveToDeadLetter(entity, stored, outcome.reason, outcome.description);
      break;
    default:
      throw new Error(`unknown settlement ${outcome.kind}`);
  }
  return null;
}

function applyProperties(stored, properties) {
  const props = withApplicationProperties(stored, properties);
  const section = { code: SECTION.applicationProperties, bytes: props.bytes, value: props.value };
  stored.bare = [...stored.bare.filter((s) => s.code !== SECTION.applicationProperties), section].sort((a, b) => a.code - b.code);
  stored.applicationProperties = section;
}

function outcomeOf(state) {
  const name = state && state.constructor && state.constructor.composite_type;
  if (name === 'accepted') return { kind: 'complete' };
  if (name === 'released') return { kind: 'abandon' };
  if (name === 'modified') {
    const properties = state.message_annotations || undefined;
    return state.undeliverable_here ? { kind: 'defer', properties } : { kind: 'abandon', properties };
  }
  if (name === 'rejected') {
    const info = (state.error && state.error.info) || {};
    return {
      kind: 'deadletter',
      reason: info.DeadLetterReason ?? (state.error && state.error.condition !== 'com.microsoft:dead-letter' ? state.error.condition : undefined),
      description: info.DeadLetterErrorDescription ?? (state.error ? state.error.description : undefined),
    };
  }
  return null;
}

// ---------------------------------------------------------------- dispatch (credit honoured)

const scheduled = new Set();
function schedule(entity) {
  if (scheduled.has(entity)) return;
  scheduled.add(entity);
  setImmediate(() => {
    scheduled.delete(entity);
    dispatch(entity);
  });
}

function nextActive(entity) {
  for (const stored of entity.messages.values()) if (stored.state === 'active') return stored;
  return null;
}

// rhea takes a transfer's credit only when it writes the frame (on the next tick), so each pass
// sends at most one message per link and schedules another pass.
function dispatch(entity) {
  let sent = false;
  for (const link of entity.receivers) {
    if (!link.is_open() || !link.sendable() || !authorized(link.connection, entity.name)) continue;
    const stored = nextActive(entity);
    if (!stored) break;
    lockMessage(entity, stored);
    const delivery = link.send(encodeStored(stored, true), dotnetGuidBytes(stored.lock.uuid), 0);
    delivery.sbEntity = entity;
    delivery.sbStored = stored;
    delivery.sbLockToken = stored.lock.token;
    entity.transferred += 1;
    trace(`sent ${entity.name} sequence ${stored.sequence} credit=${link.credit}`);
    sent = true;
  }
  if (sent) {
    schedule(entity);
    return;
  }
  if (holdDrains) return;
  for (const link of entity.receivers) {
    if (link.is_open() && link._draining && !nextActive(entity)) {
      trace(`drained ${link.sbAddress} credit=${link.credit}`);
      if (link.credit > 0) entity.drains += 1;
      link.set_drained(true);
      // rhea only marks the flow for the next write: have the connection write it now, or the
      // answer waits for unrelated traffic (and the client's drain with it).
      link.connection._register();
    }
  }
}

// Control `hold-drains on`: drain requests stay unanswered (messages are still sent against the
// credit) until `hold-drains off`, so a test can make a message arrive during a client's drain.
let holdDrains = false;

// ---------------------------------------------------------------- SAS tokens and CBS

// Returns {audience, expiry} for a valid token, or a reason string.
function verifySasToken(token) {
  const prefix = 'SharedAccessSignature ';
  if (typeof token !== 'string' || !token.startsWith(prefix)) return 'not a SharedAccessSignature token';
  const fields = {};
  for (const pair of token.slice(prefix.length).split('&')) {
    const at = pair.indexOf('=');
    if (at > 0) fields[pair.slice(0, at)] = pair.slice(at + 1);
  }
  if (!fields.sr || !fields.sig || !fields.se || !fields.skn) return 'token lacks sr, sig, se or skn';
  if (fields.skn !== options.keyName) return 'unknown key name';
  const expected = crypto.createHmac('sha256', Buffer.from(options.key, 'utf8')).update(`${fields.sr}\n${fields.se}`).digest();
  let given;
  try {
    given = Buffer.from(decodeURIComponent(fields.sig), 'base64');
  } catch (e) {
    return 'signature is not URL-encoded base64';
  }
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return 'signature does not match';
  const expiry = Number(fields.se) * 1000;
  if (!Number.isFinite(expiry) || expiry <= Date.now()) return 'token expired';
  let audience;
  try {
    audience = decodeURIComponent(fields.sr.replace(/\+/g, ' '));
  } catch (e) {
    return 'sr is not URL-encoded';
  }
  return { audience, expiry };
}

// "sb://host:port/orders/" -> "orders"; scheme and host are not compared (the peer has one namespace).
function audiencePath(uri) {
  const match = /^[a-z]+:\/\/[^/]*\/?(.*)$/i.exec(uri);
  return (match ? match[1] : uri).replace(/\/+$/, '').toLowerCase();
}

const covers = (scope, path) => scope === '' || path === scope || path.startsWith(`${scope}/`);

// An address is authorized on a connection by SASL PLAIN with the key, or by an unexpired
// put-token whose audience covers it (a token for "orders" covers orders/$management and the DLQ).
function authorized(connection, address) {
  const state = connection.sb;
  if (state.plain) return true;
  const path = address.toLowerCase();
  const now = Date.now();
  for (const [scope, expiry] of state.tokens) if (expiry > now && covers(scope, path)) return true;
  return false;
}

let refuseNextPutToken = false;

function handlePutToken(connection, request) {
  const props = request.application_properties || {};
  const reply = (code, description) => ({ 'status-code': code, 'status-description': description });
  if (props.type !== 'servicebus.windows.net:sastoken') {
    return reply(400, `unsupported token type ${props.type} (the peer checks SAS tokens only)`);
  }
  if (refuseNextPutToken) {
    refuseNextPutToken = false;
    return reply(401, 'refused by the control channel');
  }
  const verified = verifySasToken(request.body);
  if (typeof verified === 'string') return reply(401, `InvalidSignature: ${verified}`);
  const name = audiencePath(String(props.name || ''));
  const scope = audiencePath(verified.audience);
  if (!covers(scope, name)) return reply(401, 'InvalidAudience: the token does not cover the name');
  connection.sb.tokens.set(name, verified.expiry);
  armTokenExpiry(connection);
  return reply(202, 'Accepted');
}

// A link whose authorization lapses (token expired, not renewed) is detached as the service does.
function armTokenExpiry(connection) {
  clearTimeout(connection.sb.expiryTimer);
  const now = Date.now();
  const next = Math.min(...[...connection.sb.tokens.values()].filter((e) => e > now));
  if (!Number.isFinite(next)) return;
  connection.sb.expiryTimer = setTimeout(() => {
    for (const link of connection.sb.links) {
      if (link.is_open() && !authorized(connection, link.sbAddress)) {
        link.close({ condition: 'amqp:unauthorized-access', description: 'The token has expired.' });
      }
    }
    armTokenExpiry(connection);
  }, next - now + 5);
}

// ---------------------------------------------------------------- $management

function managementReply(code, description, body, condition) {
  const properties = { statusCode: code, statusDescription: description };
  if (condition) properties.errorCondition = condition;
  return { application_properties: properties, body };
}

function lockTokensOf(body) {
  const tokens = body && body['lock-tokens'];
  return (Array.isArray(tokens) ? tokens : []).map((t) => (Buffer.isBuffer(t) ? uuidString(t) : String(t).toLowerCase()));
}

function handleManagement(entity, request) {
  const props = request.application_properties || {};
  const body = request.body || {};
  switch (props.operation) {
    case 'com.microsoft:peek-message': {
      const from = Number(body['from-sequence-number'] ?? 1);
      const count = Number(body['message-count'] ?? 1);
      const found = [...entity.messages.values()].filter((m) => m.sequence >= from).sort((a, b) => a.sequence - b.sequence).slice(0, count);
      if (found.length === 0) return managementReply(204, 'No messages to peek.', undefined);
      const messages = found.map((m) => types.wrap_map({ message: encodeStored(m, false) }));
      return managementReply(200, 'OK', { messages: types.wrap_list(messages) });
    }
    case 'com.microsoft:renew-lock': {
      const tokens = lockTokensOf(body);
      const expirations = [];
      for (const token of tokens) {
        const live = locks.get(token);
        if (!live) return managementReply(410, 'The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue.', undefined, 'com.microsoft:message-lock-lost');
        live.stored.lock.until = Date.now() + options.lockDurationMs;
        armLock(live.entity, live.stored);
        expirations.push(types.wrap_timestamp(live.stored.lock.until));
      }
      return managementReply(200, 'OK', { expirations: types.wrap_array(expirations.map((e) => e.value), 0x83) });
    }
    case 'com.microsoft:update-disposition': {
      const status = body['disposition-status'];
      const kinds = { completed: 'complete', abandoned: 'abandon', suspended: 'deadletter', defered: 'defer' };
      if (!kinds[status]) return managementReply(400, `unknown disposition-status ${status}`, undefined, 'com.microsoft:argument-error');
      for (const token of lockTokensOf(body)) {
        const live = locks.get(token);
        if (!live) return managementReply(410, 'The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue.', undefined, 'com.microsoft:message-lock-lost');
        settle(live.entity, live.stored, token, {
          kind: kinds[status],
          reason: body['deadletter-reason'],
          description: body['deadletter-description'],
          properties: body['properties-to-modify'],
        });
      }
      return managementReply(200, 'OK', undefined);
    }
    default:
      return managementReply(501, `operation ${props.operation} is not implemented by the scripted peer`, undefined, 'com.microsoft:not-implemented');
  }
}

// ---------------------------------------------------------------- the AMQP listener

const container = rhea.create_container({ id: 'babelqueue-servicebus-peer' });
container.sasl_server_mechanisms.enable_anonymous();
container.sasl_server_mechanisms.enable_plain((username, password) => {
  return username === options.keyName && password === options.key;
});

const connections = new Set();

container.on('connection_open', (context) => {
  const { connection } = context;
  connection.sb = { tokens: new Map(), links: new Set(), replyLinks: new Map(), plain: false, expiryTimer: null };
  // rhea's server SASL layer is a SelectiveServer (ANONYMOUS enabled) around the SaslServer.
  const sasl = connection.sasl_transport;
  const mechanism = sasl && (sasl.mechanism || (sasl.selected && sasl.selected.mechanism));
  connection.sb.plain = Boolean(mechanism && mechanism.constructor.name === 'PlainServer' && mechanism.outcome);
  connections.add(connection);
});

function forget(connection) {
  if (!connection.sb) return;
  clearTimeout(connection.sb.expiryTimer);
  for (const link of connection.sb.links) for (const entity of entities.values()) entity.receivers.delete(link);
  connections.delete(connection);
}
container.on('connection_close', (context) => forget(context.connection));
container.on('disconnected', (context) => forget(context.connection));
container.on('error', (e) => log(`error: ${e && e.stack ? e.stack : e}`));

const MANAGEMENT_SUFFIX = '/$management';

// The client's receiver (the peer's sender): $cbs replies, $management replies, or an entity.
container.on('sender_open', (context) => {
  const link = context.sender;
  const { connection } = context;
  const { source, target } = link.remote.attach;
  const admitted = admit(link, connection, (source && source.address) || '', false);
  if (admitted === NODE) connection.sb.replyLinks.set((target && target.address) || link.name, link);
  else if (admitted) {
    link.sbEntity = admitted;
    admitted.receivers.add(link);
    schedule(admitted);
  }
});

const NODE = 'node';
// Attaches a client's link to $cbs, a $management node (NODE) or an entity (the entity), or
// refuses it as the service does (null): amqp:not-found for a missing entity or a send to a
// dead-letter queue, amqp:unauthorized-access without a valid put-token.
function admit(link, connection, address, clientSends) {
  link.sbAddress = address;
  connection.sb.links.add(link);
  if (address === '$cbs' || address.toLowerCase().endsWith(MANAGEMENT_SUFFIX)) {
    accept(link);
    return NODE;
  }
  const entity = entityFor(address);
  if (!entity || (clientSends && address.toLowerCase().endsWith(DLQ_SUFFIX))) {
    link.close({ condition: 'amqp:not-found', description: `The messaging entity '${address}' could not be found.` });
    return null;
  }
  if (!authorized(connection, address)) {
    link.close({ condition: 'amqp:unauthorized-access', description: `Unauthorized access to '${address}': no valid put-token for it.` });
    return null;
  }
  accept(link);
  return entity;
}

// An accepted link echoes the client's terminus; a refused one is attached with none and detached
// with the error, as the service does.
function accept(link) {
  const { source, target } = link.remote.attach;
  if (source) link.set_source(source);
  if (target) link.set_target(target);
}

container.on('sender_flow', (c) => trace(`flow ${c.sender.sbAddress} credit=${c.sender.credit} drain=${c.sender._draining}`));
for (const event of ['sendable', 'sender_draining']) {
  container.on(event, (context) => {
    if (context.sender.sbEntity) schedule(context.sender.sbEntity);
  });
}

function closeSender(context) {
  if (context.sender.sbEntity) context.sender.sbEntity.receivers.delete(context.sender);
}
container.on('sender_close', closeSender);
container.on('sender_error', closeSender);

function onOutcome(context) {
  const { delivery } = context;
  if (!delivery.sbStored || delivery.sbSettled) return;
  const outcome = outcomeOf(delivery.remote_state);
  if (!outcome) return;
  delivery.sbSettled = true;
  const error = settle(delivery.sbEntity, delivery.sbStored, delivery.sbLockToken, outcome);
  // The settled disposition carries the outcome applied: the client's own (a dead-letter as a bare
  // rejected: the Azure SDKs read an error in it as a failed settlement), or rejected with
  // com.microsoft:message-lock-lost.
  let state = delivery.remote_state;
  if (error) state = rhea.message.rejected({ error });
  else if (outcome.kind === 'deadletter') state = rhea.message.rejected({});
  delivery.update(true, state.described());
}
for (const outcome of ['accepted', 'released', 'modified', 'rejected']) container.on(outcome, onOutcome);

// The client's sender (the peer's receiver): $cbs, $management requests, or messages to an entity.
container.on('receiver_open', (context) => {
  const link = context.receiver;
  const { target } = link.remote.attach;
  admit(link, context.connection, (target && target.address) || '', true);
});

function respond(connection, request, response) {
  const link = connection.sb.replyLinks.get(request.reply_to);
  if (!link) {
    log(`no reply link for ${request.reply_to}`);
    return;
  }
  response.correlation_id = request.message_id;
  response.to = request.reply_to;
  setImmediate(() => link.send(response));
}

container.on('message', (context) => {
  const { connection, delivery, message } = context;
  const link = context.receiver;
  const address = link.sbAddress || '';
  if (address === '$cbs') {
    const props = message.application_properties || {};
    const result = props.operation === 'put-token' ? handlePutToken(connection, message) : { 'status-code': 400, 'status-description': `unknown operation ${props.operation}` };
    respond(connection, message, { application_properties: result });
    return;
  }
  if (address.toLowerCase().endsWith(MANAGEMENT_SUFFIX)) {
    const entity = entityFor(address.slice(0, -MANAGEMENT_SUFFIX.length));
    let response;
    if (!authorized(connection, address)) response = managementReply(401, `Unauthorized access to '${address}'.`, undefined, 'amqp:unauthorized-access');
    else if (!entity) response = managementReply(404, `The messaging entity '${address}' could not be found.`, undefined, 'amqp:not-found');
    else response = handleManagement(entity, message);
    respond(connection, message, response);
    return;
  }
  if (!authorized(connection, address)) {
    delivery.reject({ condition: 'amqp:unauthorized-access', description: 'The token has expired.' });
    return;
  }
  const entity = entityFor(address);
  if (context.format === BATCH_FORMAT) {
    // sendMessages([...]) sends one batch: each data section of the body is an encoded message.
    for (const section of splitSections(message)) {
      if (section.code === 0x75) storeMessage(entity, rheaMessage.decode(section.value), 0);
    }
  } else if (context.format !== undefined) {
    delivery.reject({ condition: 'amqp:not-implemented', description: `message-format ${context.format} is not supported` });
    return;
  } else {
    storeMessage(entity, message, 0);
  }
  schedule(entity);
});

const BATCH_FORMAT = 0x80013700; // Microsoft's batched message format

// ---------------------------------------------------------------- control channel

function counts(entity) {
  const open = [...entity.receivers].filter((link) => link.is_open());
  const result = {
    entity: entity.name, active: 0, locked: 0, deferred: 0, dead_lettered: 0, receivers: open.length,
    // The credit the receiver links hold now (what may still be transferred and locked), the
    // links whose drain request is not answered yet, transfers and answered drains so far.
    credit: open.reduce((sum, link) => sum + link.credit, 0),
    draining: open.filter((link) => link._draining && link.credit > 0).length,
    transferred: entity.transferred,
    drains: entity.drains,
  };
  for (const m of entity.messages.values()) result[m.state] += 1;
  const dlq = entities.get(`${entity.name.toLowerCase()}${DLQ_SUFFIX}`);
  result.dead_lettered = dlq ? dlq.messages.size : 0;
  return result;
}

// A typed AMQP value for enqueue's typed_application_properties: [type, value] with type one of
// null, boolean, byte, ubyte, short, ushort, int, uint, long, ulong, float, double, string, binary
// (value: the bytes as a UTF-8 string).
function typedValue(type, value) {
  if (type === 'null') return null;
  if (type === 'binary') return types.wrap_binary(Buffer.from(String(value), 'utf8'));
  const wrap = types[`wrap_${type}`];
  if (typeof wrap !== 'function') throw new Error(`unknown AMQP type ${type}`);
  return wrap(value);
}

// The AMQP type name of a decoded typed value (rhea's encodings folded: Str8 -> string, ...).
const TYPE_NAMES = {
  null: 'null', boolean: 'boolean', true: 'boolean', false: 'boolean', ubyte: 'ubyte', ushort: 'ushort',
  uint: 'uint', smalluint: 'uint', uint0: 'uint', ulong: 'ulong', smallulong: 'ulong', ulong0: 'ulong',
  byte: 'byte', short: 'short', int: 'int', smallint: 'int', long: 'long', smalllong: 'long',
  float: 'float', double: 'double', timestamp: 'timestamp', uuid: 'uuid', vbin8: 'binary',
  vbin32: 'binary', str8: 'string', str32: 'string', sym8: 'symbol', sym32: 'symbol',
};
const typeName = (typed) => TYPE_NAMES[String(typed.type.name).toLowerCase()] || String(typed.type.name).toLowerCase();

function plain(typed) {
  if (Buffer.isBuffer(typed.value)) return typed.value.toString('base64');
  if (typeof typed.value === 'bigint') return typed.value.toString();
  return typed.value === undefined ? null : typed.value;
}

// A stored message as the wire carries it (inspect): header, properties and application
// properties with their AMQP types, and the body sections.
function inspect(stored) {
  const out = { sequence: stored.sequence, state: stored.state, delivery_count: stored.deliveryCount, durable: stored.header.durable === undefined ? null : stored.header.durable, properties: {}, application_properties: {}, body: [] };
  const names = ['message_id', 'user_id', 'to', 'subject', 'reply_to', 'correlation_id', 'content_type', 'content_encoding', 'absolute_expiry_time', 'creation_time', 'group_id', 'group_sequence', 'reply_to_group_id'];
  for (const section of stored.bare) {
    if (section.code === 0x73) {
      section.value.forEach((typed, i) => {
        if (typed && typed.type && typeName(typed) !== 'null') out.properties[names[i]] = { type: typeName(typed), value: plain(typed) };
      });
    } else if (section.code === SECTION.applicationProperties) {
      for (let i = 0; i + 1 < section.value.length; i += 2) {
        out.application_properties[section.value[i].value] = { type: typeName(section.value[i + 1]), value: plain(section.value[i + 1]) };
      }
    } else if (section.code === 0x75) {
      out.body.push({ section: 'data', base64: Buffer.from(section.value).toString('base64') });
    } else if (section.code === 0x77) {
      out.body.push({ section: 'value', type: typeof section.value });
    }
  }
  return out;
}

function control(line) {
  const space = line.indexOf(' ');
  const command = space < 0 ? line : line.slice(0, space);
  const argument = space < 0 ? '' : line.slice(space + 1).trim();
  switch (command) {
    case 'drop': {
      const n = connections.size;
      for (const connection of [...connections]) {
        forget(connection);
        if (connection.socket) connection.socket.destroy();
      }
      return { ok: true, dropped: n };
    }
    case 'refuse-next-put-token':
      refuseNextPutToken = true;
      return { ok: true };
    case 'hold-drains':
      if (argument !== 'on' && argument !== 'off') return { ok: false, error: 'hold-drains takes on or off' };
      holdDrains = argument === 'on';
      if (!holdDrains) for (const entity of entities.values()) schedule(entity);
      return { ok: true };
    case 'enqueue': {
      const spec = JSON.parse(argument);
      const entity = entityFor(String(spec.entity || ''));
      if (!entity) return { ok: false, error: `no entity ${spec.entity}` };
      const body = spec.body_base64 !== undefined ? Buffer.from(spec.body_base64, 'base64') : Buffer.from(String(spec.body ?? ''), 'utf8');
      const applicationProperties = { ...(spec.application_properties || {}) };
      for (const [key, [type, value]] of Object.entries(spec.typed_application_properties || {})) {
        applicationProperties[key] = typedValue(type, value);
      }
      const encoded = rhea.message.encode({
        message_id: spec.message_id,
        application_properties: applicationProperties,
        body: rhea.message.data_section(body),
      });
      const stored = storeMessage(entity, rheaMessage.decode(encoded), Number(spec.delivery_count ?? 0));
      schedule(entity);
      return { ok: true, sequence: stored.sequence };
    }
    case 'counts': {
      const entity = entityFor(argument);
      return entity ? { ok: true, ...counts(entity) } : { ok: false, error: `no entity ${argument}` };
    }
    case 'inspect': {
      const entity = entityFor(argument);
      if (!entity) return { ok: false, error: `no entity ${argument}` };
      return { ok: true, messages: [...entity.messages.values()].sort((a, b) => a.sequence - b.sequence).map(inspect) };
    }
    case 'expire-locks': {
      const entity = entityFor(argument);
      if (!entity) return { ok: false, error: `no entity ${argument}` };
      let n = 0;
      for (const m of [...entity.messages.values()]) if (m.state === 'locked') { returnToQueue(entity, m); n += 1; }
      return { ok: true, expired: n };
    }
    case 'quit':
      setImmediate(shutdown);
      return { ok: true };
    default:
      return { ok: false, error: `unknown command ${command} (drop, refuse-next-put-token, hold-drains on|off, enqueue JSON, counts ENTITY, inspect ENTITY, expire-locks ENTITY, quit)` };
  }
}

const controlServer = net.createServer((socket) => {
  let buffered = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk) => {
    buffered += chunk;
    let at;
    while ((at = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, at).replace(/\r$/, '');
      buffered = buffered.slice(at + 1);
      if (line.trim() === '') continue;
      let reply;
      try {
        reply = control(line.trim());
      } catch (e) {
        reply = { ok: false, error: e.message };
      }
      socket.write(`${JSON.stringify(reply)}\n`);
    }
  });
  socket.on('error', () => {});
});

// ---------------------------------------------------------------- start and stop

function listenOptions() {
  const plain = { host: '127.0.0.1', port: options.port };
  if (options.tlsCert === null) return plain;
  try {
    return { ...plain, transport: 'tls', cert: fs.readFileSync(options.tlsCert), key: fs.readFileSync(options.tlsKey) };
  } catch (e) {
    log(`cannot read the TLS certificate or key: ${e.message}`);
    process.exit(2);
  }
}

const listener = container.listen(listenOptions());
listener.on('error', (e) => {
  log(`cannot listen: ${e.message}`);
  process.exit(1);
});
listener.on('listening', () => {
  controlServer.listen(options.controlPort, '127.0.0.1', () => {
    process.stdout.write(`listening 127.0.0.1:${listener.address().port}${options.tlsCert === null ? '' : ' tls'}\n`);
    process.stdout.write(`control 127.0.0.1:${controlServer.address().port}\n`);
  });
});

function shutdown() {
  for (const connection of connections) if (connection.socket) connection.socket.destroy();
  listener.close();
  controlServer.close();
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
