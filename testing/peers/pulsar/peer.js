// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// A scripted fake Apache Pulsar broker on the binary protocol (test tooling, issue 13), on
// pulsar-flex's generated protobuf: two listeners (the second one the "other broker" lookups
// redirect to), a line-protocol control port, and in-memory topics, subscriptions and cursors.
// What it does and where it differs from a real broker: README.md beside it.
'use strict';

const net = require('net');
const codec = require('./codec');

const { pb, Type } = codec;
const ServerError = pb.ServerError;
const LookupType = pb.CommandLookupTopicResponse.LookupType;
const SubType = pb.CommandSubscribe.SubType;

// ---- options ----
function parseArgs(argv) {
  const opts = {
    port: 0,
    secondPort: 0,
    controlPort: 0,
    token: '',
    protocolVersion: 21,
    maxMessageSize: 5 * 1024 * 1024,
    partitioned: {},
  };
  const names = {
    '--port': 'port',
    '--second-port': 'secondPort',
    '--control-port': 'controlPort',
    '--token': 'token',
    '--protocol-version': 'protocolVersion',
    '--max-message-size': 'maxMessageSize',
    '--partitioned': 'partitioned',
  };
  for (let i = 2; i < argv.length; i += 2) {
    const name = names[argv[i]];
    if (!name || i + 1 >= argv.length) throw new Error(`bad option ${argv[i]} (see README.md)`);
    const value = argv[i + 1];
    if (name === 'token') opts.token = value;
    else if (name === 'partitioned') {
      for (const item of value.split(',').filter(Boolean)) {
        const [topic, n] = item.split('=');
        opts.partitioned[normalize(topic)] = Number(n);
      }
    } else opts[name] = Number(value);
  }
  return opts;
}

const trace = process.env.BABELQUEUE_PEER_TRACE === '1';
function log(...args) {
  console.error(new Date().toISOString(), ...args);
}

// Short topic names are persistent://public/default/<name>, as the broker reads them.
function normalize(topic) {
  return topic.includes('://') ? topic : `persistent://public/default/${topic}`;
}
// The base topic and partition index of <topic>-partition-N, else [topic, -1].
function partitionOf(topic) {
  const m = /^(.*)-partition-(\d+)$/.exec(topic);
  return m ? [m[1], Number(m[2])] : [topic, -1];
}

// ---- state ----
const opts = parseArgs(process.argv);
const urls = {}; // listener name -> pulsar://127.0.0.1:port
const connections = new Set();
const stats = { connects: { primary: 0, second: 0 }, refused_auth: 0 };
const topics = new Map(); // normalized name -> Topic
const owners = new Map(); // normalized topic -> listener that serves it (default primary)
const selfRedirects = new Map(); // normalized topic -> lookups still answered with a redirect
const partitioned = new Map(Object.entries(opts.partitioned));
let nextLedger = 100;
let nextConnection = 0;

function topicOf(name) {
  let t = topics.get(name);
  if (!t) {
    t = { name, ledger: nextLedger++, partition: partitionOf(name)[1], entries: [], subs: new Map() };
    topics.set(name, t);
  }
  return t;
}

function ownerOf(name) {
  return owners.get(name) || owners.get(partitionOf(name)[0]) || 'primary';
}

// ---- frames out ----
function send(conn, command) {
  if (!conn.socket.destroyed) conn.socket.write(codec.commandFrame(command));
}

function base(type) {
  return new pb.BaseCommand().setType(type);
}

function error(conn, requestId, code, message) {
  log(`[${conn.id}] ERROR ${message}`);
  send(conn, base(Type.ERROR).setError(new pb.CommandError().setRequestId(requestId).setError(code).setMessage(message)));
}

function success(conn, requestId) {
  send(conn, base(Type.SUCCESS).setSuccess(new pb.CommandSuccess().setRequestId(requestId)));
}

// ERROR with request id -1 (2^64-1 on the wire: the broker's answer to a refused CONNECT, which
// has no request id); pulsar_pb refuses a negative uint64, so the command is encoded by hand.
function connectRefusal(code, message) {
  const varint = (n) => {
    const out = [];
    let v = BigInt(n);
    while (v >= 0x80n) {
      out.push(Number((v & 0x7fn) | 0x80n));
      v >>= 7n;
    }
    out.push(Number(v));
    return Buffer.from(out);
  };
  const text = Buffer.from(message);
  const inner = Buffer.concat([
    Buffer.from([0x08]), varint((1n << 64n) - 1n), // request_id
    Buffer.from([0x10]), varint(code), // error
    Buffer.from([0x1a]), varint(text.length), text, // message
  ]);
  // BaseCommand: type (1) = ERROR, error (field 14, length-delimited).
  const body = Buffer.concat([Buffer.from([0x08]), varint(Type.ERROR), Buffer.from([0x72]), varint(inner.length), inner]);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(body.length + 4, 0);
  head.writeUInt32BE(body.length, 4);
  return Buffer.concat([head, body]);
}

// ---- dispatch ----
function isShared(sub) {
  return sub.type === SubType.SHARED || sub.type === SubType.KEY_SHARED;
}

// The next entry index of `sub` to deliver (redeliveries first), without taking it.
function nextIndex(sub, topic) {
  if (sub.replay.size) return Math.min(...sub.replay);
  while (sub.cursor < topic.entries.length && (sub.acked.has(sub.cursor) || sub.pending.has(sub.cursor))) sub.cursor++;
  return sub.cursor < topic.entries.length ? sub.cursor : undefined;
}

// A consumer of `sub` with permits: round robin in Shared and Key_Shared, the first one otherwise.
function pickConsumer(sub) {
  const n = sub.consumers.length;
  if (!n) return undefined;
  if (!isShared(sub)) return sub.consumers[0].permits > 0 ? sub.consumers[0] : undefined;
  for (let i = 0; i < n; i++) {
    const c = sub.consumers[(sub.rr + i) % n];
    if (c.permits > 0) {
      sub.rr = (sub.rr + i + 1) % n;
      return c;
    }
  }
  return undefined;
}

function dispatch(topic, sub) {
  for (;;) {
    const index = nextIndex(sub, topic);
    if (index === undefined) return;
    const consumer = pickConsumer(sub);
    if (!consumer) return;
    if (sub.replay.has(index)) sub.replay.delete(index);
    else sub.cursor = index + 1;
    const entry = topic.entries[index];
    sub.pending.set(index, consumer);
    consumer.permits -= entry.count; // a batch takes one permit per message, as the broker does
    consumer.delivered += entry.count;
    const redelivery = sub.redelivery.get(index) ?? entry.redelivery;
    const id = new pb.MessageIdData().setLedgerid(topic.ledger).setEntryid(index);
    if (topic.partition >= 0) id.setPartition(topic.partition);
    const message = new pb.CommandMessage().setConsumerId(consumer.id).setMessageId(id);
    if (redelivery > 0) message.setRedeliveryCount(redelivery);
    if (trace) log(`[${consumer.conn.id}] MESSAGE ${topic.name} ${index} -> consumer ${consumer.id} (redelivery ${redelivery}, permits left ${consumer.permits})`);
    if (!consumer.conn.socket.destroyed) {
      consumer.conn.socket.write(codec.payloadFrame(base(Type.MESSAGE).setMessage(message), entry.metadata, entry.payload));
    }
  }
}

function dispatchTopic(topic) {
  for (const sub of topic.subs.values()) dispatch(topic, sub);
}

// A consumer leaves (close, unsubscribe, connection lost): what it held goes back to the
// subscription unacknowledged, redelivered to the next consumer without a count (the broker's
// dispatcher keeps the count it had).
function removeConsumer(consumer) {
  const topic = topics.get(consumer.topic);
  const sub = topic.subs.get(consumer.sub);
  if (!sub) return;
  sub.consumers = sub.consumers.filter((c) => c !== consumer);
  for (const [index, holder] of sub.pending) {
    if (holder === consumer) {
      sub.pending.delete(index);
      sub.replay.add(index);
    }
  }
  consumer.conn.consumers.delete(consumer.id);
  dispatch(topic, sub);
}

function sendCloseConsumers(name) {
  const topic = topics.get(normalize(name));
  let closed = 0;
  if (!topic) return closed;
  for (const sub of topic.subs.values()) {
    for (const consumer of [...sub.consumers]) {
      send(consumer.conn, base(Type.CLOSE_CONSUMER).setCloseConsumer(new pb.CommandCloseConsumer().setConsumerId(consumer.id).setRequestId(0)));
      removeConsumer(consumer);
      closed++;
    }
  }
  return closed;
}

// ---- commands ----
function onConnect(conn, c) {
  if (opts.token) {
    const method = c.getAuthMethodName();
    const data = Buffer.from(c.getAuthData_asU8()).toString();
    if (method !== 'token' || data !== opts.token) {
      stats.refused_auth++;
      log(`[${conn.id}] CONNECT refused: ${method ? `auth method '${method}' with a wrong token` : 'no token'}`);
      conn.socket.end(connectRefusal(ServerError.AUTHENTICATIONERROR, 'Unable to authenticate'));
      return;
    }
  }
  conn.connected = true;
  conn.protocol = Math.min(c.getProtocolVersion(), opts.protocolVersion);
  conn.clientVersion = c.getClientVersion();
  send(conn, base(Type.CONNECTED).setConnected(new pb.CommandConnected()
    .setServerVersion('Pulsar Server-babelqueue-fake')
    .setProtocolVersion(conn.protocol)
    .setMaxMessageSize(opts.maxMessageSize)));
}

function onLookup(conn, c) {
  const name = normalize(c.getTopic());
  const answer = new pb.CommandLookupTopicResponse().setRequestId(c.getRequestId()).setAuthoritative(true);
  const left = selfRedirects.get(name) || 0;
  const owner = ownerOf(name);
  if (left > 0) {
    selfRedirects.set(name, left - 1);
    answer.setResponse(LookupType.REDIRECT).setBrokerserviceurl(urls[conn.listener]);
  } else if (owner !== conn.listener) {
    answer.setResponse(LookupType.REDIRECT).setBrokerserviceurl(urls[owner]);
  } else {
    answer.setResponse(LookupType.CONNECT).setBrokerserviceurl(urls[conn.listener]);
  }
  if (trace) log(`[${conn.id}] LOOKUP ${name} -> ${answer.getResponse() === LookupType.REDIRECT ? 'Redirect' : 'Connect'} ${answer.getBrokerserviceurl()}`);
  send(conn, base(Type.LOOKUP_RESPONSE).setLookuptopicresponse(answer));
}

function onPartitionedMetadata(conn, c) {
  const name = normalize(c.getTopic());
  send(conn, base(Type.PARTITIONED_METADATA_RESPONSE).setPartitionmetadataresponse(
    new pb.CommandPartitionedTopicMetadataResponse()
      .setRequestId(c.getRequestId())
      .setResponse(pb.CommandPartitionedTopicMetadataResponse.LookupType.SUCCESS)
      .setPartitions(partitioned.get(name) || 0)));
}

// A producer or consumer is served only by the listener that owns the topic.
function servedHere(conn, name, requestId) {
  if (ownerOf(name) === conn.listener) return true;
  error(conn, requestId, ServerError.SERVICENOTREADY, `Namespace bundle for topic (${name}) not served by this instance. Please redo the lookup.`);
  return false;
}

function onProducer(conn, c) {
  const name = normalize(c.getTopic());
  if (!servedHere(conn, name, c.getRequestId())) return;
  topicOf(name);
  const producerName = c.getProducerName() || `babelqueue-fake-${conn.id}-${c.getProducerId()}`;
  conn.producers.set(c.getProducerId(), { topic: name, name: producerName });
  send(conn, base(Type.PRODUCER_SUCCESS).setProducerSuccess(new pb.CommandProducerSuccess()
    .setRequestId(c.getRequestId()).setProducerName(producerName).setLastSequenceId(-1).setProducerReady(true)));
}

function onSend(conn, c, frame) {
  const producer = conn.producers.get(c.getProducerId());
  const sendError = (code, message) => send(conn, base(Type.SEND_ERROR).setSendError(new pb.CommandSendError()
    .setProducerId(c.getProducerId()).setSequenceId(c.getSequenceId()).setError(code).setMessage(message)));
  if (!producer) {
    sendError(ServerError.UNKNOWNERROR, `no producer ${c.getProducerId()} on this connection`);
    return;
  }
  if (frame.checksumOk === false) {
    sendError(ServerError.CHECKSUMERROR, 'Checksum failed on the broker');
    return;
  }
  const metadata = pb.MessageMetadata.deserializeBinary(frame.metadata);
  const topic = topicOf(producer.topic);
  const index = topic.entries.length;
  topic.entries.push({
    metadata: frame.metadata,
    payload: frame.payload,
    count: metadata.hasNumMessagesInBatch() ? metadata.getNumMessagesInBatch() : 1,
    redelivery: 0,
  });
  const receipt = new pb.CommandSendReceipt()
    .setProducerId(c.getProducerId())
    .setSequenceId(c.getSequenceId())
    .setMessageId(new pb.MessageIdData().setLedgerid(topic.ledger).setEntryid(index));
  if (c.hasHighestSequenceId()) receipt.setHighestSequenceId(c.getHighestSequenceId());
  send(conn, base(Type.SEND_RECEIPT).setSendReceipt(receipt));
  dispatchTopic(topic);
}

function onSubscribe(conn, c) {
  const name = normalize(c.getTopic());
  if (!servedHere(conn, name, c.getRequestId())) return;
  const topic = topicOf(name);
  let sub = topic.subs.get(c.getSubscription());
  if (!sub) {
    const earliest = c.getInitialposition() === pb.CommandSubscribe.InitialPosition.EARLIEST;
    sub = {
      type: c.getSubtype(),
      cursor: earliest ? 0 : topic.entries.length,
      pending: new Map(), // entry index -> consumer holding it unacknowledged
      replay: new Set(), // entry indexes to redeliver
      acked: new Set(),
      redelivery: new Map(), // entry index -> redelivery count
      consumers: [],
      rr: 0,
    };
    topic.subs.set(c.getSubscription(), sub);
  } else if (sub.type !== c.getSubtype()) {
    error(conn, c.getRequestId(), ServerError.CONSUMERBUSY, 'Subscription is of different type');
    return;
  } else if (sub.type === SubType.EXCLUSIVE && sub.consumers.length) {
    error(conn, c.getRequestId(), ServerError.CONSUMERBUSY, 'Exclusive consumer is already connected');
    return;
  }
  if (conn.consumers.has(c.getConsumerId())) {
    error(conn, c.getRequestId(), ServerError.CONSUMERBUSY, `consumer id ${c.getConsumerId()} is in use on this connection`);
    return;
  }
  const consumer = {
    id: c.getConsumerId(),
    conn,
    topic: name,
    sub: c.getSubscription(),
    permits: 0,
    granted: 0,
    delivered: 0,
    acks: 0,
  };
  sub.consumers.push(consumer);
  conn.consumers.set(consumer.id, consumer);
  success(conn, c.getRequestId());
}

function onFlow(conn, c) {
  const consumer = conn.consumers.get(c.getConsumerId());
  if (!consumer) return;
  consumer.permits += c.getMessagepermits();
  consumer.granted += c.getMessagepermits();
  if (trace) log(`[${conn.id}] FLOW ${c.getMessagepermits()} consumer ${consumer.id} (permits ${consumer.permits})`);
  const topic = topics.get(consumer.topic);
  dispatch(topic, topic.subs.get(consumer.sub));
}

// True when the ack set (bits of the batch entries still unacknowledged) leaves some.
function partial(ackSet, count) {
  for (let i = 0; i < count; i++) {
    const word = BigInt.asUintN(64, BigInt(ackSet[Math.floor(i / 64)] ?? 0));
    if ((word >> BigInt(i % 64)) & 1n) return true;
  }
  return false;
}

function onAck(conn, c) {
  const consumer = conn.consumers.get(c.getConsumerId());
  if (consumer) {
    const topic = topics.get(consumer.topic);
    const sub = topic.subs.get(consumer.sub);
    const settle = (index) => {
      sub.acked.add(index);
      sub.pending.delete(index);
      sub.replay.delete(index);
    };
    for (const id of c.getMessageIdList()) {
      consumer.acks++;
      const index = id.getEntryid();
      if (id.getLedgerid() !== topic.ledger || index >= topic.entries.length) continue;
      if (c.getAckType() === pb.CommandAck.AckType.CUMULATIVE) {
        for (let i = 0; i <= index; i++) settle(i);
      } else if (!partial(id.getAckSetList(), topic.entries[index].count)) {
        settle(index);
      }
      if (trace) log(`[${conn.id}] ACK ${topic.name} ${index} consumer ${consumer.id}`);
    }
  }
  if (c.hasRequestId()) {
    send(conn, base(Type.ACK_RESPONSE).setAckresponse(new pb.CommandAckResponse()
      .setConsumerId(c.getConsumerId()).setRequestId(c.getRequestId())));
  }
}

// REDELIVER_UNACKNOWLEDGED_MESSAGES: in Shared and Key_Shared the given entries (all held by the
// consumer when none is given) come back with redelivery_count + 1; Exclusive and Failover rewind
// everything the consumer holds, count unchanged (as the broker does).
function onRedeliver(conn, c) {
  const consumer = conn.consumers.get(c.getConsumerId());
  if (!consumer) return;
  const topic = topics.get(consumer.topic);
  const sub = topic.subs.get(consumer.sub);
  const wanted = isShared(sub) && c.getMessageIdsList().length
    ? new Set(c.getMessageIdsList().filter((id) => id.getLedgerid() === topic.ledger).map((id) => id.getEntryid()))
    : null;
  for (const [index, holder] of sub.pending) {
    if (holder !== consumer || (wanted && !wanted.has(index))) continue;
    sub.pending.delete(index);
    sub.replay.add(index);
    if (isShared(sub)) sub.redelivery.set(index, (sub.redelivery.get(index) ?? topic.entries[index].redelivery) + 1);
  }
  dispatch(topic, sub);
}

function onCloseProducer(conn, c) {
  conn.producers.delete(c.getProducerId());
  success(conn, c.getRequestId());
}

function onCloseConsumer(conn, c) {
  const consumer = conn.consumers.get(c.getConsumerId());
  if (consumer) removeConsumer(consumer);
  success(conn, c.getRequestId());
}

function onUnsubscribe(conn, c) {
  const consumer = conn.consumers.get(c.getConsumerId());
  if (consumer) {
    removeConsumer(consumer);
    topics.get(consumer.topic).subs.delete(consumer.sub);
  }
  success(conn, c.getRequestId());
}

function onFrame(conn, frame) {
  const command = frame.command;
  const type = command.getType();
  if (!conn.connected) {
    if (type !== Type.CONNECT) throw new Error(`${Object.keys(Type).find((k) => Type[k] === type)} before CONNECT`);
    onConnect(conn, command.getConnect());
    return;
  }
  switch (type) {
    case Type.PING:
      conn.pings++;
      send(conn, base(Type.PONG).setPong(new pb.CommandPong()));
      break;
    case Type.PONG:
      conn.pongs++;
      conn.onPong?.();
      break;
    case Type.LOOKUP:
      onLookup(conn, command.getLookuptopic());
      break;
    case Type.PARTITIONED_METADATA:
      onPartitionedMetadata(conn, command.getPartitionmetadata());
      break;
    case Type.PRODUCER:
      onProducer(conn, command.getProducer());
      break;
    case Type.SEND:
      onSend(conn, command.getSend(), frame);
      break;
    case Type.SUBSCRIBE:
      onSubscribe(conn, command.getSubscribe());
      break;
    case Type.FLOW:
      onFlow(conn, command.getFlow());
      break;
    case Type.ACK:
      onAck(conn, command.getAck());
      break;
    case Type.REDELIVER_UNACKNOWLEDGED_MESSAGES:
      onRedeliver(conn, command.getRedeliverunacknowledgedmessages());
      break;
    case Type.CLOSE_PRODUCER:
      onCloseProducer(conn, command.getCloseProducer());
      break;
    case Type.CLOSE_CONSUMER:
      onCloseConsumer(conn, command.getCloseConsumer());
      break;
    case Type.UNSUBSCRIBE:
      onUnsubscribe(conn, command.getUnsubscribe());
      break;
    default:
      log(`[${conn.id}] ignored command type ${type} (not supported by the fake broker)`);
  }
}

// ---- listeners ----
function accept(listener, socket) {
  const conn = {
    id: ++nextConnection,
    listener,
    socket,
    reader: new codec.FrameReader(opts.maxMessageSize + 64 * 1024),
    connected: false,
    producers: new Map(),
    consumers: new Map(),
    pongs: 0,
    pings: 0,
  };
  stats.connects[listener]++;
  connections.add(conn);
  socket.setNoDelay(true);
  socket.on('data', (chunk) => {
    try {
      for (const frame of conn.reader.feed(chunk)) onFrame(conn, frame);
    } catch (e) {
      log(`[${conn.id}] protocol error: ${e.message}; closing`);
      socket.destroy();
    }
  });
  socket.on('error', (e) => log(`[${conn.id}] socket: ${e.message}`));
  socket.on('close', () => {
    connections.delete(conn);
    for (const consumer of [...conn.consumers.values()]) removeConsumer(consumer);
    conn.producers.clear();
    if (trace) log(`[${conn.id}] closed`);
  });
}

function listen(port, onSocket) {
  return new Promise((resolve, reject) => {
    const server = net.createServer(onSocket);
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

// ---- control channel ----
function subscriptionStats(topic, sub) {
  return {
    type: Object.keys(SubType).find((k) => SubType[k] === sub.type),
    backlog: topic.entries.length - sub.acked.size,
    pending: sub.pending.size,
    acked: sub.acked.size,
    redelivery: Object.fromEntries(sub.redelivery),
    consumers: sub.consumers.map((c) => ({ id: c.id, connection: c.conn.id, permits: c.permits, granted: c.granted, delivered: c.delivered, acks: c.acks })),
  };
}

function pingAll() {
  const targets = [...connections].filter((c) => c.connected);
  return new Promise((resolve) => {
    let ponged = 0;
    const finish = () => resolve({ pinged: targets.length, ponged });
    if (!targets.length) return finish();
    const timer = setTimeout(finish, 2000);
    for (const conn of targets) {
      conn.onPong = () => {
        conn.onPong = null;
        if (++ponged === targets.length) {
          clearTimeout(timer);
          finish();
        }
      };
      send(conn, base(Type.PING).setPing(new pb.CommandPing()));
    }
  });
}

async function control(line) {
  const space = line.indexOf(' ');
  const verb = space < 0 ? line : line.slice(0, space);
  const rest = space < 0 ? '' : line.slice(space + 1).trim();
  const args = rest.split(/\s+/).filter(Boolean);
  switch (verb) {
    case 'drop': {
      const all = [...connections];
      for (const conn of all) conn.socket.destroy();
      return { dropped: all.length };
    }
    case 'redirect': {
      const [topic, to, times] = args;
      const name = normalize(topic || '');
      if (!topic || !['primary', 'second', 'self'].includes(to)) throw new Error('usage: redirect TOPIC primary|second|self [N]');
      if (to === 'self') selfRedirects.set(name, Number(times || 1));
      else owners.set(name, to);
      return { topic: name };
    }
    case 'partition': {
      const [topic, n] = args;
      if (!topic || !(Number(n) >= 0)) throw new Error('usage: partition TOPIC N');
      partitioned.set(normalize(topic), Number(n));
      return { topic: normalize(topic), partitions: Number(n) };
    }
    case 'enqueue': {
      const spec = JSON.parse(rest);
      if (!spec.topic) throw new Error('enqueue needs "topic"');
      const topic = topicOf(normalize(spec.topic));
      const entry = codec.buildEntry({
        messages: spec.messages || [spec],
        batch: !!spec.batch,
        compression: spec.compression || 'NONE',
        writer: spec.writer || 'java',
        producer: spec.producer || 'babelqueue-fake-enqueue',
        sequence: topic.entries.length,
      });
      topic.entries.push({ ...entry, redelivery: Number(spec.redelivery_count || 0) });
      dispatchTopic(topic);
      return { topic: topic.name, ledger: topic.ledger, entry: topic.entries.length - 1, messages: entry.count };
    }
    case 'stats': {
      const [name, subName] = args;
      const topic = topics.get(normalize(name || ''));
      if (!topic) throw new Error(`no topic ${name}`);
      const subs = {};
      for (const [n, sub] of topic.subs) if (!subName || n === subName) subs[n] = subscriptionStats(topic, sub);
      return { topic: topic.name, entries: topic.entries.length, subscriptions: subs };
    }
    case 'connections':
      return {
        open: [...connections].filter((c) => c.connected).length,
        connects: stats.connects,
        refused_auth: stats.refused_auth,
        pongs: [...connections].reduce((n, c) => n + c.pongs, 0),
        pings: [...connections].reduce((n, c) => n + c.pings, 0),
      };
    case 'ping':
      return pingAll();
    case 'close-consumers':
      return { closed: sendCloseConsumers(args[0] || '') };
    case 'quit':
      setImmediate(() => process.exit(0));
      return {};
    default:
      throw new Error(`unknown command '${verb}'`);
  }
}

function onControl(socket) {
  let buffered = '';
  let chain = Promise.resolve();
  socket.setEncoding('utf8');
  socket.on('error', () => {});
  socket.on('data', (chunk) => {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (!line) continue;
      chain = chain.then(async () => {
        let reply;
        try {
          reply = { ok: true, ...(await control(line)) };
        } catch (e) {
          reply = { ok: false, error: e.message };
        }
        if (!socket.destroyed) socket.write(`${JSON.stringify(reply)}\n`);
      });
    }
  });
}

async function main() {
  await codec.ready();
  const primary = await listen(opts.port, (s) => accept('primary', s));
  const second = await listen(opts.secondPort, (s) => accept('second', s));
  const controlServer = await listen(opts.controlPort, onControl);
  urls.primary = `pulsar://127.0.0.1:${primary.address().port}`;
  urls.second = `pulsar://127.0.0.1:${second.address().port}`;
  process.stdout.write(`listening 127.0.0.1:${primary.address().port}\n`);
  process.stdout.write(`second 127.0.0.1:${second.address().port}\n`);
  process.stdout.write(`control 127.0.0.1:${controlServer.address().port}\n`);
  const stop = () => process.exit(0);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e) => {
  log(`fake pulsar broker: ${e.message}`);
  if (/EADDRINUSE/.test(e.message)) log('Address already in use');
  process.exit(1);
});
