// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The raw rabbitmq-c baseline of `babelqueue bench transport --url amqp://...` (issue 9): the same
// patterns on plain rabbitmq-c, with bodies of the same size and the same basic.properties as the
// transport's projection (AMQP-12, AMQP-13), durable queues and persistent delivery.
//
//   publish1  publish, wait for its basic.ack (confirm window 1: `publish`)
//   publishN  publish --batch messages, wait for all their confirms (`publish_batch`)
//   consume   basic.qos(--prefetch) + basic.consume, basic.ack per message (one worker)
//   get       basic.get + basic.ack per message (the get mode)
//
// `--mode all` runs them in that order: publish1 fills one queue, publishN a second one, consume
// drains the first and get the second, as `bench transport` does. A single consume or get fills
// its queue untimed first, then waits --settle-ms: the node keeps working for about a second after
// the last confirm of a fill, and a drain of 50,000 started at once ran 2.4x slower here (median
// of 8) than one started 2 s later.
// Every pattern runs an untimed warm-up of min(--warmup, --messages) messages before it. The
// queues (raw-baseline-<pid>[-batch]) are deleted at the end; after a consume or get, a queue left
// non-empty is an error.
//
//   babelqueue_amqp_raw_baseline --port PORT --messages 20000 [--json]

#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_tcp_socket.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

namespace {

constexpr amqp_channel_t kChannel = 1;

struct Args {
  std::string host = "127.0.0.1";
  int port = 5672;
  long messages = 20'000;
  long size = 259;  // the bench envelope on queue bench-<8 hex> (265 on its -batch queue)
  std::string body_file;
  long batch = 16;  // kBenchBatch of tools/babelqueue/src/bench_transport.cpp
  long prefetch = 100;
  long ack_every = 1;
  long warmup = 1000;
  long settle_ms = 0;
  std::string mode = "all";
  bool json = false;
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(
      stderr,
      "raw_baseline: %s\n"
      "usage: babelqueue_amqp_raw_baseline [--host H] [--port P] [--messages N]\n"
      "  [--size BYTES | --body-file FILE] [--batch N] [--prefetch N] [--ack-every N]\n"
      "  [--warmup N] [--settle-ms MS] [--mode publish1|publishN|consume|get|all] [--json]\n"
      "--ack-every N acks every Nth delivery with multiple=true (default 1: each one).\n"
      "--settle-ms MS pauses between filling the queue and a single consume or get.\n",
      problem.c_str());
  std::exit(2);
}

long number(std::string_view name, const char* text, long min, long max) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < min || value > max) {
    usage(std::string(name) + " wants an integer in [" + std::to_string(min) + ", " +
          std::to_string(max) + "], not '" + text + "'");
  }
  return value;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view opt = argv[i];
    if (opt == "--json") {
      a.json = true;
      continue;
    }
    if (i + 1 >= argc) usage(std::string(opt) + " needs a value (or is unknown)");
    const char* v = argv[++i];
    if (opt == "--host") {
      a.host = v;
    } else if (opt == "--port") {
      a.port = static_cast<int>(number(opt, v, 1, 65535));
    } else if (opt == "--messages") {
      a.messages = number(opt, v, 1, 100'000'000);
    } else if (opt == "--size") {
      a.size = number(opt, v, 1, 100'000'000);
    } else if (opt == "--body-file") {
      a.body_file = v;
    } else if (opt == "--batch") {
      a.batch = number(opt, v, 1, 1'000'000);
    } else if (opt == "--prefetch") {
      a.prefetch = number(opt, v, 1, 65535);
    } else if (opt == "--ack-every") {
      a.ack_every = number(opt, v, 1, 65535);
    } else if (opt == "--settle-ms") {
      a.settle_ms = number(opt, v, 0, 600'000);
    } else if (opt == "--warmup") {
      a.warmup = number(opt, v, 0, 100'000'000);
    } else if (opt == "--mode") {
      a.mode = v;
      if (a.mode != "publish1" && a.mode != "publishN" && a.mode != "consume" && a.mode != "get" &&
          a.mode != "all") {
        usage("unknown mode '" + a.mode + "'");
      }
    } else {
      usage("unknown option " + std::string(opt));
    }
  }
  // The broker stops pushing at `prefetch` unacked deliveries: a larger ack interval would wait
  // forever.
  if (a.ack_every > a.prefetch) usage("--ack-every cannot exceed --prefetch");
  return a;
}

// A JSON object of exactly `size` bytes ({"pad":"xx..."}), or just as many 'x' when too small.
std::string make_body(const Args& a) {
  if (!a.body_file.empty()) {
    std::ifstream in(a.body_file, std::ios::binary);
    if (!in) usage("cannot read " + a.body_file);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  const auto size = static_cast<std::size_t>(a.size);
  const std::string_view open = R"({"pad":")";
  const std::string_view close = R"("})";
  if (size < open.size() + close.size()) return std::string(size, 'x');
  return std::string(open) + std::string(size - open.size() - close.size(), 'x') +
         std::string(close);
}

std::string describe(const amqp_rpc_reply_t& r) {
  switch (r.reply_type) {
    case AMQP_RESPONSE_NORMAL:
      return "ok";
    case AMQP_RESPONSE_NONE:
      return "no reply";
    case AMQP_RESPONSE_LIBRARY_EXCEPTION:
      return amqp_error_string2(r.library_error);
    case AMQP_RESPONSE_SERVER_EXCEPTION:
      break;
  }
  if (r.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
    const auto* m = static_cast<const amqp_channel_close_t*>(r.reply.decoded);
    return "channel closed " + std::to_string(m->reply_code) + " " +
           std::string(static_cast<const char*>(m->reply_text.bytes), m->reply_text.len);
  }
  if (r.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
    const auto* m = static_cast<const amqp_connection_close_t*>(r.reply.decoded);
    return "connection closed " + std::to_string(m->reply_code) + " " +
           std::string(static_cast<const char*>(m->reply_text.bytes), m->reply_text.len);
  }
  return "server method " + std::to_string(r.reply.id);
}

void check(const amqp_rpc_reply_t& r, const std::string& what) {
  if (r.reply_type != AMQP_RESPONSE_NORMAL) throw std::runtime_error(what + ": " + describe(r));
}

void check_status(int status, const std::string& what) {
  if (status != AMQP_STATUS_OK) throw std::runtime_error(what + ": " + amqp_error_string2(status));
}

amqp_bytes_t bytes_of(std::string_view s) {
  return {s.size(), const_cast<char*>(s.data())};
}

// The projection of the bench envelope: the same properties and header types, values of the
// same lengths (type = the URN, message_id = meta.id, correlation_id = trace_id).
class Properties {
 public:
  Properties() {
    entries_[0].key = amqp_cstring_bytes("x-attempts");
    entries_[0].value.kind = AMQP_FIELD_KIND_I32;
    entries_[0].value.value.i32 = 0;
    entries_[1].key = amqp_cstring_bytes("x-schema-version");
    entries_[1].value.kind = AMQP_FIELD_KIND_I32;
    entries_[1].value.value.i32 = 1;
    entries_[2].key = amqp_cstring_bytes("x-source-lang");
    entries_[2].value.kind = AMQP_FIELD_KIND_UTF8;
    entries_[2].value.value.bytes = amqp_cstring_bytes("cpp");
    props_._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_CONTENT_ENCODING_FLAG |
                    AMQP_BASIC_HEADERS_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG |
                    AMQP_BASIC_CORRELATION_ID_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG |
                    AMQP_BASIC_TYPE_FLAG | AMQP_BASIC_APP_ID_FLAG;
    props_.content_type = amqp_cstring_bytes("application/json");
    props_.content_encoding = amqp_cstring_bytes("utf-8");
    props_.headers = {static_cast<int>(entries_.size()), entries_.data()};
    props_.delivery_mode = 2;
    props_.correlation_id = amqp_cstring_bytes("ab6e8a50-55bf-4d5e-9aea-ba934d59f794");
    props_.message_id = amqp_cstring_bytes("f02cffb7-24dd-46f7-81fe-026fd5739f07");
    props_.type = amqp_cstring_bytes("urn:babel:orders:created");
    props_.app_id = amqp_cstring_bytes("babelqueue");
  }
  Properties(const Properties&) = delete;
  Properties& operator=(const Properties&) = delete;

  [[nodiscard]] const amqp_basic_properties_t* get() const { return &props_; }

 private:
  std::array<amqp_table_entry_t, 3> entries_{};
  amqp_basic_properties_t props_{};
};

// One connection, one channel in confirm mode; the patterns run on it one after the other.
class Client {
 public:
  Client(const Args& a, std::string body) : args_(a), body_(std::move(body)) {
    conn_ = amqp_new_connection();
    amqp_socket_t* socket = amqp_tcp_socket_new(conn_);
    if (socket == nullptr) throw std::runtime_error("amqp_tcp_socket_new failed");
    check_status(amqp_socket_open(socket, a.host.c_str(), a.port),
                 "connect " + a.host + ":" + std::to_string(a.port));
    check(amqp_login(conn_, "/", 0, AMQP_DEFAULT_FRAME_SIZE, 0, AMQP_SASL_METHOD_PLAIN, "guest",
                     "guest"),
          "login");
    amqp_channel_open(conn_, kChannel);
    check(amqp_get_rpc_reply(conn_), "channel.open");
    amqp_confirm_select(conn_, kChannel);
    check(amqp_get_rpc_reply(conn_), "confirm.select");
  }
  ~Client() {
    amqp_channel_close(conn_, kChannel, AMQP_REPLY_SUCCESS);
    amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
    amqp_destroy_connection(conn_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Declares `queue` durable; its ready count.
  std::uint32_t declare(const std::string& queue, bool passive = false) {
    const amqp_queue_declare_ok_t* ok = amqp_queue_declare(
        conn_, kChannel, bytes_of(queue), passive ? 1 : 0, 1, 0, 0, amqp_empty_table);
    check(amqp_get_rpc_reply(conn_), "queue.declare " + queue);
    return ok->message_count;
  }

  void remove(const std::string& queue) {
    amqp_queue_delete(conn_, kChannel, bytes_of(queue), 0, 0);
    check(amqp_get_rpc_reply(conn_), "queue.delete " + queue);
  }

  // `n` publishes to `queue`; after every `window` of them (and after the last) waits until
  // the broker confirmed all published so far.
  void publish(const std::string& queue, long n, long window) {
    for (long i = 0; i < n; ++i) {
      check_status(amqp_basic_publish(conn_, kChannel, amqp_empty_bytes, bytes_of(queue), 0, 0,
                                      props_.get(), bytes_of(body_)),
                   "basic.publish");
      ++published_;
      if ((i + 1) % window == 0 || i + 1 == n) wait_confirms();
    }
  }

  // Drains `n` pushed deliveries of `queue`, then cancels the consumer.
  void consume(const std::string& queue, long n) {
    amqp_basic_qos(conn_, kChannel, 0, static_cast<std::uint16_t>(args_.prefetch), 0);
    check(amqp_get_rpc_reply(conn_), "basic.qos");
    const amqp_basic_consume_ok_t* ok = amqp_basic_consume(
        conn_, kChannel, bytes_of(queue), amqp_empty_bytes, 0, 0, 0, amqp_empty_table);
    check(amqp_get_rpc_reply(conn_), "basic.consume " + queue);
    const std::string tag(static_cast<const char*>(ok->consumer_tag.bytes), ok->consumer_tag.len);
    for (long i = 0; i < n; ++i) {
      amqp_maybe_release_buffers(conn_);
      amqp_envelope_t envelope;
      check(amqp_consume_message(conn_, &envelope, nullptr, 0), "consume");
      ack(envelope.delivery_tag, i + 1 == n);
      amqp_destroy_envelope(&envelope);
    }
    amqp_basic_cancel(conn_, kChannel, bytes_of(tag));
    check(amqp_get_rpc_reply(conn_), "basic.cancel");
  }

  // `n` times basic.get of `queue` and ack.
  void get(const std::string& queue, long n) {
    for (long i = 0; i < n; ++i) {
      amqp_maybe_release_buffers(conn_);
      const amqp_rpc_reply_t r = amqp_basic_get(conn_, kChannel, bytes_of(queue), 0);
      check(r, "basic.get");
      if (r.reply.id != AMQP_BASIC_GET_OK_METHOD) {
        throw std::runtime_error("basic.get: " + queue + " empty after " + std::to_string(i) +
                                 " of " + std::to_string(n));
      }
      const std::uint64_t delivery_tag =
          static_cast<const amqp_basic_get_ok_t*>(r.reply.decoded)->delivery_tag;
      amqp_message_t message;
      check(amqp_read_message(conn_, kChannel, &message, 0), "read message");
      amqp_destroy_message(&message);
      ack(delivery_tag, i + 1 == n);
    }
  }

 private:
  void ack(std::uint64_t delivery_tag, bool last) {
    if (++unacked_ < args_.ack_every && !last) return;
    check_status(amqp_basic_ack(conn_, kChannel, delivery_tag, args_.ack_every > 1 ? 1 : 0),
                 "basic.ack");
    unacked_ = 0;
  }

  // Reads frames until the broker confirmed every delivery tag up to `published_`. RabbitMQ
  // confirms a classic queue's publishes in order, so the highest tag seen is the watermark.
  void wait_confirms() {
    while (confirmed_ < published_) {
      amqp_frame_t frame;
      check_status(amqp_simple_wait_frame(conn_, &frame), "wait for confirms");
      if (frame.frame_type != AMQP_FRAME_METHOD) continue;
      switch (frame.payload.method.id) {
        case AMQP_BASIC_ACK_METHOD: {
          const auto* m = static_cast<const amqp_basic_ack_t*>(frame.payload.method.decoded);
          confirmed_ = std::max(confirmed_, m->delivery_tag);
          break;
        }
        case AMQP_BASIC_NACK_METHOD:
          throw std::runtime_error("the broker nacked a publish");
        case AMQP_CHANNEL_CLOSE_METHOD:
        case AMQP_CONNECTION_CLOSE_METHOD: {
          amqp_rpc_reply_t r{};
          r.reply_type = AMQP_RESPONSE_SERVER_EXCEPTION;
          r.reply = frame.payload.method;
          throw std::runtime_error("wait for confirms: " + describe(r));
        }
        default:
          break;
      }
    }
    amqp_maybe_release_buffers(conn_);
  }

  const Args& args_;
  std::string body_;
  Properties props_;
  amqp_connection_state_t conn_ = nullptr;
  std::uint64_t published_ = 0;
  std::uint64_t confirmed_ = 0;
  long unacked_ = 0;
};

using Clock = std::chrono::steady_clock;

template <typename F>
double timed_rate(long n, F&& run) {
  const auto start = Clock::now();
  run();
  const std::chrono::duration<double> took = Clock::now() - start;
  return static_cast<double>(n) / std::max(took.count(), 1e-9);
}

struct Figure {
  std::string key;
  std::string label;
  double msgs_per_s;
};

std::vector<Figure> run(const Args& a, Client& client, const std::string& each,
                        const std::string& batched) {
  const long warm = std::min(a.warmup, a.messages);
  const bool all = a.mode == "all";
  std::vector<Figure> figures;
  const auto publish = [&](const std::string& queue, long window) {
    client.publish(queue, warm, window);
    return timed_rate(a.messages, [&] { client.publish(queue, a.messages, window); });
  };
  if (all || a.mode == "publish1") {
    figures.push_back({"publish1", "publish, confirm window 1", publish(each, 1)});
  }
  if (all || a.mode == "publishN") {
    figures.push_back({"publishN", "publish, confirm window " + std::to_string(a.batch),
                       publish(batched, a.batch)});
  }
  // The queue holds warm + messages when the publish patterns ran, else it is filled here.
  const auto drain = [&](const std::string& queue, auto&& consume) {
    if (!all) {
      client.publish(queue, warm + a.messages, a.batch);
      std::this_thread::sleep_for(std::chrono::milliseconds(a.settle_ms));
    }
    consume(queue, warm);
    return timed_rate(a.messages, [&] { consume(queue, a.messages); });
  };
  if (all || a.mode == "consume") {
    figures.push_back({"consume", "consume, prefetch " + std::to_string(a.prefetch) + ", 1 worker",
                       drain(each, [&](const std::string& q, long n) { client.consume(q, n); })});
  }
  if (all || a.mode == "get") {
    const std::string& queue = all ? batched : each;
    figures.push_back({"get", "basic.get + ack",
                       drain(queue, [&](const std::string& q, long n) { client.get(q, n); })});
  }
  return figures;
}

void print(const Args& a, std::size_t body_bytes, const std::vector<Figure>& figures) {
  if (a.json) {
    std::printf(
        "{\"client\":\"rabbitmq-c %s\",\"host\":\"%s\",\"port\":%d,\"messages\":%ld,"
        "\"bytes\":%zu,\"batch\":%ld,\"prefetch\":%ld,\"ack_every\":%ld",
        amqp_version(), a.host.c_str(), a.port, a.messages, body_bytes, a.batch, a.prefetch,
        a.ack_every);
    for (const Figure& f : figures)
      std::printf(",\"%s_msgs_per_s\":%.0f", f.key.c_str(), f.msgs_per_s);
    std::printf("}\n");
    return;
  }
  std::printf("rabbitmq-c %s on %s:%d, %ld messages of %zu bytes, durable, persistent, acks",
              amqp_version(), a.host.c_str(), a.port, a.messages, body_bytes);
  if (a.ack_every > 1) {
    std::printf(" multiple every %ld\n", a.ack_every);
  } else {
    std::printf(" one by one\n");
  }
  for (const Figure& f : figures) {
    std::printf("  %-34s %12.0f msg/s\n", f.label.c_str(), f.msgs_per_s);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  const std::string body = make_body(args);
  const std::string each = "raw-baseline-" + std::to_string(::getpid());
  const std::string batched = each + "-batch";
  try {
    Client client(args, body);
    client.declare(each);
    client.declare(batched);
    const std::vector<Figure> figures = run(args, client, each, batched);
    const bool drained = args.mode != "publish1" && args.mode != "publishN";
    for (const std::string& queue : {each, batched}) {
      if (const std::uint32_t left = client.declare(queue, true); drained && left != 0) {
        throw std::runtime_error(queue + " still holds " + std::to_string(left) + " messages");
      }
      client.remove(queue);
    }
    print(args, body.size(), figures);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "raw_baseline: %s\n", e.what());
    return 1;
  }
}
