// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace babelqueue::amqp10::test {

// A message as a raw client sends or reads it: the body as one data section (or the string of an
// AMQP value section), its header's durable flag and delivery-count, and its string application
// properties.
//
// The body's section: "string" or "binary" (an AMQP value), "data", "other" (received only); a
// send makes a data section unless it says "string" or "binary". What a received message
// carried beside (read only on receive, ignored on send): its message annotations (symbol
// keys; values as text, and their AMQP type names), and its correlation-id (text and AMQP type
// name) and creation-time.
struct RawMessage {
  std::string body;
  bool durable = true;
  std::uint32_t delivery_count = 0;
  std::map<std::string, std::string> properties = {};
  // Application properties of AMQP type long (sent only; received ones are in `properties` as
  // text).
  std::map<std::string, std::int64_t> long_properties = {};
  std::string body_section = {};
  std::map<std::string, std::string> annotations = {};
  std::map<std::string, std::string> annotation_types = {};
  std::optional<std::string> correlation_id = {};
  std::string correlation_id_type = {};
  std::optional<std::int64_t> creation_time_ms = {};
};

// A raw AMQP 1.0 client on Qpid Proton C++ with no BabelQueue code: every call opens its own
// connection (SASL PLAIN with `user`, or ANONYMOUS when it is empty), does one thing and closes
// it. Links carry the `queue` capability (Artemis: anycast). The tests' independent view of a
// broker, and the raw baseline of the benchmarks.
//
// Thread-safety: calls may run on different threads at once (nothing is shared between them).
class RawAmqp10 {
 public:
  RawAmqp10(std::string host_port, std::string user, std::string password);

  // Sends `message` to `address` and waits for its outcome. Throws std::runtime_error unless it
  // is accepted within `timeout`.
  void send(const std::string& address, const RawMessage& message,
            std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // Receives up to `n` messages of `address` (credit n) and accepts them; returns early with
  // what there is when `timeout` passes. Throws std::runtime_error when the connection fails.
  std::vector<RawMessage> receive(const std::string& address, std::size_t n,
                                  std::chrono::milliseconds timeout) const;
  // The message count of queue `queue` as Artemis's management address (activemq.management,
  // operation getMessageCount) reports it. Throws std::runtime_error on failure.
  std::int64_t message_count(const std::string& queue,
                             std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // Invokes `operation` of the management resource `resource` ("broker", "queue.NAME") with
  // the JSON array `params` through activemq.management; the reply's body (a JSON array). With
  // `closes_own_connection` (an operation that closes this client's connection among others,
  // e.g. the broker's closeConnectionsForAddress) the connection's end after the request counts
  // as done and the result is empty. Throws std::runtime_error when the operation fails.
  std::string management(const std::string& resource, const std::string& operation,
                         const std::string& params = "[]", bool closes_own_connection = false,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;

 private:
  std::string url_;
  std::string user_;
  std::string password_;
};

}  // namespace babelqueue::amqp10::test
