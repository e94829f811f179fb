// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frame.hpp"

namespace babelqueue::pulsar::test {

namespace pb = ::babelqueue::pulsar::proto;

// One message a RawPulsar consumer received: its id, the broker's redelivery count, and the
// verified payload section (metadata and payload as the producer sent them).
struct RawMessage {
  std::uint64_t consumer_id = 0;
  pb::MessageIdData id;
  std::uint32_t redelivery_count = 0;
  wire::Message message;
};

// A blocking Pulsar client on the protocol codec, for tests only (the readiness probe of
// PulsarServer and the smoke test): one TCP connection to 127.0.0.1:port, CONNECT at
// construction, then one request at a time, each waiting for its answer (PINGs answered on the
// way; MESSAGEs kept for receive()). Errors (refused connection, timeout, an ERROR answer, a
// protocol violation) throw std::runtime_error or wire::ProtocolError naming the step.
//
// Thread-safety: not thread-safe; use one object from one thread.
class RawPulsar {
 public:
  RawPulsar(int port, std::chrono::milliseconds timeout);
  ~RawPulsar();
  RawPulsar(const RawPulsar&) = delete;
  RawPulsar& operator=(const RawPulsar&) = delete;

  // CONNECTED's server version and protocol version.
  const std::string& server_version() const { return server_version_; }
  int protocol_version() const { return protocol_version_; }

  // LOOKUP: the response (Connect, Redirect; Failed throws) and the broker service URL.
  pb::CommandLookupTopicResponse lookup(const std::string& topic);
  // PRODUCER (after a LOOKUP: a broker serves a topic once a lookup made it load the topic's
  // namespace bundle): a producer id on `topic`.
  std::uint64_t create_producer(const std::string& topic);
  // SEND of one message; waits for its SEND_RECEIPT and returns the message id.
  pb::MessageIdData send(std::uint64_t producer_id, const std::string& payload,
                         const std::map<std::string, std::string>& properties = {});
  // LOOKUP, SUBSCRIBE (durable, from the earliest message) and FLOW of `permits`.
  std::uint64_t subscribe(const std::string& topic, const std::string& subscription,
                          pb::CommandSubscribe::SubType type, std::uint32_t permits);
  // The next MESSAGE (waits up to the timeout; throws when none comes).
  RawMessage receive();
  // The timeout of every later request and receive.
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
  // ACK of one message (individual; no answer is awaited).
  void ack(std::uint64_t consumer_id, const pb::MessageIdData& id);

 private:
  void write(const std::string& frame);
  using Clock = std::chrono::steady_clock;

  wire::Frame read_frame(Clock::time_point deadline);
  // Reads until a frame `match`es (an answer, a receipt, a message), within the timeout; ERROR
  // and SEND_ERROR throw naming `what`.
  wire::Frame await(const std::string& what, const std::function<bool(const wire::Frame&)>& match);
  std::uint64_t next_id() { return ++last_id_; }

  int fd_ = -1;
  std::chrono::milliseconds timeout_;
  wire::FrameReader reader_;
  std::vector<wire::Frame> messages_;
  std::string server_version_;
  int protocol_version_ = 0;
  std::uint64_t last_id_ = 0;
  std::uint64_t sequence_ = 0;
};

}  // namespace babelqueue::pulsar::test
