// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors

#include "raw_client.hpp"

#include <amqp_tcp_socket.h>

#include <sys/time.h>

#include <stdexcept>
#include <tuple>

namespace babelqueue::amqp::test {
namespace {

amqp_bytes_t bytes(const std::string& s) {
  return amqp_bytes_t{s.size(), const_cast<char*>(s.data())};
}
std::string text(amqp_bytes_t b) {
  return b.len == 0 ? std::string() : std::string(static_cast<const char*>(b.bytes), b.len);
}

// Builds rabbitmq-c tables that point into storage it owns.
class Encoder {
 public:
  amqp_table_t table(const RawTable& t) {
    auto& entries = entries_.emplace_back(t.size());
    for (std::size_t k = 0; k < t.size(); ++k) {
      entries[k].key = keep(t[k].first);
      entries[k].value = value(t[k].second);
    }
    return amqp_table_t{static_cast<int>(entries.size()), entries.data()};
  }
  amqp_bytes_t keep(const std::string& s) { return bytes(strings_.emplace_back(s)); }

 private:
  amqp_field_value_t value(const RawField& f) {
    amqp_field_value_t v{};
    v.kind = static_cast<std::uint8_t>(f.tag);
    switch (f.tag) {
      case 't':
        v.value.boolean = f.i != 0;
        break;
      case 'b':
        v.value.i8 = static_cast<std::int8_t>(f.i);
        break;
      case 'B':
        v.value.u8 = static_cast<std::uint8_t>(f.i);
        break;
      case 's':
        v.value.i16 = static_cast<std::int16_t>(f.i);
        break;
      case 'u':
        v.value.u16 = static_cast<std::uint16_t>(f.i);
        break;
      case 'I':
        v.value.i32 = static_cast<std::int32_t>(f.i);
        break;
      case 'i':
        v.value.u32 = static_cast<std::uint32_t>(f.i);
        break;
      case 'l':
        v.value.i64 = f.i;
        break;
      case 'T':
        v.value.u64 = static_cast<std::uint64_t>(f.i);
        break;
      case 'f':
        v.value.f32 = static_cast<float>(f.f);
        break;
      case 'd':
        v.value.f64 = f.f;
        break;
      case 'D':
        v.value.decimal.decimals = f.decimals;
        v.value.decimal.value = static_cast<std::uint32_t>(f.i);
        break;
      case 'S':
      case 'x':
        v.value.bytes = keep(f.s);
        break;
      case 'A': {
        auto& items = values_.emplace_back();
        for (const RawField& e : f.array)
          items.push_back(value(e));
        v.value.array = amqp_array_t{static_cast<int>(items.size()), items.data()};
        break;
      }
      case 'F':
        v.value.table = table(f.table);
        break;
      default:
        break;  // 'V'
    }
    return v;
  }

  std::deque<std::string> strings_;
  std::deque<std::vector<amqp_table_entry_t>> entries_;
  std::deque<std::vector<amqp_field_value_t>> values_;
};

std::string shown(const amqp_field_value_t& v) {
  switch (v.kind) {
    case 't':
      return v.value.boolean ? "true" : "false";
    case 'b':
      return std::to_string(v.value.i8);
    case 'B':
      return std::to_string(v.value.u8);
    case 's':
      return std::to_string(v.value.i16);
    case 'u':
      return std::to_string(v.value.u16);
    case 'I':
      return std::to_string(v.value.i32);
    case 'i':
      return std::to_string(v.value.u32);
    case 'l':
      return std::to_string(v.value.i64);
    case 'T':
      return std::to_string(v.value.u64);
    case 'S':
    case 'x':
      return text(v.value.bytes);
    default:
      return "?";
  }
}

}  // namespace

RawClient::RawClient(int port, std::string vhost, std::string user, std::string password) {
  conn_ = amqp_new_connection();
  amqp_socket_t* socket = amqp_tcp_socket_new(conn_);
  timeval tv{10, 0};
  if (socket == nullptr || amqp_socket_open_noblock(socket, "127.0.0.1", port, &tv) != 0) {
    amqp_destroy_connection(conn_);
    throw std::runtime_error("RawClient: cannot connect to port " + std::to_string(port));
  }
  const amqp_rpc_reply_t r = amqp_login(conn_, vhost.c_str(), 0, AMQP_DEFAULT_FRAME_SIZE, 0,
                                        AMQP_SASL_METHOD_PLAIN, user.c_str(), password.c_str());
  if (r.reply_type != AMQP_RESPONSE_NORMAL) {
    amqp_destroy_connection(conn_);
    throw std::runtime_error("RawClient: login refused");
  }
  open_channel();
}

RawClient::~RawClient() {
  amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
  amqp_destroy_connection(conn_);
}

void RawClient::open_channel() {
  ++channel_;
  amqp_channel_open(conn_, channel_);
  check("channel.open");
  confirming_ = false;
  published_ = 0;
}

void RawClient::check(const std::string& what) {
  const amqp_rpc_reply_t r = amqp_get_rpc_reply(conn_);
  if (r.reply_type == AMQP_RESPONSE_NORMAL) return;
  std::string why = "failed";
  if (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION && r.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
    const auto* c = static_cast<const amqp_channel_close_t*>(r.reply.decoded);
    why = std::to_string(c->reply_code) + " " + text(c->reply_text);
    amqp_channel_close_ok_t ok{};
    amqp_send_method(conn_, channel_, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
    open_channel();
  }
  throw std::runtime_error("RawClient: " + what + ": " + why);
}

void RawClient::declare(const std::string& queue, bool durable, const RawTable& arguments) {
  Encoder enc;
  amqp_queue_declare(conn_, channel_, bytes(queue), 0, durable ? 1 : 0, 0, 0, enc.table(arguments));
  check("queue.declare " + queue);
}

int RawClient::queue_declare_error(const std::string& queue, const RawTable& arguments,
                                   bool durable) {
  Encoder enc;
  amqp_queue_declare(conn_, channel_, bytes(queue), 0, durable ? 1 : 0, 0, 0, enc.table(arguments));
  const amqp_rpc_reply_t r = amqp_get_rpc_reply(conn_);
  if (r.reply_type == AMQP_RESPONSE_NORMAL) return 0;
  int code = -1;
  if (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION && r.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
    code = static_cast<const amqp_channel_close_t*>(r.reply.decoded)->reply_code;
    amqp_channel_close_ok_t ok{};
    amqp_send_method(conn_, channel_, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
    open_channel();
  }
  return code;
}

void RawClient::publish(const std::string& queue, const std::string& body, const RawProperties& p,
                        bool confirm) {
  if (confirm && !confirming_) {
    amqp_confirm_select(conn_, channel_);
    check("confirm.select");
    confirming_ = true;
  }
  Encoder enc;
  amqp_basic_properties_t props{};
  const auto set = [&](const std::optional<std::string>& v, amqp_bytes_t& field,
                       amqp_flags_t flag) {
    if (!v) return;
    field = enc.keep(*v);
    props._flags |= flag;
  };
  set(p.content_type, props.content_type, AMQP_BASIC_CONTENT_TYPE_FLAG);
  set(p.content_encoding, props.content_encoding, AMQP_BASIC_CONTENT_ENCODING_FLAG);
  set(p.type, props.type, AMQP_BASIC_TYPE_FLAG);
  set(p.message_id, props.message_id, AMQP_BASIC_MESSAGE_ID_FLAG);
  set(p.correlation_id, props.correlation_id, AMQP_BASIC_CORRELATION_ID_FLAG);
  set(p.app_id, props.app_id, AMQP_BASIC_APP_ID_FLAG);
  set(p.reply_to, props.reply_to, AMQP_BASIC_REPLY_TO_FLAG);
  set(p.expiration, props.expiration, AMQP_BASIC_EXPIRATION_FLAG);
  set(p.user_id, props.user_id, AMQP_BASIC_USER_ID_FLAG);
  if (p.delivery_mode) {
    props.delivery_mode = *p.delivery_mode;
    props._flags |= AMQP_BASIC_DELIVERY_MODE_FLAG;
  }
  if (p.priority) {
    props.priority = *p.priority;
    props._flags |= AMQP_BASIC_PRIORITY_FLAG;
  }
  if (p.timestamp) {
    props.timestamp = *p.timestamp;
    props._flags |= AMQP_BASIC_TIMESTAMP_FLAG;
  }
  if (p.headers) {
    props.headers = enc.table(*p.headers);
    props._flags |= AMQP_BASIC_HEADERS_FLAG;
  }
  if (amqp_basic_publish(conn_, channel_, amqp_empty_bytes, bytes(queue), 0, 0, &props,
                         bytes(body)) != 0) {
    throw std::runtime_error("RawClient: basic.publish failed");
  }
  if (!confirm) return;
  ++published_;
  for (;;) {
    amqp_frame_t frame{};
    if (amqp_simple_wait_frame(conn_, &frame) != 0) throw std::runtime_error("RawClient: lost");
    if (frame.frame_type != AMQP_FRAME_METHOD) continue;
    if (frame.payload.method.id == AMQP_BASIC_ACK_METHOD) {
      const auto* a = static_cast<const amqp_basic_ack_t*>(frame.payload.method.decoded);
      if (a->delivery_tag >= published_) return;
    } else if (frame.payload.method.id == AMQP_BASIC_NACK_METHOD) {
      throw std::runtime_error("RawClient: publish nacked");
    } else if (frame.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD) {
      throw std::runtime_error("RawClient: channel closed while publishing");
    }
  }
}

std::optional<RawMessage> RawClient::get(const std::string& queue, bool ack) {
  const amqp_rpc_reply_t r = amqp_basic_get(conn_, channel_, bytes(queue), 0);
  if (r.reply_type != AMQP_RESPONSE_NORMAL) check("basic.get " + queue);
  if (r.reply.id != AMQP_BASIC_GET_OK_METHOD) return std::nullopt;
  const auto* ok = static_cast<const amqp_basic_get_ok_t*>(r.reply.decoded);
  RawMessage m;
  m.delivery_tag = ok->delivery_tag;
  m.redelivered = ok->redelivered != 0;
  amqp_message_t msg{};
  if (amqp_read_message(conn_, channel_, &msg, 0).reply_type != AMQP_RESPONSE_NORMAL) {
    throw std::runtime_error("RawClient: reading a message failed");
  }
  m.body = text(msg.body);
  const amqp_basic_properties_t& p = msg.properties;
  const auto get_s = [&](amqp_flags_t flag, amqp_bytes_t v) {
    return (p._flags & flag) != 0 ? std::optional<std::string>(text(v)) : std::nullopt;
  };
  m.properties.content_type = get_s(AMQP_BASIC_CONTENT_TYPE_FLAG, p.content_type);
  m.properties.content_encoding = get_s(AMQP_BASIC_CONTENT_ENCODING_FLAG, p.content_encoding);
  m.properties.type = get_s(AMQP_BASIC_TYPE_FLAG, p.type);
  m.properties.message_id = get_s(AMQP_BASIC_MESSAGE_ID_FLAG, p.message_id);
  m.properties.correlation_id = get_s(AMQP_BASIC_CORRELATION_ID_FLAG, p.correlation_id);
  m.properties.app_id = get_s(AMQP_BASIC_APP_ID_FLAG, p.app_id);
  m.properties.reply_to = get_s(AMQP_BASIC_REPLY_TO_FLAG, p.reply_to);
  m.properties.expiration = get_s(AMQP_BASIC_EXPIRATION_FLAG, p.expiration);
  m.properties.user_id = get_s(AMQP_BASIC_USER_ID_FLAG, p.user_id);
  if ((p._flags & AMQP_BASIC_DELIVERY_MODE_FLAG) != 0) m.properties.delivery_mode = p.delivery_mode;
  if ((p._flags & AMQP_BASIC_PRIORITY_FLAG) != 0) m.properties.priority = p.priority;
  if ((p._flags & AMQP_BASIC_TIMESTAMP_FLAG) != 0) m.properties.timestamp = p.timestamp;
  if ((p._flags & AMQP_BASIC_HEADERS_FLAG) != 0) {
    for (int k = 0; k < p.headers.num_entries; ++k) {
      const amqp_table_entry_t& e = p.headers.entries[k];
      m.headers.emplace_back(text(e.key), static_cast<char>(e.value.kind), shown(e.value));
    }
  }
  amqp_destroy_message(&msg);
  if (ack) this->ack(m.delivery_tag);
  return m;
}

void RawClient::ack(std::uint64_t tag) {
  if (amqp_basic_ack(conn_, channel_, tag, 0) != 0) throw std::runtime_error("RawClient: ack");
}

void RawClient::purge(const std::string& queue) {
  amqp_queue_purge(conn_, channel_, bytes(queue));
  check("queue.purge " + queue);
}

void RawClient::delete_queue(const std::string& queue) {
  amqp_queue_delete(conn_, channel_, bytes(queue), 0, 0);
  check("queue.delete " + queue);
}

std::optional<std::uint32_t> RawClient::message_count(const std::string& queue) {
  const auto* ok = amqp_queue_declare(conn_, channel_, bytes(queue), 1, 0, 0, 0, amqp_empty_table);
  const amqp_rpc_reply_t r = amqp_get_rpc_reply(conn_);
  if (r.reply_type == AMQP_RESPONSE_NORMAL) return ok->message_count;
  if (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION && r.reply.id == AMQP_CHANNEL_CLOSE_METHOD &&
      static_cast<const amqp_channel_close_t*>(r.reply.decoded)->reply_code == AMQP_NOT_FOUND) {
    amqp_channel_close_ok_t okc{};
    amqp_send_method(conn_, channel_, AMQP_CHANNEL_CLOSE_OK_METHOD, &okc);
    open_channel();
    return std::nullopt;
  }
  check("passive queue.declare " + queue);
  return std::nullopt;
}

}  // namespace babelqueue::amqp::test
