// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The connection side of the RabbitMQ transport: every rabbitmq-c call happens here, with the
// transport's connection mutex held.

#include "session.hpp"

#include <babelqueue/spi/text.hpp>

#include <amqp_ssl_socket.h>
#include <amqp_tcp_socket.h>

#include <sys/time.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include "options.hpp"

namespace babelqueue::amqp::detail {

using spi::quoted;

// ---- Board ----

void Board::signal(Queue& q) {
  if (q.waker < 0 || q.signalled) return;
  q.signalled = true;
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(q.waker, &one, sizeof one);
}

void Board::signal_all() {
  for (auto& [name, q] : queues_)
    signal(q);
}

void Board::deliver(Delivery d) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = queues_.find(d.queue);
  if (it == queues_.end()) it = queues_.emplace(d.queue, Queue{}).first;
  if (d.handle.generation == generation_) outstanding_.insert(d.handle.tag);
  it->second.ready.push_back(std::move(d));
  // A waiting pop starts on the first delivery of a burst while the rest is still being read.
  signal(it->second);
}

void Board::outstanding(const Handle& handle) {
  std::lock_guard<std::mutex> lock(mu_);
  if (handle.generation == generation_) outstanding_.insert(handle.tag);
}

bool Board::is_outstanding(const Handle& handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  return handle.generation == generation_ && outstanding_.contains(handle.tag);
}

bool Board::settle(const Handle& handle) {
  std::lock_guard<std::mutex> lock(mu_);
  return handle.generation == generation_ && outstanding_.erase(handle.tag) == 1;
}

void Board::consumer_started(const std::string& queue) {
  std::lock_guard<std::mutex> lock(mu_);
  Queue& q = queues_[queue];
  q.consuming = true;
  q.lost.reset();
}

void Board::consumer_ended(const std::string& queue, const Error& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = queues_.find(queue);
    if (it == queues_.end()) return;
    it->second.consuming = false;
    it->second.lost = unshared(why);
    signal(it->second);
  }
}

void Board::channel_lost(const Error& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    outstanding_.clear();
    for (auto& [name, q] : queues_) {
      q.ready.clear();
      if (q.consuming) {
        q.consuming = false;
        q.lost = unshared(why);
      }
    }
    signal_all();
  }
}

void Board::set_generation(std::uint64_t generation) {
  std::lock_guard<std::mutex> lock(mu_);
  generation_ = generation;
  outstanding_.clear();
}

void Board::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    signal_all();
  }
  cv_.notify_all();
}

Board::Take Board::try_take(const std::string& queue, int waker, std::optional<Delivery>& out,
                            std::optional<Error>& lost) {
  std::lock_guard<std::mutex> lock(mu_);
  Queue& q = queues_[queue];
  q.waker = -1;
  if (closed_) return Take::Closed;
  if (!q.ready.empty()) {
    out.emplace(std::move(q.ready.front()));
    q.ready.pop_front();
    return Take::Delivered;
  }
  if (q.lost) {
    lost = std::move(q.lost);
    q.lost.reset();
    return Take::Lost;
  }
  if (!q.consuming) return Take::NotConsuming;
  q.waker = waker;
  q.signalled = false;
  return Take::Empty;
}

void Board::forget(const std::string& queue) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = queues_.find(queue); it != queues_.end()) it->second.waker = -1;
}

bool Board::sleep_until(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_until(lock, deadline, [this] { return closed_; });
  return !closed_;
}

// ---- Session ----

namespace {

std::atomic<std::uint64_t> g_generation{0};

std::string text_of(amqp_bytes_t b) {
  return b.len == 0 ? std::string() : std::string(static_cast<const char*>(b.bytes), b.len);
}

timeval timeval_of(std::chrono::milliseconds d) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(d.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((d.count() % 1000) * 1000);
  return tv;
}

// "406 PRECONDITION_FAILED - inequivalent arg ..." from a channel.close or connection.close.
std::string reply_text(std::uint16_t code, amqp_bytes_t text) {
  return std::to_string(code) + " " + text_of(text);
}

// A channel exception (e.g. a 406 for one queue's declare) also ends the pending confirms and
// the consumers of the other queues on that channel: they did nothing wrong, so to them the
// loss is transient, as their next call opens a new channel (AMQP-3).
Error for_the_others(const Error& why) {
  if (why.code() != ErrorCode::Transport || why.is_transient()) return why;
  return TransportError(std::string("amqp: the channel closed under this call (") + why.what() +
                        "); the next call opens a new one");
}

amqp_table_entry_t bool_entry(const char* key, bool value) {
  amqp_table_entry_t e{};
  e.key = amqp_cstring_bytes(key);
  e.value.kind = AMQP_FIELD_KIND_BOOLEAN;
  e.value.value.boolean = value ? 1 : 0;
  return e;
}

}  // namespace

Session::Session(const Options& options, Board& board) : options_(options), board_(board) {}

Session::~Session() {
  shutdown();
}

int Session::fd() const {
  return conn_ == nullptr ? -1 : amqp_get_sockfd(conn_);
}

std::chrono::milliseconds Session::poll_interval() const {
  constexpr std::chrono::milliseconds kMax{1000};
  if (conn_ == nullptr) return kMax;
  const int heartbeat = amqp_get_heartbeat(conn_);
  if (heartbeat <= 0) return kMax;
  return std::min(kMax, std::chrono::milliseconds(heartbeat * 1000 / 4));
}

std::string holding_queue(const Options& options, std::string_view queue,
                          std::chrono::milliseconds delay) {
  return std::string(queue) + options.delay_queue_infix + std::to_string(delay.count());
}

void Session::connect() {
  if (conn_ != nullptr) return;
  if (shut_down_) throw ClosedError("amqp transport: closed");
  const std::string where = options_.host + ":" + std::to_string(effective_port(options_));
  conn_ = amqp_new_connection();
  if (conn_ == nullptr) throw TransportError("amqp: out of memory creating a connection");
  amqp_socket_t* socket = nullptr;
  if (options_.tls.enabled) {
    socket = amqp_ssl_socket_new(conn_);
    if (socket != nullptr) {
      const TlsOptions& tls = options_.tls;
      int rc = AMQP_STATUS_OK;
      if (!tls.ca_file.empty()) rc = amqp_ssl_socket_set_cacert(socket, tls.ca_file.c_str());
      if (rc == AMQP_STATUS_OK && !tls.cert_file.empty()) {
        rc = amqp_ssl_socket_set_key(socket, tls.cert_file.c_str(), tls.key_file.c_str());
      }
      if (rc != AMQP_STATUS_OK) {
        amqp_destroy_connection(conn_);
        conn_ = nullptr;
        throw ConfigError("amqp: cannot load the TLS files (ca " + quoted(tls.ca_file) + ", cert " +
                          quoted(tls.cert_file) + "): " + amqp_error_string2(rc));
      }
      amqp_ssl_socket_set_verify_peer(socket, tls.verify_peer ? 1 : 0);
      amqp_ssl_socket_set_verify_hostname(socket, tls.verify_hostname ? 1 : 0);
    }
  } else {
    socket = amqp_tcp_socket_new(conn_);
  }
  if (socket == nullptr) {
    amqp_destroy_connection(conn_);
    conn_ = nullptr;
    throw TransportError("amqp: cannot create a socket");
  }
  const timeval timeout = timeval_of(options_.connect_timeout);
  const int rc =
      amqp_socket_open_noblock(socket, options_.host.c_str(), effective_port(options_), &timeout);
  if (rc != AMQP_STATUS_OK) {
    amqp_destroy_connection(conn_);
    conn_ = nullptr;
    throw TransportError("amqp: cannot connect to " + where + ": " + amqp_error_string2(rc));
  }
  amqp_set_handshake_timeout(conn_, &timeout);
  amqp_set_rpc_timeout(conn_, &timeout);

  // consumer_cancel_notify: a deleted queue cancels our consumer instead of silencing it.
  amqp_table_entry_t caps[] = {bool_entry("consumer_cancel_notify", true),
                               bool_entry("connection.blocked", true)};
  amqp_table_entry_t props[2]{};
  props[0].key = amqp_cstring_bytes("capabilities");
  props[0].value.kind = AMQP_FIELD_KIND_TABLE;
  props[0].value.value.table = amqp_table_t{2, caps};
  props[1].key = amqp_cstring_bytes("connection_name");
  props[1].value.kind = AMQP_FIELD_KIND_UTF8;
  props[1].value.value.bytes = amqp_cstring_bytes("babelqueue-cpp");
  const amqp_table_t client_properties{2, props};
  const int heartbeat = options_.heartbeat ? static_cast<int>(options_.heartbeat->count())
                                           : std::numeric_limits<std::uint16_t>::max();
  const amqp_rpc_reply_t reply = amqp_login_with_properties(
      conn_, options_.vhost.c_str(), 0, AMQP_DEFAULT_FRAME_SIZE, heartbeat, &client_properties,
      AMQP_SASL_METHOD_PLAIN, options_.user.c_str(), options_.password.c_str());
  if (reply.reply_type == AMQP_RESPONSE_NORMAL) {
    ++connection_id_;
    return;
  }

  std::string why;
  bool refused = false;
  if (reply.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION &&
      reply.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
    const auto* close = static_cast<const amqp_connection_close_t*>(reply.reply.decoded);
    why = reply_text(close->reply_code, close->reply_text);
    refused = close->reply_code == AMQP_ACCESS_REFUSED || close->reply_code == AMQP_NOT_ALLOWED;
  } else if (reply.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION) {
    why = amqp_error_string2(reply.library_error);
  } else {
    why = "unexpected reply to the handshake";
  }
  amqp_destroy_connection(conn_);
  conn_ = nullptr;
  if (refused) {
    throw ConfigError("amqp: " + where + " refused user " + quoted(options_.user) + " on vhost " +
                      quoted(options_.vhost) + ": " + why);
  }
  throw TransportError("amqp: login to " + where + " failed: " + why);
}

void Session::open(Channel& ch) {
  connect();
  amqp_channel_open(conn_, ch.id);
  check(amqp_get_rpc_reply(conn_), nullptr, "channel.open");
  ch.open = true;
  ch.declared.clear();
  ch.generation = ++g_generation;
  if (&ch == &publish_ && options_.publisher_confirms) {
    amqp_confirm_select(conn_, ch.id);
    check(amqp_get_rpc_reply(conn_), &ch, "confirm.select");
  }
  if (&ch == &consume_) {
    unacked_.clear();
    if (options_.consume_mode == ConsumeMode::Push) {
      amqp_basic_qos(conn_, ch.id, 0, static_cast<std::uint16_t>(options_.prefetch), 0);
      check(amqp_get_rpc_reply(conn_), &ch, "basic.qos");
    }
    board_.set_generation(ch.generation);
  }
}

Session::Channel& Session::ready(Channel& ch) {
  if (conn_ == nullptr || !ch.open) open(ch);
  return ch;
}

void Session::declare(Channel& ch, std::string_view queue,
                      const std::optional<std::pair<std::string, std::int64_t>>& holding_for) {
  if (ch.declared.contains(queue)) return;
  std::vector<amqp_table_entry_t> args;
  if (holding_for) {
    amqp_table_entry_t ttl{};
    ttl.key = amqp_cstring_bytes("x-message-ttl");
    ttl.value.kind = AMQP_FIELD_KIND_I64;
    ttl.value.value.i64 = holding_for->second;
    amqp_table_entry_t exchange{};
    exchange.key = amqp_cstring_bytes("x-dead-letter-exchange");
    exchange.value.kind = AMQP_FIELD_KIND_UTF8;
    exchange.value.value.bytes = amqp_empty_bytes;
    amqp_table_entry_t key{};
    key.key = amqp_cstring_bytes("x-dead-letter-routing-key");
    key.value.kind = AMQP_FIELD_KIND_UTF8;
    key.value.value.bytes = bytes_of(holding_for->first);
    args = {ttl, exchange, key};
  } else if (options_.declare == DeclareMode::Quorum) {
    amqp_table_entry_t type{};
    type.key = amqp_cstring_bytes("x-queue-type");
    type.value.kind = AMQP_FIELD_KIND_UTF8;
    type.value.value.bytes = amqp_cstring_bytes("quorum");
    args = {type};
  }
  const bool passive = !holding_for && options_.declare == DeclareMode::Passive;
  const amqp_table_t table{static_cast<int>(args.size()), args.empty() ? nullptr : args.data()};
  amqp_queue_declare(conn_, ch.id, bytes_of(queue), passive ? 1 : 0, 1, 0, 0, table);
  check(amqp_get_rpc_reply(conn_), &ch,
        std::string(passive ? "passive " : "") + "queue.declare of " + quoted(queue));
  ch.declared.emplace(queue);
}

void Session::check_status(int status, const std::string& what) {
  if (status != AMQP_STATUS_OK) lost(what + ": " + amqp_error_string2(status));
}

void Session::check(const amqp_rpc_reply_t& reply, Channel* ch, const std::string& what) {
  switch (reply.reply_type) {
    case AMQP_RESPONSE_NORMAL:
      return;
    case AMQP_RESPONSE_LIBRARY_EXCEPTION:
      lost(what + ": " + amqp_error_string2(reply.library_error));
    case AMQP_RESPONSE_SERVER_EXCEPTION:
      if (reply.reply.id == AMQP_CHANNEL_CLOSE_METHOD && ch != nullptr) {
        const auto* close = static_cast<const amqp_channel_close_t*>(reply.reply.decoded);
        const Error error = TransportError(
            "amqp: " + what + " failed: " + reply_text(close->reply_code, close->reply_text),
            false);
        amqp_channel_close_ok_t ok{};
        amqp_send_method(conn_, ch->id, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
        channel_closed(*ch, error);
        throw error;
      }
      if (reply.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
        const auto* close = static_cast<const amqp_connection_close_t*>(reply.reply.decoded);
        const std::string text = reply_text(close->reply_code, close->reply_text);
        amqp_connection_close_ok_t ok{};
        amqp_send_method(conn_, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
        lost(what + ": the broker closed the connection: " + text);
      }
      lost(what + ": unexpected reply method " + std::to_string(reply.reply.id));
    case AMQP_RESPONSE_NONE:
      break;
  }
  lost(what + ": no reply");
}

void Session::lost(const std::string& why) {
  const TransportError error("amqp: " + why);
  drop_connection(error);
  throw error;
}

void Session::drop_connection(const Error& why) {
  if (conn_ == nullptr) return;
  channel_closed(publish_, why);
  channel_closed(consume_, why);
  channel_closed(inspect_, why);
  amqp_destroy_connection(conn_);
  conn_ = nullptr;
}

void Session::channel_closed(Channel& ch, const Error& why) {
  const bool was_open = ch.open;
  ch.open = false;
  ch.declared.clear();
  const Error others = for_the_others(why);
  if (&ch == &publish_) {
    for (const std::shared_ptr<Completion>& waiter : confirms_.reset())
      waiter->set(others);
  }
  if (&ch == &consume_ && was_open) {
    consumer_queue_.clear();
    content_.reset();
    board_.channel_lost(others);
  }
}

void Session::publish(PublishJob& job) {
  try {
    Channel& ch = ready(publish_);
    declare(ch, job.queue);
    std::string holding;
    if (job.delay) {
      holding = holding_queue(options_, job.queue, *job.delay);
      declare(ch, holding,
              std::pair(std::string(job.queue), static_cast<std::int64_t>(job.delay->count())));
    }
    const std::string_view target = job.delay ? std::string_view(holding) : job.queue;
    const amqp_bytes_t routing_key = bytes_of(target);
    for (const Outgoing& m : job.messages) {
      const int status = amqp_basic_publish(conn_, ch.id, amqp_empty_bytes, routing_key, 0, 0,
                                            m.properties->get(), bytes_of(m.body));
      if (status != AMQP_STATUS_OK) check_status(status, "basic.publish to " + quoted(target));
    }
    if (options_.publisher_confirms && !job.messages.empty()) {
      confirms_.add(job.messages.size(), job.done);
    } else {
      job.done->set(Status());
    }
  } catch (const Error& e) {
    job.done->set(e);
  } catch (const std::exception& e) {
    job.done->set(TransportError(std::string("amqp: publish failed: ") + e.what()));
  }
}

void Session::start_consumer(const std::string& queue) {
  Channel& ch = ready(consume_);
  declare(ch, queue);
  const auto* ok = amqp_basic_consume(conn_, ch.id, bytes_of(queue), amqp_empty_bytes, 0, 0, 0,
                                      amqp_empty_table);
  check(amqp_get_rpc_reply(conn_), &ch, "basic.consume of " + quoted(queue));
  consumer_queue_[text_of(ok->consumer_tag)] = queue;
  board_.consumer_started(queue);
}

std::optional<Delivery> Session::get(const std::string& queue) {
  Channel& ch = ready(consume_);
  declare(ch, queue);
  const amqp_rpc_reply_t reply = amqp_basic_get(conn_, ch.id, bytes_of(queue), 0);
  check(reply, &ch, "basic.get from " + quoted(queue));
  if (reply.reply.id != AMQP_BASIC_GET_OK_METHOD) return std::nullopt;
  const auto* ok = static_cast<const amqp_basic_get_ok_t*>(reply.reply.decoded);
  const std::uint64_t tag = ok->delivery_tag;
  const bool redelivered = ok->redelivered != 0;
  // Frames rabbitmq-c queued during the call came before the get-ok: they complete the pushed
  // deliveries of the channel (content frames of one message are never split by another
  // method), so its own content comes next, through the same reassembly.
  handle_until([this] { return !amqp_frames_enqueued(conn_); }, "basic.get from " + quoted(queue));
  Content c;
  c.for_get = true;
  c.delivery.queue = queue;
  c.delivery.handle = Handle{ch.generation, tag};
  c.delivery.redelivered = redelivered;
  content_ = std::move(c);
  got_.reset();
  handle_until([this] { return !content_ || !content_->for_get; },
               "reading the message from " + quoted(queue));
  std::optional<Delivery> d = std::move(got_);
  got_.reset();
  if (!d)
    throw TransportError("amqp: the channel closed while reading the message from " +
                         quoted(queue));
  board_.outstanding(d->handle);
  return d;
}

template <class Done>
void Session::handle_until(Done done, const std::string& what) {
  timeval timeout = timeval_of(options_.connect_timeout);
  while (conn_ != nullptr && !done()) {
    amqp_frame_t frame{};
    const int rc = amqp_simple_wait_frame_noblock(conn_, &frame, &timeout);
    if (rc != AMQP_STATUS_OK) lost(what + ": " + amqp_error_string2(rc));
    handle(frame);
  }
  if (conn_ == nullptr) throw TransportError("amqp: " + what + ": the connection was lost");
}

void Session::ack(const std::vector<Handle>& handles) {
  if (conn_ == nullptr || !consume_.open) return;
  std::vector<std::uint64_t> tags;
  tags.reserve(handles.size());
  for (const Handle& h : handles) {
    if (h.generation == consume_.generation && unacked_.erase(h.tag) == 1) tags.push_back(h.tag);
  }
  const std::uint64_t low =
      unacked_.empty() ? std::numeric_limits<std::uint64_t>::max() : *unacked_.begin();
  std::uint64_t multiple = 0;
  for (const std::uint64_t tag : tags) {
    if (tag < low) {
      multiple = std::max(multiple, tag);
    } else {
      check_status(amqp_basic_ack(conn_, consume_.id, tag, 0), "basic.ack");
    }
  }
  if (multiple != 0) check_status(amqp_basic_ack(conn_, consume_.id, multiple, 1), "basic.ack");
}

bool Session::not_found(const amqp_rpc_reply_t& reply, Channel& ch) {
  if (reply.reply_type != AMQP_RESPONSE_SERVER_EXCEPTION ||
      reply.reply.id != AMQP_CHANNEL_CLOSE_METHOD ||
      static_cast<const amqp_channel_close_t*>(reply.reply.decoded)->reply_code != AMQP_NOT_FOUND) {
    return false;
  }
  try {
    check(reply, &ch, "");
  } catch (const Error&) {  // the 404 closed the channel: the next call opens a new one
  }
  return true;
}

QueueStats Session::stats(const std::string& queue, const std::string& dead_letter_queue) {
  const auto depth = [this](const std::string& name) -> std::optional<amqp_queue_declare_ok_t> {
    Channel& ch = ready(inspect_);
    const auto* ok = amqp_queue_declare(conn_, ch.id, bytes_of(name), 1, 0, 0, 0, amqp_empty_table);
    const amqp_rpc_reply_t reply = amqp_get_rpc_reply(conn_);
    if (not_found(reply, ch)) return std::nullopt;
    check(reply, &ch, "passive queue.declare of " + quoted(name));
    return *ok;
  };
  const auto main = depth(queue);
  QueueStats s;
  s.ready = main ? main->message_count : 0;
  s.consumers = main ? main->consumer_count : 0;
  if (!main) s.details.emplace_back("queue", quoted(queue) + " not declared");
  const auto dlq = depth(dead_letter_queue);
  s.dead_letter = dlq ? dlq->message_count : 0;
  if (!dlq)
    s.details.emplace_back("dead-letter queue", quoted(dead_letter_queue) + " not declared");
  return s;
}

std::vector<PeekedMessage> Session::peek(const std::string& queue, std::size_t max) {
  Channel& ch = ready(inspect_);
  std::vector<PeekedMessage> out;
  for (;;) {
    if (max != 0 && out.size() >= max) break;
    const amqp_rpc_reply_t reply = amqp_basic_get(conn_, ch.id, bytes_of(queue), 0);
    if (not_found(reply, ch)) return out;  // no such queue: nothing to peek
    check(reply, &ch, "basic.get from " + quoted(queue));
    if (reply.reply.id != AMQP_BASIC_GET_OK_METHOD) break;
    amqp_message_t message{};
    check(amqp_read_message(conn_, ch.id, &message, 0), &ch,
          "reading the message from " + quoted(queue));
    Delivery d = delivery_from(queue, 0, false, message.properties, text_of(message.body));
    amqp_destroy_message(&message);
    out.push_back(PeekedMessage{std::move(d.body), std::move(d.headers)});
  }
  // Closing the channel hands every message it got back to the queue, in place.
  check(amqp_channel_close(conn_, ch.id, AMQP_REPLY_SUCCESS), nullptr, "channel.close");
  ch.open = false;
  amqp_maybe_release_buffers(conn_);
  return out;
}

Delivery Session::delivery_from(const std::string& queue, std::uint64_t tag, bool redelivered,
                                const amqp_basic_properties_t& props, std::string body) const {
  Delivery d;
  d.queue = queue;
  d.body = std::move(body);
  d.handle = Handle{consume_.generation, tag};
  d.redelivered = redelivered;
  if ((props._flags & AMQP_BASIC_HEADERS_FLAG) != 0) {
    d.headers = stringify_headers(props.headers);
    if (const auto it = d.headers.find("x-delivery-count"); it != d.headers.end()) {
      std::int64_t count = 0;
      const auto r =
          std::from_chars(it->second.data(), it->second.data() + it->second.size(), count);
      if (r.ec == std::errc() && count >= 0 && count < std::numeric_limits<std::int64_t>::max())
        d.delivery_count = count + 1;
    }
  }
  return d;
}

void Session::pump(Read read) {
  timeval zero{};
  bool may_read = read != Read::Buffered;
  while (conn_ != nullptr) {
    const bool buffered = amqp_frames_enqueued(conn_) != 0 || amqp_data_in_buffer(conn_) != 0;
    if (!buffered) {
      if (!may_read) return;
      if (read == Read::Once) may_read = false;
    }
    amqp_frame_t frame{};
    const int rc = amqp_simple_wait_frame_noblock(conn_, &frame, &zero);
    if (rc == AMQP_STATUS_TIMEOUT) return;
    if (rc != AMQP_STATUS_OK) {
      drop_connection(
          TransportError(std::string("amqp: connection lost: ") + amqp_error_string2(rc)));
      return;
    }
    try {
      handle(frame);
    } catch (const Error&) {
      return;  // the connection was dropped and everyone waiting was told
    }
    if (conn_ != nullptr) amqp_maybe_release_buffers(conn_);
  }
}

void Session::handle(const amqp_frame_t& frame) {
  switch (frame.frame_type) {
    case AMQP_FRAME_METHOD:
      handle_method(frame);
      return;
    case AMQP_FRAME_HEADER:
      if (!content_ || content_->have_header || frame.channel != consume_.id) return;
      content_->have_header = true;
      content_->size = frame.payload.properties.body_size;
      if (!content_->discard) {
        const auto* props =
            static_cast<const amqp_basic_properties_t*>(frame.payload.properties.decoded);
        const Delivery& pending = content_->delivery;
        content_->delivery = delivery_from(pending.queue, pending.handle.tag, pending.redelivered,
                                           *props, std::string());
        content_->delivery.body.reserve(content_->size);
      }
      if (content_->size == 0) finish_content();
      return;
    case AMQP_FRAME_BODY: {
      if (!content_ || !content_->have_header || frame.channel != consume_.id) return;
      const amqp_bytes_t fragment = frame.payload.body_fragment;
      if (!content_->discard) {
        content_->delivery.body.append(static_cast<const char*>(fragment.bytes), fragment.len);
      }
      content_->size -= std::min<std::uint64_t>(content_->size, fragment.len);
      if (content_->size == 0) finish_content();
      return;
    }
    default:
      return;
  }
}

void Session::finish_content() {
  if (!content_->discard) {
    unacked_.insert(content_->delivery.handle.tag);
    if (content_->for_get) {
      got_ = std::move(content_->delivery);
    } else {
      board_.deliver(std::move(content_->delivery));
    }
  }
  content_.reset();
}

void Session::handle_method(const amqp_frame_t& frame) {
  const amqp_method_t& method = frame.payload.method;
  switch (method.id) {
    case AMQP_BASIC_DELIVER_METHOD: {
      const auto* m = static_cast<const amqp_basic_deliver_t*>(method.decoded);
      Content c;
      const auto it = consumer_queue_.find(text_of(m->consumer_tag));
      c.discard = it == consumer_queue_.end();
      if (!c.discard) c.delivery.queue = it->second;
      c.delivery.handle = Handle{consume_.generation, m->delivery_tag};
      c.delivery.redelivered = m->redelivered != 0;
      content_ = std::move(c);
      return;
    }
    case AMQP_BASIC_RETURN_METHOD: {
      Content c;
      c.discard = true;
      content_ = std::move(c);
      return;
    }
    case AMQP_BASIC_ACK_METHOD:
    case AMQP_BASIC_NACK_METHOD: {
      std::uint64_t tag = 0;
      bool multiple = false;
      const bool nack = method.id == AMQP_BASIC_NACK_METHOD;
      if (nack) {
        const auto* m = static_cast<const amqp_basic_nack_t*>(method.decoded);
        tag = m->delivery_tag;
        multiple = m->multiple != 0;
      } else {
        const auto* m = static_cast<const amqp_basic_ack_t*>(method.decoded);
        tag = m->delivery_tag;
        multiple = m->multiple != 0;
      }
      confirms_.settle_into(tag, multiple, nack, settled_);
      for (auto& done : settled_) {
        if (done.nacked) {
          done.waiter->set(TransportError("amqp: the broker nacked the publish (not stored)"));
        } else {
          done.waiter->set(Status());
        }
      }
      settled_.clear();  // the waiters' references go now, not at the next confirm
      return;
    }
    case AMQP_BASIC_CANCEL_METHOD: {
      const auto* m = static_cast<const amqp_basic_cancel_t*>(method.decoded);
      const auto it = consumer_queue_.find(text_of(m->consumer_tag));
      if (it == consumer_queue_.end()) return;
      const std::string queue = it->second;
      consumer_queue_.erase(it);
      consume_.declared.erase(queue);
      board_.consumer_ended(queue, TransportError("amqp: the broker cancelled the consumer of " +
                                                  quoted(queue) + " (queue deleted?)"));
      return;
    }
    case AMQP_CHANNEL_CLOSE_METHOD: {
      const auto* m = static_cast<const amqp_channel_close_t*>(method.decoded);
      const TransportError error("amqp: the broker closed channel " +
                                 std::to_string(frame.channel) + ": " +
                                 reply_text(m->reply_code, m->reply_text));
      amqp_channel_close_ok_t ok{};
      amqp_send_method(conn_, frame.channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
      for (Channel* ch : {&publish_, &consume_, &inspect_}) {
        if (ch->id == frame.channel) channel_closed(*ch, error);
      }
      return;
    }
    case AMQP_CONNECTION_CLOSE_METHOD: {
      const auto* m = static_cast<const amqp_connection_close_t*>(method.decoded);
      const std::string text = reply_text(m->reply_code, m->reply_text);
      amqp_connection_close_ok_t ok{};
      amqp_send_method(conn_, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
      lost("the broker closed the connection: " + text);
    }
    case AMQP_CONNECTION_BLOCKED_METHOD:
      log_to(options_.logger, LogLevel::Warning,
             "amqp: the broker blocked the connection (resource alarm): publishes wait");
      return;
    case AMQP_CONNECTION_UNBLOCKED_METHOD:
      log_to(options_.logger, LogLevel::Info, "amqp: the broker unblocked the connection");
      return;
    default:
      return;
  }
}

void Session::shutdown() {
  shut_down_ = true;
  if (conn_ == nullptr) return;
  const ClosedError closed("amqp transport: closed before the broker confirmed the publish");
  for (const std::shared_ptr<Completion>& waiter : confirms_.reset())
    waiter->set(closed);
  // connection.close closes every channel; a broker that does not answer gets 2 s, not the
  // connect timeout.
  const timeval timeout =
      timeval_of(std::min(options_.connect_timeout, std::chrono::milliseconds(2000)));
  amqp_set_rpc_timeout(conn_, &timeout);
  amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
  drop_connection(closed);
}

}  // namespace babelqueue::amqp::detail
