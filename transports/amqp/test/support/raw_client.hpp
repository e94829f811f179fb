// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::amqp::test {

struct RawEntry;
// An AMQP field table, entries in wire order.
using RawTable = std::vector<RawEntry>;

// One AMQP 0-9-1 field value with its wire type, as RabbitMQ reads and writes it: `tag` is the
// type letter (t b B s u I i l f d D S x A T F V) and one member holds the value. Built with the
// named constructors below; what RawClient reads back compares equal to what was sent when the
// broker kept the wire type.
struct RawField {
  char tag = 'V';
  // t
  bool boolean = false;
  // b B s u I i l T, and the unscaled value of D (T as seconds below 2^63).
  std::int64_t integer = 0;
  // D: digits after the decimal point.
  std::uint8_t decimals = 0;
  // f d (an f holds a float's value exactly).
  double real = 0;
  // S x
  std::string bytes = {};
  // A
  std::vector<RawField> array = {};
  // F
  RawTable table = {};

  static RawField boolean_value(bool value);                            // t
  static RawField int8(std::int8_t value);                              // b
  static RawField uint8(std::uint8_t value);                            // B
  static RawField int16(std::int16_t value);                            // s
  static RawField uint16(std::uint16_t value);                          // u
  static RawField int32(std::int32_t value);                            // I
  static RawField uint32(std::uint32_t value);                          // i
  static RawField int64(std::int64_t value);                            // l
  static RawField float32(float value);                                 // f
  static RawField float64(double value);                                // d
  static RawField decimal(std::uint8_t decimals, std::uint32_t value);  // D: value / 10^decimals
  static RawField long_string(std::string value);                       // S
  static RawField byte_array(std::string value);                        // x
  static RawField field_array(std::vector<RawField> values);            // A
  static RawField timestamp(std::uint64_t seconds);                     // T
  static RawField field_table(RawTable entries);                        // F
  static RawField void_value();                                         // V

  bool operator==(const RawField& other) const;
};

struct RawEntry {
  std::string key;
  RawField value;
  bool operator==(const RawEntry& other) const = default;
};

inline bool RawField::operator==(const RawField& other) const = default;

// "tag:value", e.g. `I:-7`, `S:"text"`, `D:2:12345`, `A:[b:1, V]`, `F:{k=t:1}`; bytes of S and x
// outside printable ASCII as \xHH. For failure messages (PrintTo).
std::string to_string(const RawField& field);
std::string to_string(const RawTable& table);
void PrintTo(const RawField& field, std::ostream* os);
void PrintTo(const RawEntry& entry, std::ostream* os);

// Every basic.properties field (AMQP 0-9-1 §4.2.6.1); nullopt = absent from the frame. RabbitMQ
// refuses a user_id other than the connection's user (406).
struct RawProperties {
  std::optional<std::string> content_type = std::nullopt;
  std::optional<std::string> content_encoding = std::nullopt;
  std::optional<RawTable> headers = std::nullopt;
  std::optional<std::uint8_t> delivery_mode = std::nullopt;
  std::optional<std::uint8_t> priority = std::nullopt;
  std::optional<std::string> correlation_id = std::nullopt;
  std::optional<std::string> reply_to = std::nullopt;
  std::optional<std::string> expiration = std::nullopt;
  std::optional<std::string> message_id = std::nullopt;
  std::optional<std::uint64_t> timestamp = std::nullopt;
  std::optional<std::string> type = std::nullopt;
  std::optional<std::string> user_id = std::nullopt;
  std::optional<std::string> app_id = std::nullopt;
  std::optional<std::string> cluster_id = std::nullopt;
  bool operator==(const RawProperties& other) const = default;
};

// One message taken by basic.get.
struct RawMessage {
  std::string body;
  RawProperties properties;
  std::uint64_t delivery_tag = 0;
  bool redelivered = false;
  std::string exchange;
  std::string routing_key;
  // Messages left in the queue after this one, as basic.get-ok counts them.
  std::uint32_t message_count = 0;
};

// How `get` acknowledges.
enum class RawAck {
  // basic.get no-ack: the broker forgets the message once sent.
  Auto,
  // The message stays unacknowledged until ack(delivery_tag) or the connection closes.
  Manual,
};

// A plain rabbitmq-c connection with one channel, for tests: it declares, publishes, gets and
// inspects queues the way a test wants to see the wire, without any babelqueue transport code.
// Publishes go to the default exchange with the queue name as routing key.
//
// Errors throw std::runtime_error naming the operation and the broker's reply code and text
// (e.g. "queue.declare: 406 PRECONDITION_FAILED - ..."). After a channel error (403, 404, 405,
// 406) the client opens a new channel and can be used on; after a connection error
// (connection.close from the broker, a lost socket, a timeout) every later call throws.
//
// Thread-safety: not thread-safe; use one object from one thread.
class RawClient {
 public:
  struct Tls {
    // PEM file of the CA that signed the broker's certificate.
    std::string ca_file;
    bool verify_peer = true;
    bool verify_hostname = true;
  };

  struct Endpoint {
    std::string host = "127.0.0.1";
    int port = 5672;
    std::string vhost = "/";
    std::string user = "guest";
    std::string password = "guest";
    // Heartbeat interval asked for, in seconds; 0 = none.
    int heartbeat = 0;
    // confirm.select on the channel: publish returns once the broker acked the message and
    // throws when it nacked it.
    bool confirms = false;
    std::optional<Tls> tls = std::nullopt;
    // TCP connect, login, and every wait for a reply or a confirm.
    std::chrono::milliseconds timeout{10'000};
  };

  // Connects, logs in and opens the channel. Throws std::runtime_error on refusal or timeout.
  explicit RawClient(Endpoint endpoint);
  ~RawClient();
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  const Endpoint& endpoint() const { return endpoint_; }
  // A string field of the broker's connection.start server-properties (e.g. "product",
  // "version", "cluster_name"), nullopt when absent.
  std::optional<std::string> server_property(std::string_view key) const;

  // queue.declare, not exclusive, not auto-delete.
  void declare(std::string_view queue, bool durable = true, const RawTable& arguments = {});
  // The reply code of a queue.declare the broker refuses (e.g. 406 for arguments that differ
  // from the existing queue's), nullopt when it declared the queue.
  std::optional<int> queue_declare_error(std::string_view queue, const RawTable& arguments,
                                         bool durable = true);
  // Publishes `body` to `queue` through the default exchange (waits for the confirm when
  // Endpoint::confirms is set). Without confirms, a message_count() or get() right after it may
  // not see the message yet: the queue receives it and answers those through different paths.
  void publish(std::string_view queue, std::string_view body, const RawProperties& properties = {});
  // basic.get; nullopt when the queue is empty.
  std::optional<RawMessage> get(std::string_view queue, RawAck ack = RawAck::Auto);
  // basic.ack of one delivery of a RawAck::Manual get.
  void ack(std::uint64_t delivery_tag);
  // queue.purge; returns how many messages were removed.
  std::uint32_t purge(std::string_view queue);
  void delete_queue(std::string_view queue);
  // The ready messages of `queue` by a passive queue.declare, nullopt when it does not exist.
  std::optional<std::uint32_t> message_count(std::string_view queue);

 private:
  struct Connection;

  Endpoint endpoint_;
  std::unique_ptr<Connection> connection_;
};

}  // namespace babelqueue::amqp::test
