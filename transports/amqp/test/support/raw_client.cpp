// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "raw_client.hpp"

#include <amqp.h>
#include <amqp_ssl_socket.h>
#include <amqp_tcp_socket.h>
#include <sys/time.h>

#include <cstdio>
#include <deque>
#include <ostream>
#include <stdexcept>
#include <utility>

namespace babelqueue::amqp::test {
namespace {

using Clock = std::chrono::steady_clock;

amqp_bytes_t bytes_of(std::string_view text) {
  return {text.size(), const_cast<char*>(text.data())};
}

std::string string_of(amqp_bytes_t bytes) {
  return bytes.len == 0 ? std::string()
                        : std::string(static_cast<const char*>(bytes.bytes), bytes.len);
}

timeval to_timeval(std::chrono::microseconds duration) {
  if (duration.count() < 0) duration = {};
  return {static_cast<time_t>(duration.count() / 1'000'000),
          static_cast<suseconds_t>(duration.count() % 1'000'000)};
}

RawField with_tag(char tag) {
  RawField field;
  field.tag = tag;
  return field;
}

RawField integer_field(char tag, std::int64_t value) {
  RawField field = with_tag(tag);
  field.integer = value;
  return field;
}

RawField real_field(char tag, double value) {
  RawField field = with_tag(tag);
  field.real = value;
  return field;
}

RawField bytes_field(char tag, std::string value) {
  RawField field = with_tag(tag);
  field.bytes = std::move(value);
  return field;
}

// Owns the entry and element arrays an amqp_table_t points into while a call uses it; strings
// point into the RawFields, which outlive the call too.
class TableEncoder {
 public:
  amqp_table_t encode(const RawTable& table) {
    std::vector<amqp_table_entry_t> entries;
    entries.reserve(table.size());
    for (const RawEntry& entry : table) {
      entries.push_back({bytes_of(entry.key), encode(entry.value)});
    }
    std::vector<amqp_table_entry_t>& stored = tables_.emplace_back(std::move(entries));
    return {static_cast<int>(stored.size()), stored.data()};
  }

 private:
  amqp_field_value_t encode(const RawField& field) {
    amqp_field_value_t out{};
    out.kind = static_cast<std::uint8_t>(field.tag);
    switch (field.tag) {
      case 't':
        out.value.boolean = field.boolean ? 1 : 0;
        break;
      case 'b':
        out.value.i8 = static_cast<std::int8_t>(field.integer);
        break;
      case 'B':
        out.value.u8 = static_cast<std::uint8_t>(field.integer);
        break;
      case 's':
        out.value.i16 = static_cast<std::int16_t>(field.integer);
        break;
      case 'u':
        out.value.u16 = static_cast<std::uint16_t>(field.integer);
        break;
      case 'I':
        out.value.i32 = static_cast<std::int32_t>(field.integer);
        break;
      case 'i':
        out.value.u32 = static_cast<std::uint32_t>(field.integer);
        break;
      case 'l':
        out.value.i64 = field.integer;
        break;
      case 'T':
        out.value.u64 = static_cast<std::uint64_t>(field.integer);
        break;
      case 'f':
        out.value.f32 = static_cast<float>(field.real);
        break;
      case 'd':
        out.value.f64 = field.real;
        break;
      case 'D':
        out.value.decimal = {field.decimals, static_cast<std::uint32_t>(field.integer)};
        break;
      case 'S':
      case 'x':
        out.value.bytes = bytes_of(field.bytes);
        break;
      case 'A': {
        std::vector<amqp_field_value_t> elements;
        elements.reserve(field.array.size());
        for (const RawField& element : field.array)
          elements.push_back(encode(element));
        std::vector<amqp_field_value_t>& stored = arrays_.emplace_back(std::move(elements));
        out.value.array = {static_cast<int>(stored.size()), stored.data()};
        break;
      }
      case 'F':
        out.value.table = encode(field.table);
        break;
      case 'V':
        break;
      default:
        throw std::invalid_argument("RawField: unknown type tag '" + std::string(1, field.tag) +
                                    "'");
    }
    return out;
  }

  std::deque<std::vector<amqp_table_entry_t>> tables_;
  std::deque<std::vector<amqp_field_value_t>> arrays_;
};

RawTable decode_table(const amqp_table_t& table);

RawField decode_field(const amqp_field_value_t& value) {
  const auto& v = value.value;
  switch (value.kind) {
    case 't':
      return RawField::boolean_value(v.boolean != 0);
    case 'b':
      return RawField::int8(v.i8);
    case 'B':
      return RawField::uint8(v.u8);
    case 's':
      return RawField::int16(v.i16);
    case 'u':
      return RawField::uint16(v.u16);
    case 'I':
      return RawField::int32(v.i32);
    case 'i':
      return RawField::uint32(v.u32);
    case 'l':
      return RawField::int64(v.i64);
    case 'T':
      return RawField::timestamp(v.u64);
    case 'f':
      return RawField::float32(v.f32);
    case 'd':
      return RawField::float64(v.f64);
    case 'D':
      return RawField::decimal(v.decimal.decimals, v.decimal.value);
    case 'S':
      return RawField::long_string(string_of(v.bytes));
    case 'x':
      return RawField::byte_array(string_of(v.bytes));
    case 'A': {
      std::vector<RawField> elements;
      for (int i = 0; i < v.array.num_entries; ++i)
        elements.push_back(decode_field(v.array.entries[i]));
      return RawField::field_array(std::move(elements));
    }
    case 'F':
      return RawField::field_table(decode_table(v.table));
    case 'V':
      return RawField::void_value();
    default:
      throw std::runtime_error("RawClient: field of unknown type '" +
                               std::string(1, static_cast<char>(value.kind)) + "' received");
  }
}

RawTable decode_table(const amqp_table_t& table) {
  RawTable out;
  for (int i = 0; i < table.num_entries; ++i) {
    out.push_back({string_of(table.entries[i].key), decode_field(table.entries[i].value)});
  }
  return out;
}

// The string members of basic.properties, each with its flag bit.
struct StringProperty {
  std::optional<std::string> RawProperties::*raw;
  amqp_flags_t flag;
  amqp_bytes_t amqp_basic_properties_t::*wire;
};

constexpr StringProperty kStringProperties[] = {
    {&RawProperties::content_type, AMQP_BASIC_CONTENT_TYPE_FLAG,
     &amqp_basic_properties_t::content_type},
    {&RawProperties::content_encoding, AMQP_BASIC_CONTENT_ENCODING_FLAG,
     &amqp_basic_properties_t::content_encoding},
    {&RawProperties::correlation_id, AMQP_BASIC_CORRELATION_ID_FLAG,
     &amqp_basic_properties_t::correlation_id},
    {&RawProperties::reply_to, AMQP_BASIC_REPLY_TO_FLAG, &amqp_basic_properties_t::reply_to},
    {&RawProperties::expiration, AMQP_BASIC_EXPIRATION_FLAG, &amqp_basic_properties_t::expiration},
    {&RawProperties::message_id, AMQP_BASIC_MESSAGE_ID_FLAG, &amqp_basic_properties_t::message_id},
    {&RawProperties::type, AMQP_BASIC_TYPE_FLAG, &amqp_basic_properties_t::type},
    {&RawProperties::user_id, AMQP_BASIC_USER_ID_FLAG, &amqp_basic_properties_t::user_id},
    {&RawProperties::app_id, AMQP_BASIC_APP_ID_FLAG, &amqp_basic_properties_t::app_id},
    {&RawProperties::cluster_id, AMQP_BASIC_CLUSTER_ID_FLAG, &amqp_basic_properties_t::cluster_id},
};

amqp_basic_properties_t encode_properties(const RawProperties& in, TableEncoder& tables) {
  amqp_basic_properties_t out{};
  for (const StringProperty& p : kStringProperties) {
    if (const std::optional<std::string>& value = in.*p.raw) {
      out._flags |= p.flag;
      out.*p.wire = bytes_of(*value);
    }
  }
  if (in.headers) {
    out._flags |= AMQP_BASIC_HEADERS_FLAG;
    out.headers = tables.encode(*in.headers);
  }
  if (in.delivery_mode) {
    out._flags |= AMQP_BASIC_DELIVERY_MODE_FLAG;
    out.delivery_mode = *in.delivery_mode;
  }
  if (in.priority) {
    out._flags |= AMQP_BASIC_PRIORITY_FLAG;
    out.priority = *in.priority;
  }
  if (in.timestamp) {
    out._flags |= AMQP_BASIC_TIMESTAMP_FLAG;
    out.timestamp = *in.timestamp;
  }
  return out;
}

RawProperties decode_properties(const amqp_basic_properties_t& in) {
  RawProperties out;
  for (const StringProperty& p : kStringProperties) {
    if ((in._flags & p.flag) != 0) out.*p.raw = string_of(in.*p.wire);
  }
  if ((in._flags & AMQP_BASIC_HEADERS_FLAG) != 0) out.headers = decode_table(in.headers);
  if ((in._flags & AMQP_BASIC_DELIVERY_MODE_FLAG) != 0) out.delivery_mode = in.delivery_mode;
  if ((in._flags & AMQP_BASIC_PRIORITY_FLAG) != 0) out.priority = in.priority;
  if ((in._flags & AMQP_BASIC_TIMESTAMP_FLAG) != 0) out.timestamp = in.timestamp;
  return out;
}

// A channel.close or connection.close from the broker, with its reply code.
class BrokerRefusal : public std::runtime_error {
 public:
  BrokerRefusal(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  [[nodiscard]] int code() const { return code_; }

 private:
  int code_;
};

std::string describe(std::uint16_t code, amqp_bytes_t text) {
  return std::to_string(code) + " " + string_of(text);
}

void print_bytes(std::string_view bytes, std::string& out) {
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f && c != '"' && c != '\\') {
      out += c;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    }
  }
}

}  // namespace

RawField RawField::boolean_value(bool value) {
  RawField field = with_tag('t');
  field.boolean = value;
  return field;
}
RawField RawField::int8(std::int8_t value) {
  return integer_field('b', value);
}
RawField RawField::uint8(std::uint8_t value) {
  return integer_field('B', value);
}
RawField RawField::int16(std::int16_t value) {
  return integer_field('s', value);
}
RawField RawField::uint16(std::uint16_t value) {
  return integer_field('u', value);
}
RawField RawField::int32(std::int32_t value) {
  return integer_field('I', value);
}
RawField RawField::uint32(std::uint32_t value) {
  return integer_field('i', value);
}
RawField RawField::int64(std::int64_t value) {
  return integer_field('l', value);
}
RawField RawField::float32(float value) {
  return real_field('f', value);
}
RawField RawField::float64(double value) {
  return real_field('d', value);
}
RawField RawField::decimal(std::uint8_t decimals, std::uint32_t value) {
  RawField field = integer_field('D', value);
  field.decimals = decimals;
  return field;
}
RawField RawField::long_string(std::string value) {
  return bytes_field('S', std::move(value));
}
RawField RawField::byte_array(std::string value) {
  return bytes_field('x', std::move(value));
}
RawField RawField::field_array(std::vector<RawField> values) {
  RawField field = with_tag('A');
  field.array = std::move(values);
  return field;
}
RawField RawField::timestamp(std::uint64_t seconds) {
  return integer_field('T', static_cast<std::int64_t>(seconds));
}
RawField RawField::field_table(RawTable entries) {
  RawField field = with_tag('F');
  field.table = std::move(entries);
  return field;
}
RawField RawField::void_value() {
  return with_tag('V');
}

std::string to_string(const RawField& field) {
  std::string out(1, field.tag);
  switch (field.tag) {
    case 't':
      out += field.boolean ? ":1" : ":0";
      break;
    case 'f':
    case 'd': {
      char number[32];
      std::snprintf(number, sizeof number, ":%.17g", field.real);
      out += number;
      break;
    }
    case 'D':
      out += ':';
      out += std::to_string(field.decimals);
      out += ':';
      out += std::to_string(field.integer);
      break;
    case 'S':
    case 'x':
      out += ":\"";
      print_bytes(field.bytes, out);
      out += '"';
      break;
    case 'A':
      out += ":[";
      for (std::size_t i = 0; i < field.array.size(); ++i) {
        if (i > 0) out += ", ";
        out += to_string(field.array[i]);
      }
      out += ']';
      break;
    case 'F':
      out += ':';
      out += to_string(field.table);
      break;
    case 'V':
      break;
    default:
      // Appended piece by piece: GCC 12 -O2 reports a bogus -Wrestrict for `":" + std::string`.
      out += ':';
      out += std::to_string(field.integer);
      break;
  }
  return out;
}

std::string to_string(const RawTable& table) {
  std::string out = "{";
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (i > 0) out += ", ";
    print_bytes(table[i].key, out);
    out += '=' + to_string(table[i].value);
  }
  return out + '}';
}

void PrintTo(const RawField& field, std::ostream* os) {
  *os << to_string(field);
}

void PrintTo(const RawEntry& entry, std::ostream* os) {
  *os << to_string(RawTable{entry});
}

// The rabbitmq-c connection with its one channel.
struct RawClient::Connection {
  amqp_connection_state_t state = amqp_new_connection();
  amqp_channel_t channel = 1;
  bool confirms = false;
  std::chrono::milliseconds timeout{};
  bool logged_in = false;
  // Why the connection cannot be used any more; empty while it can.
  std::string closed;

  ~Connection() {
    if (logged_in && closed.empty()) amqp_connection_close(state, AMQP_REPLY_SUCCESS);
    amqp_destroy_connection(state);
  }

  void ensure_open(std::string_view what) const {
    if (!closed.empty()) {
      throw std::runtime_error(std::string(what) + ": the connection is closed (" + closed + ")");
    }
  }

  [[noreturn]] void fail(std::string_view what, const std::string& why) {
    closed = why;
    throw std::runtime_error(std::string(what) + ": " + why);
  }

  void check_status(int status, std::string_view what) {
    if (status != AMQP_STATUS_OK) fail(what, amqp_error_string2(status));
  }

  // Throws for a failed reply: after a channel error the channel is open again, after a
  // connection error the connection is marked closed.
  void check(const amqp_rpc_reply_t& reply, std::string_view what) {
    switch (reply.reply_type) {
      case AMQP_RESPONSE_NORMAL:
        return;
      case AMQP_RESPONSE_NONE:
        fail(what, "no reply");
      case AMQP_RESPONSE_LIBRARY_EXCEPTION:
        fail(what, amqp_error_string2(reply.library_error));
      case AMQP_RESPONSE_SERVER_EXCEPTION:
        closed_by_broker(reply.reply, what);
    }
    fail(what, "unknown reply type");
  }

  [[noreturn]] void closed_by_broker(const amqp_method_t& method, std::string_view what) {
    if (method.id == AMQP_CHANNEL_CLOSE_METHOD) {
      // Copied first: the decoded method lives in buffers the next calls reuse.
      const auto* close = static_cast<const amqp_channel_close_t*>(method.decoded);
      const int code = close->reply_code;
      const std::string why = describe(close->reply_code, close->reply_text);
      amqp_channel_close_ok_t close_ok{};
      check_status(amqp_send_method(state, channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &close_ok),
                   "channel.close-ok");
      open_channel();
      throw BrokerRefusal(std::string(what) + ": " + why, code);
    }
    if (method.id == AMQP_CONNECTION_CLOSE_METHOD) {
      const auto* close = static_cast<const amqp_connection_close_t*>(method.decoded);
      closed = describe(close->reply_code, close->reply_text);
      amqp_connection_close_ok_t close_ok{};
      amqp_send_method(state, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &close_ok);
      throw BrokerRefusal(std::string(what) + ": " + closed, close->reply_code);
    }
    fail(what, std::string("unexpected ") + amqp_method_name(method.id));
  }

  void open_channel() {
    amqp_channel_open(state, channel);
    check(amqp_get_rpc_reply(state), "channel.open");
    if (confirms) {
      amqp_confirm_select(state, channel);
      check(amqp_get_rpc_reply(state), "confirm.select");
    }
  }

  void wait_for_confirm() {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      timeval remaining = to_timeval(
          std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()));
      amqp_frame_t frame;
      const int status = amqp_simple_wait_frame_noblock(state, &frame, &remaining);
      if (status == AMQP_STATUS_TIMEOUT) fail("basic.publish", "no confirm within the timeout");
      check_status(status, "basic.publish (waiting for the confirm)");
      if (frame.frame_type != AMQP_FRAME_METHOD) continue;
      const amqp_method_t& method = frame.payload.method;
      // One publish is outstanding at a time, so a confirm is this one's.
      if (method.id == AMQP_BASIC_ACK_METHOD) return;
      if (method.id == AMQP_BASIC_NACK_METHOD) {
        throw std::runtime_error("basic.publish: the broker nacked the message");
      }
      if (method.id == AMQP_CHANNEL_CLOSE_METHOD || method.id == AMQP_CONNECTION_CLOSE_METHOD) {
        closed_by_broker(method, "basic.publish");
      }
    }
  }
};

RawClient::RawClient(Endpoint endpoint)
    : endpoint_(std::move(endpoint)), connection_(std::make_unique<Connection>()) {
  Connection& c = *connection_;
  c.confirms = endpoint_.confirms;
  c.timeout = endpoint_.timeout;
  const std::string where = endpoint_.host + ":" + std::to_string(endpoint_.port);
  amqp_socket_t* socket = nullptr;
  if (endpoint_.tls) {
    socket = amqp_ssl_socket_new(c.state);
    if (socket == nullptr) c.fail("connect " + where, "cannot create a TLS socket");
    amqp_ssl_socket_set_verify_peer(socket, endpoint_.tls->verify_peer ? 1 : 0);
    amqp_ssl_socket_set_verify_hostname(socket, endpoint_.tls->verify_hostname ? 1 : 0);
    c.check_status(amqp_ssl_socket_set_cacert(socket, endpoint_.tls->ca_file.c_str()),
                   "load CA file " + endpoint_.tls->ca_file);
  } else {
    socket = amqp_tcp_socket_new(c.state);
    if (socket == nullptr) c.fail("connect " + where, "cannot create a socket");
  }
  timeval timeout = to_timeval(endpoint_.timeout);
  c.check_status(amqp_socket_open_noblock(socket, endpoint_.host.c_str(), endpoint_.port, &timeout),
                 "connect " + where);
  c.check_status(amqp_set_handshake_timeout(c.state, &timeout), "set the handshake timeout");
  c.check_status(amqp_set_rpc_timeout(c.state, &timeout), "set the RPC timeout");
  c.check(
      amqp_login(c.state, endpoint_.vhost.c_str(), 0, AMQP_DEFAULT_FRAME_SIZE, endpoint_.heartbeat,
                 AMQP_SASL_METHOD_PLAIN, endpoint_.user.c_str(), endpoint_.password.c_str()),
      "login to " + where + " vhost " + endpoint_.vhost);
  c.logged_in = true;
  c.open_channel();
}

RawClient::~RawClient() = default;

std::optional<std::string> RawClient::server_property(std::string_view key) const {
  const amqp_table_t* properties = amqp_get_server_properties(connection_->state);
  if (properties == nullptr) return std::nullopt;
  for (int i = 0; i < properties->num_entries; ++i) {
    const amqp_table_entry_t& entry = properties->entries[i];
    if (string_of(entry.key) == key && entry.value.kind == AMQP_FIELD_KIND_UTF8) {
      return string_of(entry.value.value.bytes);
    }
  }
  return std::nullopt;
}

void RawClient::declare(std::string_view queue, bool durable, const RawTable& arguments) {
  Connection& c = *connection_;
  c.ensure_open("queue.declare");
  TableEncoder tables;
  amqp_queue_declare(c.state, c.channel, bytes_of(queue), 0, durable ? 1 : 0, 0, 0,
                     tables.encode(arguments));
  c.check(amqp_get_rpc_reply(c.state), "queue.declare " + std::string(queue));
  amqp_maybe_release_buffers(c.state);
}

std::optional<int> RawClient::queue_declare_error(std::string_view queue, const RawTable& arguments,
                                                  bool durable) {
  try {
    declare(queue, durable, arguments);
    return std::nullopt;
  } catch (const BrokerRefusal& e) {
    return e.code();
  }
}

void RawClient::publish(std::string_view queue, std::string_view body,
                        const RawProperties& properties) {
  Connection& c = *connection_;
  c.ensure_open("basic.publish");
  TableEncoder tables;
  const amqp_basic_properties_t wire = encode_properties(properties, tables);
  c.check_status(amqp_basic_publish(c.state, c.channel, amqp_empty_bytes, bytes_of(queue), 0, 0,
                                    &wire, bytes_of(body)),
                 "basic.publish");
  if (c.confirms) c.wait_for_confirm();
  amqp_maybe_release_buffers(c.state);
}

std::optional<RawMessage> RawClient::get(std::string_view queue, RawAck ack) {
  Connection& c = *connection_;
  c.ensure_open("basic.get");
  const std::string what = "basic.get " + std::string(queue);
  const amqp_rpc_reply_t reply =
      amqp_basic_get(c.state, c.channel, bytes_of(queue), ack == RawAck::Auto ? 1 : 0);
  c.check(reply, what);
  if (reply.reply.id != AMQP_BASIC_GET_OK_METHOD) {
    amqp_maybe_release_buffers(c.state);
    return std::nullopt;
  }
  const auto* ok = static_cast<const amqp_basic_get_ok_t*>(reply.reply.decoded);
  RawMessage message;
  message.delivery_tag = ok->delivery_tag;
  message.redelivered = ok->redelivered != 0;
  message.exchange = string_of(ok->exchange);
  message.routing_key = string_of(ok->routing_key);
  message.message_count = ok->message_count;
  amqp_message_t content;
  c.check(amqp_read_message(c.state, c.channel, &content, 0), what + " (content)");
  message.properties = decode_properties(content.properties);
  message.body = string_of(content.body);
  amqp_destroy_message(&content);
  amqp_maybe_release_buffers(c.state);
  return message;
}

void RawClient::ack(std::uint64_t delivery_tag) {
  Connection& c = *connection_;
  c.ensure_open("basic.ack");
  c.check_status(amqp_basic_ack(c.state, c.channel, delivery_tag, 0), "basic.ack");
}

std::uint32_t RawClient::purge(std::string_view queue) {
  Connection& c = *connection_;
  c.ensure_open("queue.purge");
  const amqp_queue_purge_ok_t* ok = amqp_queue_purge(c.state, c.channel, bytes_of(queue));
  c.check(amqp_get_rpc_reply(c.state), "queue.purge " + std::string(queue));
  const std::uint32_t purged = ok->message_count;
  amqp_maybe_release_buffers(c.state);
  return purged;
}

void RawClient::delete_queue(std::string_view queue) {
  Connection& c = *connection_;
  c.ensure_open("queue.delete");
  amqp_queue_delete(c.state, c.channel, bytes_of(queue), 0, 0);
  c.check(amqp_get_rpc_reply(c.state), "queue.delete " + std::string(queue));
  amqp_maybe_release_buffers(c.state);
}

std::optional<std::uint32_t> RawClient::message_count(std::string_view queue) {
  Connection& c = *connection_;
  c.ensure_open("queue.declare");
  const amqp_queue_declare_ok_t* ok =
      amqp_queue_declare(c.state, c.channel, bytes_of(queue), 1, 0, 0, 0, amqp_empty_table);
  try {
    c.check(amqp_get_rpc_reply(c.state), "queue.declare (passive) " + std::string(queue));
  } catch (const BrokerRefusal& e) {
    if (e.code() == AMQP_NOT_FOUND) return std::nullopt;
    throw;
  }
  const std::uint32_t count = ok->message_count;
  amqp_maybe_release_buffers(c.state);
  return count;
}

}  // namespace babelqueue::amqp::test
