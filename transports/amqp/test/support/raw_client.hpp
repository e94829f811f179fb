// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// A plain rabbitmq-c connection for tests: what another producer writes and what the broker
// really holds, without any babelqueue transport code. Errors throw std::runtime_error.

#include <amqp.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace babelqueue::amqp::test {

// One field-table value with its wire tag (t b B s u I i l f d D S x A T F V).
struct RawField {
  char tag = 'V';
  std::int64_t i = 0;         // t b s I l T (and B u i as unsigned values)
  double f = 0;               // f d
  std::string s;              // S x
  std::uint8_t decimals = 0;  // D: value in i
  std::vector<RawField> array;
  std::vector<std::pair<std::string, RawField>> table;

  static RawField of(char tag, std::int64_t v) { return RawField{tag, v, 0, {}, 0, {}, {}}; }
  static RawField str(std::string v, char tag = 'S') {
    return RawField{tag, 0, 0, std::move(v), 0, {}, {}};
  }
};
using RawTable = std::vector<std::pair<std::string, RawField>>;

struct RawProperties {
  std::optional<std::string> content_type, content_encoding, type, message_id, correlation_id,
      app_id, reply_to, expiration, user_id;
  std::optional<std::uint8_t> delivery_mode, priority;
  std::optional<std::uint64_t> timestamp;
  std::optional<RawTable> headers;
};

struct RawMessage {
  std::string body;
  RawProperties properties;
  bool redelivered = false;
  std::uint64_t delivery_tag = 0;
  // Each header as (key, tag, value as text: decimal for integers, the bytes for S/x).
  std::vector<std::tuple<std::string, char, std::string>> headers;
};

class RawClient {
 public:
  RawClient(int port, std::string vhost = "/", std::string user = "guest",
            std::string password = "guest");
  ~RawClient();
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  void declare(const std::string& queue, bool durable = true, const RawTable& arguments = {});
  // The reply code of a declare that the broker refuses (e.g. 406), or 0 when it succeeds.
  int queue_declare_error(const std::string& queue, const RawTable& arguments, bool durable = true);
  // With confirms: returns after the broker's basic.ack.
  void publish(const std::string& queue, const std::string& body, const RawProperties& props = {},
               bool confirm = true);
  std::optional<RawMessage> get(const std::string& queue, bool ack = true);
  void ack(std::uint64_t tag);
  void purge(const std::string& queue);
  void delete_queue(const std::string& queue);
  // Ready count by passive declare; nullopt when the queue does not exist.
  std::optional<std::uint32_t> message_count(const std::string& queue);

 private:
  void open_channel();
  void check(const std::string& what);

  amqp_connection_state_t conn_ = nullptr;
  amqp_channel_t channel_ = 0;
  bool confirming_ = false;
  std::uint64_t published_ = 0;
};

}  // namespace babelqueue::amqp::test
