// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The interop scenarios RDS-T1..RDS-T19 of spec/03-redis.md §6 against a real redis-server: the
// C++ RedisTransport (and the App on top of it) on one side, and on the other side what another
// SDK or Laravel leaves in Redis, played by RawClient and LaravelPeer. Everything is checked on
// the keys themselves, never only through the transport that wrote them.
//
// Time: a score "passes" by being rewritten into the past (ZADD XX), never by sleeping. The only
// real waits are a Pop blocked until a delayed message is due (RDS-T6) and the default layout's
// poll timing (RDS-T18); both are short and bounded.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/redis/transport.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "laravel_peer.hpp"
#include "raw_client.hpp"
#include "redis_server.hpp"
#include "server_test.hpp"

namespace {

namespace bq = babelqueue;
namespace rd = babelqueue::redis;
using namespace std::chrono_literals;
using rd::test::LaravelPeer;
using rd::test::RawClient;
using rd::test::RedisServer;
using rd::test::Reply;
using Clock = std::chrono::steady_clock;
using Strings = std::vector<std::string>;

// The client prefix of a stock Laravel 10/11 app named "Laravel" plus "queues:" (§3.1).
constexpr char kLaravelPrefix[] = "laravel_database_queues:";
constexpr char kQueue[] = "orders";

// A Status is checked with its error text in the failure message.
#define EXPECT_OK(expr)                              \
  do {                                               \
    const ::babelqueue::Status bq_st = (expr);       \
    EXPECT_TRUE(bq_st.ok()) << bq_st.error().what(); \
  } while (false)
#define ASSERT_OK(expr)                              \
  do {                                               \
    const ::babelqueue::Status bq_st = (expr);       \
    ASSERT_TRUE(bq_st.ok()) << bq_st.error().what(); \
  } while (false)

// The transport's clock: Unix seconds, floored (RDS-5), read exactly as the transport reads it.
// Not time(): glibc serves it from the coarse clock, which can still show the previous second
// a few milliseconds after system_clock has moved on, and a score bound would then be off by one.
long long now_seconds() {
  using namespace std::chrono;
  return static_cast<long long>(
      duration_cast<seconds>(system_clock::now().time_since_epoch()).count());
}

std::string conformance_dir() {
  if (const char* dir = std::getenv("BABELQUEUE_CONFORMANCE_DIR"); dir != nullptr && *dir != 0) {
    return dir;
  }
  return BABELQUEUE_DEFAULT_CONFORMANCE_DIR;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// `text` with its single occurrence of `from` replaced; throws when `from` does not occur exactly
// once, so a typo in a test body cannot make an expectation vacuous.
std::string replace_once(std::string text, std::string_view from, std::string_view to) {
  const std::size_t at = text.find(from);
  if (at == std::string::npos || text.find(from, at + 1) != std::string::npos) {
    throw std::logic_error("replace_once: \"" + std::string(from) + "\" is not in the text once");
  }
  return text.replace(at, from.size(), to);
}

// A fresh SDK envelope for `orders` whose data carries `n`, so bodies differ.
std::string envelope(int n = 1042) {
  bq::MakeOptions mo;
  mo.queue = kQueue;
  return bq::encode(bq::make("urn:babel:orders:created", bq::Json::object({{"order_id", n}}), mo));
}

// A hand-written envelope as another SDK may write it: `attempts` in the middle, unknown members
// at the top level and in meta. `attempts` is the lexeme written.
std::string foreign_envelope(std::string_view attempts, std::string_view data) {
  return std::string(R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-)") +
         R"(1c0d5e6f7a8b","attempts":)" + std::string(attempts) + R"(,"data":)" +
         std::string(data) +
         R"(,"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"go",)" +
         R"("schema_version":1,"created_at":1749132727000,"x_meta":"kept"},"x_ext":{"a":[1,)" +
         R"(2.50,null],"s":"\u00e9\/"}})";
}

// Collects what a transport or App logs, so the RDS-9 warnings can be asserted.
class LogCapture {
 public:
  std::function<void(bq::LogLevel, std::string_view)> sink() {
    return [this](bq::LogLevel level, std::string_view text) {
      std::lock_guard lock(mu_);
      lines_.emplace_back(level, std::string(text));
    };
  }
  // Warnings containing every one of `parts`.
  std::size_t warnings_with(std::initializer_list<std::string_view> parts) const {
    std::lock_guard lock(mu_);
    return static_cast<std::size_t>(std::count_if(lines_.begin(), lines_.end(), [&](const auto& l) {
      return l.first == bq::LogLevel::Warning &&
             std::all_of(parts.begin(), parts.end(),
                         [&](std::string_view p) { return l.second.find(p) != std::string::npos; });
    }));
  }
  std::string dump() const {
    std::lock_guard lock(mu_);
    std::string out;
    for (const auto& [level, text] : lines_) {
      out.append("[").append(std::to_string(static_cast<int>(level))).append("] ");
      out.append(text).append("\n");
    }
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<bq::LogLevel, std::string>> lines_;
};

Strings members_of(RawClient& raw, const std::string& key) {
  Strings out;
  for (auto& [member, score] : raw.zrange_withscores(key)) {
    out.push_back(member);
  }
  return out;
}

std::string score_of(RawClient& raw, const std::string& key, const std::string& member) {
  const Reply r = raw.command({"ZSCORE", key, member});
  return r.is_nil() ? std::string("(nil)") : r.as_string();
}

// Moves an existing member's score one second into the past: "retry_after has passed" (or "the
// delay is over") without waiting. XX CH answers 1 only if the member was there and changed.
void make_due(RawClient& raw, const std::string& key, const std::string& member) {
  const Reply changed =
      raw.command({"ZADD", key, "XX", "CH", std::to_string(now_seconds() - 1), member});
  ASSERT_EQ(changed.type, Reply::Integer) << changed.debug_string();
  EXPECT_EQ(changed.integer, 1) << "no such member in " << key;
}

Strings all_keys(RawClient& raw) {
  Strings keys;
  for (const Reply& k : raw.command({"KEYS", "*"}).elements) {
    keys.push_back(k.as_string());
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// EVALSHA calls the server has answered so far: one default-layout poll round is exactly two (SWEEP
// and RESERVE in one pipeline), so deltas count the rounds a Pop made (RDS-T18).
long long evalsha_calls(RawClient& raw) {
  const std::string info = raw.command({"INFO", "commandstats"}).as_string();
  const std::string tag = "cmdstat_evalsha:calls=";
  const std::size_t at = info.find(tag);
  if (at == std::string::npos) return 0;
  return std::stoll(info.substr(at + tag.size()));
}

// A TCP port nobody listens on right now (the kernel's pick for an ephemeral bind).
int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("could not find a free port");
  return ntohs(address.sin_port);
}

// The top-level member `name` of a JSON text, or nullptr.
const bq::Json* json_member(const bq::Json& doc, std::string_view name) {
  return doc.is_object() ? doc.find(name) : nullptr;
}

// `record` is the ADR-0035 poison record of exactly `body` (ENV-42..44): rebuilt with the error
// text and time the record carries, it must be byte-identical, so the original bytes (spliced
// or wrapped as `raw`) and the `dead_letter` block are both checked.
void expect_poison_record(const std::string& record, const std::string& body,
                          const std::string& queue) {
  auto doc = bq::Json::try_parse(record);
  ASSERT_TRUE(doc.has_value()) << "record is not JSON: " << record;
  const bq::Json* dl = json_member(*doc, "dead_letter");
  ASSERT_TRUE(dl != nullptr && dl->is_object()) << record;
  const bq::Json* reason = dl->find("reason");
  const bq::Json* error = dl->find("error");
  const bq::Json* failed_at = dl->find("failed_at");
  const bq::Json* original_queue = dl->find("original_queue");
  ASSERT_TRUE(reason && error && failed_at && original_queue) << record;
  EXPECT_EQ(reason->as_string(), "poison");
  EXPECT_EQ(original_queue->as_string(), queue);
  ASSERT_TRUE(error->is_string());
  EXPECT_FALSE(error->as_string().empty());
  ASSERT_TRUE(failed_at->as_int64().has_value()) << record;
  EXPECT_EQ(record, bq::poison_record(body, error->as_string(), queue, *failed_at->as_int64()));
}

std::string dead_letter_reason(const std::string& record) {
  auto doc = bq::Json::try_parse(record);
  if (!doc.has_value()) return "(not JSON)";
  const bq::Json* dl = json_member(*doc, "dead_letter");
  const bq::Json* reason = dl != nullptr && dl->is_object() ? dl->find("reason") : nullptr;
  return reason != nullptr && reason->is_string() ? reason->as_string() : "(no reason)";
}

class RedisInterop : public rd::test::SharedRedisServerTest {
 protected:
  // One message per reserve unless a test asks for more: most scenarios reason about exactly
  // what one Pop took from the ready list.
  rd::Options options(rd::Layout layout, std::string prefix = "queues:") {
    rd::Options o = rd::parse_url(server().url());
    o.layout = layout;
    o.laravel_key_prefix = std::move(prefix);
    o.prefetch = 1;
    o.logger = log_.sink();
    return o;
  }

  bq::AppOptions app_options() {
    bq::AppOptions o;
    o.default_queue = kQueue;
    o.poll_timeout = 0ms;  // drain() stops at the first empty Pop
    o.logger = log_.sink();
    return o;
  }

  // A Pop that must succeed and deliver.
  std::optional<bq::ReceivedMessage> pop_now(rd::RedisTransport& t, std::string_view q = kQueue,
                                             std::chrono::milliseconds timeout = 0ms) {
    auto got = t.pop(q, timeout);
    if (!got.has_value()) {
      ADD_FAILURE() << "pop failed: " << got.error().what();
      return std::nullopt;
    }
    if (!got->has_value()) ADD_FAILURE() << "pop returned none";
    return std::move(*got);
  }

  // A Pop that must succeed and deliver nothing.
  void expect_empty_pop(rd::RedisTransport& t, std::string_view q = kQueue) {
    auto got = t.pop(q, 0ms);
    ASSERT_TRUE(got.has_value()) << got.error().what();
    EXPECT_FALSE(got->has_value()) << "unexpected delivery: " << (*got)->body;
  }

  LogCapture log_;
};

constexpr rd::Layout kBothLayouts[] = {rd::Layout::Default, rd::Layout::Laravel};

const char* name_of(rd::Layout layout) {
  return layout == rd::Layout::Default ? "default layout" : "laravel layout";
}

// ----------------------------------------------------------------------------- RDS-T1, RDS-70

// The cases of manifest.json's "redis" block: every member that names an envelope file.
std::vector<std::pair<std::string, std::string>> manifest_redis_cases() {
  const bq::Json manifest = bq::Json::parse(read_file(conformance_dir() + "/manifest.json"));
  const bq::Json* redis = json_member(manifest, "redis");
  if (redis == nullptr || !redis->is_object()) throw std::runtime_error("manifest: no redis block");
  std::vector<std::pair<std::string, std::string>> cases;
  for (const auto& [name, value] : redis->as_object()) {
    const bq::Json* file = json_member(value, "envelope_file");
    if (file != nullptr && file->is_string()) cases.emplace_back(name, file->as_string());
  }
  return cases;
}

TEST_F(RedisInterop, RDST1_ManifestPayloadIdentityInBothLayouts) {
  auto cases = manifest_redis_cases();
  ASSERT_FALSE(cases.empty()) << "the manifest's redis block lists no envelope case";
  EXPECT_TRUE(std::any_of(cases.begin(), cases.end(),
                          [](const auto& c) { return c.first == "payload_identity"; }));
  // RDS-T1 names a second fixture besides the manifest's: non-ASCII text and numbers.
  cases.emplace_back("RDS-T1 unicode", "fixtures/unicode-and-numbers.json");
  for (const rd::Layout layout : kBothLayouts) {
    for (const auto& [name, file] : cases) {
      SCOPED_TRACE(std::string(name_of(layout)) + ", " + name + " (" + file + ")");
      flush_all();
      const std::string bytes = read_file(conformance_dir() + "/" + file);
      ASSERT_FALSE(bytes.empty());
      ASSERT_EQ(bytes.back(), '\n');  // the raw file: pretty-printed, final newline included
      rd::RedisTransport t(options(layout));
      const rd::Keys k = t.keys(kQueue);
      ASSERT_OK(t.publish(kQueue, bytes));
      // Produce stores exactly the bytes as the list element (RDS-70): no wrapping, no fields.
      EXPECT_EQ(raw().lrange(k.ready), Strings{bytes});
      auto m = pop_now(t);
      ASSERT_TRUE(m);
      EXPECT_EQ(m->body, bytes);  // reserve returns it unchanged
      EXPECT_EQ(m->queue, kQueue);
      EXPECT_FALSE(m->poison) << m->poison_reason;
      EXPECT_TRUE(m->headers.empty());
      if (layout == rd::Layout::Default) {
        EXPECT_EQ(raw().lrange(k.in_flight), Strings{bytes});
        const Strings deadline_members = members_of(raw(), k.schedule);
        ASSERT_EQ(deadline_members.size(), 1u);
        EXPECT_EQ(deadline_members[0].substr(32), ":" + bytes);
      } else {
        EXPECT_EQ(raw().zcard(k.in_flight), 1);  // the cjson copy differs by design (RDS-49)
      }
      ASSERT_OK(t.ack(*m));
      ASSERT_OK(t.flush());
      EXPECT_FALSE(raw().exists(k.in_flight));
      EXPECT_FALSE(raw().exists(k.ready));
    }
  }
}

TEST_F(RedisInterop, RDST1_AppPublishStoresExactlyTheEncodedEnvelope) {
  // RDS-71: the App's publish stores the codec's bytes, nothing around them.
  for (const rd::Layout layout : kBothLayouts) {
    SCOPED_TRACE(name_of(layout));
    flush_all();
    auto t = std::make_shared<rd::RedisTransport>(options(layout));
    bq::App app(t, app_options());
    const std::string id =
        app.publish("urn:babel:orders:created", bq::Json::object({{"order_id", 1042}}));
    const Strings stored = raw().lrange(t->keys(kQueue).ready);
    ASSERT_EQ(stored.size(), 1u);
    const bq::Envelope env = bq::decode(stored[0]);
    EXPECT_EQ(env.meta().id, id);
    EXPECT_EQ(env.urn(), "urn:babel:orders:created");
    EXPECT_EQ(bq::encode(env), stored[0]);  // canonical encoding: re-encoding changes nothing
  }
}

// ------------------------------------------------------------------------------------ RDS-T2

TEST_F(RedisInterop, RDST2_LaravelProducerToCpp) {
  LaravelPeer peer(raw(), kLaravelPrefix);
  rd::RedisTransport t(options(rd::Layout::Laravel, kLaravelPrefix));
  const rd::Keys k = t.keys(kQueue);
  ASSERT_EQ(k.ready, peer.ready_key(kQueue));

  // The BabelQueue Laravel driver's publish: pushRaw of the bare envelope (+ notify token).
  const std::string body = envelope();
  peer.push(kQueue, body);
  ASSERT_EQ(raw().lrange("laravel_database_queues:orders"), Strings{body});
  ASSERT_EQ(raw().llen("laravel_database_queues:orders:notify"), 1);

  auto m = pop_now(t);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, body);  // identical bytes
  EXPECT_FALSE(m->poison) << m->poison_reason;
  EXPECT_EQ(bq::decode(m->body).attempts(), 0);
  EXPECT_EQ(raw().zcard("laravel_database_queues:orders:reserved"), 1);
  EXPECT_EQ(raw().llen("laravel_database_queues:orders:notify"), 0);  // the pop took the token

  ASSERT_OK(t.ack(*m));
  ASSERT_OK(t.flush());
  EXPECT_EQ(raw().zcard("laravel_database_queues:orders:reserved"), 0);
  EXPECT_EQ(raw().llen("laravel_database_queues:orders:notify"), 0);
  EXPECT_EQ(raw().llen("laravel_database_queues:orders"), 0);
}

TEST_F(RedisInterop, RDST2_LaravelNativeJobIsAnUnknownUrnForTheApp) {
  // A job exactly as Laravel's createPayload writes it: `job` is the PHP callable
  // "Illuminate\Queue\CallQueuedHandler@call", a URN no C++ handler has. It decodes (not poison:
  // RDS-27), so the App applies the unknown-URN strategy (RT-32, D7..D10), and no strategy loses it
  // silently.
  LaravelPeer::PayloadFields fields;
  fields.uuid = "0b5c6a43-6f9e-4c2b-9d8e-3a1f2b4c5d6e";
  fields.id = "Zq3xV8mN1pL5rT7yU9wK2sD4fG6hJ0aB";
  const std::string payload = LaravelPeer::make_payload(fields);
  const std::string job_class = "Illuminate\\Queue\\CallQueuedHandler@call";
  const std::string dlq = std::string(kLaravelPrefix) + "orders.dlq";
  {
    rd::RedisTransport probe(options(rd::Layout::Laravel, kLaravelPrefix));
    LaravelPeer(raw(), kLaravelPrefix).push(kQueue, payload);
    auto m = pop_now(probe);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->body, payload);
    EXPECT_FALSE(m->poison) << m->poison_reason;
    auto env = bq::try_decode(m->body);
    ASSERT_TRUE(env.has_value()) << env.error().what();
    EXPECT_EQ(env->urn(), job_class);
    EXPECT_EQ(env->attempts(), 0);
    ASSERT_OK(probe.ack(*m));
  }

  // Strategy dead_letter: the annotated envelope in prefix + "orders.dlq" with its notify token.
  {
    flush_all();
    LaravelPeer(raw(), kLaravelPrefix).push(kQueue, payload);
    auto t = std::make_shared<rd::RedisTransport>(options(rd::Layout::Laravel, kLaravelPrefix));
    bq::AppOptions ao = app_options();
    ao.unknown_urn = bq::UnknownUrnStrategy::DeadLetter;
    bq::App app(t, ao);
    EXPECT_EQ(app.drain(kQueue).count, 1u);
    ASSERT_OK(t->flush());
    const Strings records = raw().lrange(dlq);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(dead_letter_reason(records[0]), "unknown_urn");
    const bq::Json record = bq::Json::parse(records[0]);
    ASSERT_NE(json_member(record, "job"), nullptr);
    EXPECT_EQ(json_member(record, "job")->as_string(), job_class);
    ASSERT_NE(json_member(record, "uuid"), nullptr)
        << "unknown members must survive: " << records[0];
    EXPECT_EQ(json_member(record, "uuid")->as_string(), fields.uuid);
    EXPECT_EQ(raw().llen(dlq + ":notify"), 1);
    EXPECT_EQ(raw().zcard(t->keys(kQueue).in_flight), 0);
    EXPECT_EQ(raw().llen(t->keys(kQueue).ready), 0);
  }

  // Strategy fail (the default) with retries left: released in place, attempts 0 -> 1 and
  // nothing else changed (RDS-57), into :delayed.
  {
    flush_all();
    LaravelPeer(raw(), kLaravelPrefix).push(kQueue, payload);
    auto t = std::make_shared<rd::RedisTransport>(options(rd::Layout::Laravel, kLaravelPrefix));
    bq::App app(t, app_options());
    EXPECT_EQ(app.drain(kQueue, 1).count, 1u);
    ASSERT_OK(t->flush());
    EXPECT_EQ(members_of(raw(), t->keys(kQueue).schedule),
              Strings{replace_once(payload, "\"attempts\":0}", "\"attempts\":1}")});
    EXPECT_EQ(raw().zcard(t->keys(kQueue).in_flight), 0);
    EXPECT_FALSE(raw().exists(dlq));
  }

  // Strategy delete: acknowledged and gone.
  {
    flush_all();
    LaravelPeer(raw(), kLaravelPrefix).push(kQueue, payload);
    auto t = std::make_shared<rd::RedisTransport>(options(rd::Layout::Laravel, kLaravelPrefix));
    bq::AppOptions ao = app_options();
    ao.unknown_urn = bq::UnknownUrnStrategy::Delete;
    bq::App app(t, ao);
    EXPECT_EQ(app.drain(kQueue).count, 1u);
    ASSERT_OK(t->flush());
    EXPECT_EQ(all_keys(raw()), Strings{});
  }
}

// ------------------------------------------------------------------------------------ RDS-T3

TEST_F(RedisInterop, RDST3_CppProducerToLaravelWorker) {
  LaravelPeer peer(raw(), kLaravelPrefix);
  rd::RedisTransport t(options(rd::Layout::Laravel, kLaravelPrefix));
  const std::string body = envelope();
  ASSERT_OK(t.publish(kQueue, body));
  EXPECT_EQ(raw().llen(peer.notify_key(kQueue)), 1);

  const auto job = peer.pop(kQueue);  // Laravel's pop script needs a numeric attempts
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->raw_body, body);
  EXPECT_EQ(job->attempts_1based, 1);
  EXPECT_EQ(members_of(raw(), peer.reserved_key(kQueue)), Strings{job->reserved});
  EXPECT_EQ(raw().llen(peer.notify_key(kQueue)), 0);

  peer.remove(kQueue, *job);
  EXPECT_EQ(raw().zcard(peer.reserved_key(kQueue)), 0);
  EXPECT_FALSE(peer.pop(kQueue).has_value());
}

// ------------------------------------------------------------------------------------ RDS-T4

TEST_F(RedisInterop, RDST4_CppReleaseReadByLaravelWorker) {
  LaravelPeer peer(raw(), kLaravelPrefix);
  rd::RedisTransport t(options(rd::Layout::Laravel, kLaravelPrefix));
  const std::string head = foreign_envelope("2", R"({"order_id":1042})");  // N = 2
  const std::string released = replace_once(head, "\"attempts\":2", "\"attempts\":3");
  peer.push(kQueue, head);

  auto m = pop_now(t);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->body, head);
  const long long before = now_seconds();
  ASSERT_OK(t.release(*m, 4500ms));  // ceil(4.5 s) = 5 s (RDS-54)
  const long long after = now_seconds();

  // The :delayed member is the SDK's bytes with attempts N+1, unknown keys and values intact.
  const auto delayed = raw().zrange_withscores(peer.delayed_key(kQueue));
  ASSERT_EQ(delayed.size(), 1u);
  EXPECT_EQ(delayed[0].first, released);
  const long long score = std::stoll(delayed[0].second);
  EXPECT_GE(score, before + 5);
  EXPECT_LE(score, after + 5);
  EXPECT_EQ(raw().zcard(peer.reserved_key(kQueue)), 0);  // the C++ reservation is gone

  EXPECT_FALSE(peer.pop(kQueue).has_value());  // not due yet
  make_due(raw(), peer.delayed_key(kQueue), released);
  const auto job = peer.pop(kQueue);  // Laravel migrates :delayed, then pops
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->raw_body, released);
  EXPECT_EQ(job->attempts_1based, 4);  // N + 2
  peer.remove(kQueue, *job);
  EXPECT_EQ(raw().zcard(peer.reserved_key(kQueue)), 0);
}

// ------------------------------------------------------------------------------------ RDS-T5

TEST_F(RedisInterop, RDST5_LaravelReleaseReadByCpp) {
  LaravelPeer peer(raw(), kLaravelPrefix);
  rd::RedisTransport t(options(rd::Layout::Laravel, kLaravelPrefix));
  const std::string head = foreign_envelope("1", R"({"url":"https://example.com/a/b","n":7})");
  peer.push(kQueue, head);
  const auto job = peer.pop(kQueue);
  ASSERT_TRUE(job.has_value());
  peer.release(kQueue, *job, 0);  // Laravel's release: the cjson copy, due now
  ASSERT_EQ(members_of(raw(), peer.delayed_key(kQueue)), Strings{job->reserved});

  auto m = pop_now(t);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, job->reserved);  // cjson bytes, as Laravel left them
  EXPECT_NE(m->body, head);
  EXPECT_NE(m->body.find(R"(https:\/\/example.com\/a\/b)"), std::string::npos) << m->body;
  EXPECT_FALSE(m->poison) << m->poison_reason;
  auto env = bq::try_decode(m->body);
  ASSERT_TRUE(env.has_value()) << env.error().what();
  EXPECT_EQ(env->attempts(), 2);  // N + 1
  EXPECT_EQ(env->urn(), "urn:babel:orders:created");
  ASSERT_NE(env->data().find("url"), nullptr);
  EXPECT_EQ(env->data().find("url")->as_string(), "https://example.com/a/b");
  EXPECT_EQ(env->meta().created_at, 1749132727000);  // 13 digits survive %.14g
  ASSERT_OK(t.ack(*m));
  ASSERT_OK(t.flush());
  EXPECT_EQ(raw().zcard(peer.reserved_key(kQueue)), 0);
}

// ------------------------------------------------------------------------------------ RDS-T6

TEST_F(RedisInterop, RDST6_DelayedPublishIsInvisibleUntilDueThenWakesABlockedPop) {
  rd::RedisTransport t(options(rd::Layout::Laravel));
  const rd::Keys k = t.keys(kQueue);
  const std::string body = envelope();
  const long long before = now_seconds();
  ASSERT_OK(t.publish_delayed(kQueue, body, 30s));
  const long long after = now_seconds();
  const auto delayed = raw().zrange_withscores(k.schedule);
  ASSERT_EQ(delayed.size(), 1u);
  EXPECT_EQ(delayed[0].first, body);
  EXPECT_GE(std::stoll(delayed[0].second), before + 30);
  EXPECT_LE(std::stoll(delayed[0].second), after + 30);
  EXPECT_FALSE(raw().exists(k.notify));  // the ZADD wrote no notify token
  EXPECT_FALSE(raw().exists(k.ready));
  expect_empty_pop(t);  // invisible before its score

  // A Pop blocked on :notify (nothing will ever be pushed there) must still see the message
  // within about one slice after it becomes due, because every slice is preceded by a migrate.
  auto blocked = std::async(std::launch::async, [&] { return t.pop(kQueue, 3000ms); });
  const auto wait_until = Clock::now() + 3s;
  bool in_blpop = false;
  while (!in_blpop && Clock::now() < wait_until &&
         blocked.wait_for(5ms) != std::future_status::ready) {
    in_blpop = raw().command({"CLIENT", "LIST"}).as_string().find("cmd=blpop") != std::string::npos;
  }
  if (!in_blpop) {
    auto early = blocked.get();  // bounded by the Pop's own 3 s timeout
    FAIL() << "the Pop never blocked in BLPOP; it returned "
           << (!early.has_value()   ? std::string("error: ") + early.error().what()
               : early->has_value() ? "a message: " + (*early)->body
                                    : std::string("none"));
  }
  make_due(raw(), k.schedule, body);
  const auto due_at = Clock::now();
  ASSERT_EQ(blocked.wait_for(5s), std::future_status::ready);
  const auto waited = Clock::now() - due_at;
  auto got = blocked.get();
  ASSERT_TRUE(got.has_value()) << got.error().what();
  ASSERT_TRUE(got->has_value()) << "the blocked Pop timed out without the due message";
  EXPECT_EQ((*got)->body, body);
  EXPECT_LT(waited, 2500ms) << "picked up "
                            << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()
                            << " ms after due (slice <= 1 s)";
  ASSERT_OK(t.ack(**got));
}

// ------------------------------------------------------------------------------------ RDS-T7

TEST_F(RedisInterop, RDST7_CrashRecoveryLaravelLayoutAndLateSettlementsChangeNothing) {
  rd::Options oa = options(rd::Layout::Laravel);
  oa.pipelined_acks = false;  // the late ack's outcome is known when ack returns
  rd::RedisTransport worker_a(oa);
  rd::RedisTransport worker_b(options(rd::Layout::Laravel));
  const rd::Keys k = worker_a.keys(kQueue);
  const std::string body = envelope();  // attempts N = 0
  ASSERT_OK(worker_a.publish(kQueue, body));

  const long long before = now_seconds();
  auto a = pop_now(worker_a);  // reserved, then "the worker dies": no ack
  const long long after = now_seconds();
  ASSERT_TRUE(a);
  const auto reserved = raw().zrange_withscores(k.in_flight);
  ASSERT_EQ(reserved.size(), 1u);
  const std::string member_a = reserved[0].first;
  EXPECT_GE(std::stoll(reserved[0].second), before + 90);  // retry_after 90 s
  EXPECT_LE(std::stoll(reserved[0].second), after + 90);

  make_due(raw(), k.in_flight, member_a);  // retry_after has passed
  auto b = pop_now(worker_b);              // migrates the cjson copy back, pops it
  ASSERT_TRUE(b);
  EXPECT_EQ(b->body, member_a);
  auto env = bq::try_decode(b->body);
  ASSERT_TRUE(env.has_value()) << env.error().what();
  EXPECT_EQ(env->attempts(), 1);  // recovery counts as an attempt (RDS-52)
  const Strings reserved_b = members_of(raw(), k.in_flight);
  ASSERT_EQ(reserved_b.size(), 1u);
  EXPECT_NE(reserved_b[0], member_a);

  // Worker A comes back and settles its old reservation: each gate answers 0 (RDS-24, RDS-55).
  EXPECT_OK(worker_a.ack(*a));
  EXPECT_OK(worker_a.release(*a, 0ms));
  EXPECT_OK(worker_a.dead_letter(*a, "orders.dlq", "{\"record\":1}"));
  EXPECT_EQ(log_.warnings_with({"reservation expired", "ack", "orders"}), 1u) << log_.dump();
  EXPECT_EQ(log_.warnings_with({"reservation expired", "release", "orders"}), 1u) << log_.dump();
  EXPECT_EQ(log_.warnings_with({"reservation expired", "dead-letter", "orders"}), 1u)
      << log_.dump();
  EXPECT_EQ(members_of(raw(), k.in_flight), reserved_b);  // B's reservation untouched
  EXPECT_FALSE(raw().exists(k.schedule));                 // no late release to :delayed
  EXPECT_FALSE(raw().exists(k.ready));
  EXPECT_FALSE(raw().exists(worker_a.keys("orders.dlq").ready));

  ASSERT_OK(worker_b.ack(*b));
  ASSERT_OK(worker_b.flush());
  EXPECT_EQ(raw().zcard(k.in_flight), 0);
}

// ------------------------------------------------------------------------------------ RDS-T8

TEST_F(RedisInterop, RDST8_CrashRecoveryDefaultLayoutSweepsByteIdenticalToTheTail) {
  rd::RedisTransport worker_a(options(rd::Layout::Default));
  rd::RedisTransport worker_b(options(rd::Layout::Default));
  const rd::Keys k = worker_a.keys(kQueue);
  const std::string lost = foreign_envelope("3", R"({"order_id":1})");  // not SDK-canonical
  const std::string next = envelope(2);
  ASSERT_OK(worker_a.publish(kQueue, lost));
  auto a = pop_now(worker_a);  // no ack: the worker "dies"
  ASSERT_TRUE(a);
  const Strings deadline_a = members_of(raw(), k.schedule);
  ASSERT_EQ(deadline_a.size(), 1u);
  ASSERT_OK(worker_a.publish(kQueue, next));

  make_due(raw(), k.schedule, deadline_a[0]);
  auto b = pop_now(worker_b);  // SWEEP first: `lost` goes to the tail, behind `next`
  ASSERT_TRUE(b);
  EXPECT_EQ(b->body, next);
  EXPECT_EQ(raw().lrange(k.ready), Strings{lost});  // byte-identical, at the tail
  EXPECT_EQ(raw().lrange(k.in_flight), Strings{next});
  const Strings deadline_b = members_of(raw(), k.schedule);
  ASSERT_EQ(deadline_b.size(), 1u);  // A's member was removed by the sweep
  EXPECT_NE(deadline_b[0], deadline_a[0]);
  EXPECT_EQ(deadline_b[0].substr(32), ":" + next);

  auto again = pop_now(worker_b);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->body, lost);
  EXPECT_EQ(bq::decode(again->body).attempts(), 3);  // no delivery counter here (RDS-20)
  ASSERT_OK(worker_b.ack(*b));
  ASSERT_OK(worker_b.ack(*again));
  ASSERT_OK(worker_b.flush());
  EXPECT_FALSE(raw().exists(k.in_flight));
  EXPECT_FALSE(raw().exists(k.schedule));
}

// ------------------------------------------------------------------------------------ RDS-T9

TEST_F(RedisInterop, RDST9_LateSettlementAfterSweepTouchesNothing) {
  rd::Options oa = options(rd::Layout::Default);
  oa.pipelined_acks = false;
  rd::RedisTransport worker_a(oa);
  rd::Options ob = options(rd::Layout::Default);
  ob.prefetch = 2;
  rd::RedisTransport worker_b(ob);
  const rd::Keys k = worker_a.keys(kQueue);
  const std::string body = envelope();
  ASSERT_OK(worker_a.publish_batch(kQueue, {body, body}));  // two identical stored values

  auto a = pop_now(worker_a);
  ASSERT_TRUE(a);
  const Strings member_a = members_of(raw(), k.schedule);
  ASSERT_EQ(member_a.size(), 1u);
  make_due(raw(), k.schedule, member_a[0]);

  auto b1 = pop_now(worker_b);  // sweeps A's copy back, then reserves both copies
  ASSERT_TRUE(b1);
  EXPECT_EQ(raw().lrange(k.in_flight), (Strings{body, body}));
  const Strings members_b = members_of(raw(), k.schedule);
  ASSERT_EQ(members_b.size(), 2u);
  EXPECT_EQ(std::count(members_b.begin(), members_b.end(), member_a[0]), 0);

  EXPECT_OK(worker_a.ack(*a));
  EXPECT_OK(worker_a.release(*a, 0ms));
  EXPECT_OK(worker_a.dead_letter(*a, "orders.dlq", "{\"record\":1}"));
  EXPECT_EQ(log_.warnings_with({"reservation expired", "\"orders\"", "ack"}), 1u) << log_.dump();
  EXPECT_EQ(log_.warnings_with({"reservation expired", "\"orders\"", "release"}), 1u)
      << log_.dump();
  EXPECT_EQ(log_.warnings_with({"reservation expired", "\"orders\"", "dead-letter"}), 1u)
      << log_.dump();
  // B's copies and members survive; nothing was re-queued or dead-lettered.
  EXPECT_EQ(raw().lrange(k.in_flight), (Strings{body, body}));
  EXPECT_EQ(members_of(raw(), k.schedule), members_b);
  EXPECT_FALSE(raw().exists(k.ready));
  EXPECT_FALSE(raw().exists("orders.dlq"));

  ASSERT_OK(worker_b.ack(*b1));
  ASSERT_OK(worker_b.flush());
  EXPECT_EQ(raw().lrange(k.in_flight), Strings{body});  // exactly one element removed
  EXPECT_EQ(raw().zcard(k.schedule), 1);
  auto b2 = pop_now(worker_b);  // the prefetched second copy
  ASSERT_TRUE(b2);
  ASSERT_OK(worker_b.ack(*b2));
  ASSERT_OK(worker_b.flush());
  EXPECT_FALSE(raw().exists(k.in_flight));
  EXPECT_FALSE(raw().exists(k.schedule));
}

// ----------------------------------------------------------------------------------- RDS-T10

TEST_F(RedisInterop, RDST10_IdenticalDuplicatesHaveOneMemberEach) {
  rd::Options o = options(rd::Layout::Default);
  o.pipelined_acks = false;
  rd::RedisTransport t(o);
  const rd::Keys k = t.keys(kQueue);
  const std::string body = envelope();
  ASSERT_OK(t.publish(kQueue, body));
  ASSERT_OK(t.publish(kQueue, body));
  auto m1 = pop_now(t);
  auto m2 = pop_now(t);
  ASSERT_TRUE(m1 && m2);
  EXPECT_EQ(raw().lrange(k.in_flight), (Strings{body, body}));
  const Strings both = members_of(raw(), k.schedule);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_NE(both[0], both[1]);  // own token each
  for (const std::string& m : both) {
    EXPECT_EQ(m.substr(32), ":" + body);
  }

  ASSERT_OK(t.ack(*m1));
  EXPECT_EQ(raw().lrange(k.in_flight), Strings{body});
  const Strings left = members_of(raw(), k.schedule);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(std::count(both.begin(), both.end(), left[0]), 1);

  make_due(raw(), k.schedule, left[0]);
  rd::RedisTransport other(options(rd::Layout::Default));
  auto swept = pop_now(other);  // exactly one value was moved back and is reserved again
  ASSERT_TRUE(swept);
  EXPECT_EQ(swept->body, body);
  EXPECT_EQ(raw().lrange(k.in_flight), Strings{body});
  const Strings renewed = members_of(raw(), k.schedule);
  ASSERT_EQ(renewed.size(), 1u);
  EXPECT_NE(renewed[0], left[0]);
  expect_empty_pop(other);  // nothing else was moved
  ASSERT_OK(other.ack(*swept));
  ASSERT_OK(other.flush());
  EXPECT_FALSE(raw().exists(k.in_flight));
}

// ----------------------------------------------------------------------------------- RDS-T11

TEST_F(RedisInterop, RDST11_NullRetryAfterDefaultLayoutScoresInfinityAndStillSweepsOthers) {
  rd::Options on = options(rd::Layout::Default);
  on.retry_after = std::nullopt;
  rd::RedisTransport never(on);
  rd::RedisTransport finite(options(rd::Layout::Default));
  const rd::Keys k = never.keys(kQueue);
  const std::string theirs = envelope(1);
  ASSERT_OK(finite.publish(kQueue, theirs));
  auto f = pop_now(finite);
  ASSERT_TRUE(f);
  const auto finite_member = raw().zrange_withscores(k.schedule);
  ASSERT_EQ(finite_member.size(), 1u);
  EXPECT_NE(finite_member[0].second, "inf");
  make_due(raw(), k.schedule, finite_member[0].first);

  auto n = pop_now(never);  // RDS-19: this consumer still recovers the other's expired entry
  ASSERT_TRUE(n);
  EXPECT_EQ(n->body, theirs);
  const auto members = raw().zrange_withscores(k.schedule);
  ASSERT_EQ(members.size(), 1u);
  EXPECT_NE(members[0].first, finite_member[0].first);
  EXPECT_EQ(members[0].second, "inf");  // +inf: never recovered
  ASSERT_OK(never.ack(*n));
  ASSERT_OK(never.flush());
  EXPECT_FALSE(raw().exists(k.schedule));
}

TEST_F(RedisInterop, RDST11_NullRetryAfterLaravelScoresInfinityAndNeverMigratesReserved) {
  rd::Options on = options(rd::Layout::Laravel);
  on.retry_after = std::nullopt;
  rd::RedisTransport never(on);
  LaravelPeer peer(raw(), "queues:");
  const rd::Keys k = never.keys(kQueue);
  ASSERT_OK(never.publish(kQueue, envelope(1)));
  auto mine = pop_now(never);
  ASSERT_TRUE(mine);
  auto reserved = raw().zrange_withscores(k.in_flight);
  ASSERT_EQ(reserved.size(), 1u);
  EXPECT_EQ(reserved[0].second, "inf");

  // A Laravel worker's reservation that has expired: only a consumer with retry_after migrates.
  peer.push(kQueue, envelope(2));
  const auto job = peer.pop(kQueue);
  ASSERT_TRUE(job.has_value());
  make_due(raw(), k.in_flight, job->reserved);
  expect_empty_pop(never);
  EXPECT_EQ(raw().zcard(k.in_flight), 2);
  EXPECT_NE(score_of(raw(), k.in_flight, job->reserved), "(nil)");
  EXPECT_FALSE(raw().exists(k.ready));

  // :delayed is still migrated (RDS-51: only :reserved depends on retry_after).
  const std::string due = envelope(3);
  ASSERT_EQ(raw().command({"ZADD", k.schedule, std::to_string(now_seconds() - 1), due}).integer, 1);
  auto delayed = pop_now(never);
  ASSERT_TRUE(delayed);
  EXPECT_EQ(delayed->body, due);
  EXPECT_EQ(raw().zcard(k.schedule), 0);
  EXPECT_EQ(raw().zcard(k.in_flight), 3);  // the expired Laravel reservation is still there
}

TEST_F(RedisInterop, RDST11_NegativeRetryAfterIsAConfigError) {
  for (const rd::Layout layout : kBothLayouts) {
    SCOPED_TRACE(name_of(layout));
    rd::Options o = options(layout);
    o.retry_after = std::chrono::seconds(-1);
    EXPECT_THROW(rd::RedisTransport t(o), bq::ConfigError);
  }
}

// ----------------------------------------------------------------------------------- RDS-T12

// Bodies the strict codec rejects (RDS-27), each a different reason.
const Strings& default_layout_poison_bodies() {
  static const Strings bodies = {
      "not json",
      std::string("{\"job\":\"urn:babel:orders:created\",\"data\":{\"name\":\"\xff\xfe\"}}"),
      R"({"job":"urn:babel:orders:created","data":"x"})",
      R"({"job":"urn:babel:orders:created","trace_id":5,"data":{}})",
      R"({"job":"urn:babel:orders:created","data":{},"attempts":1.5})",
  };
  return bodies;
}

TEST_F(RedisInterop, RDST12_PoisonDefaultLayoutIsFlaggedAndCannotBeReleased) {
  rd::RedisTransport t(options(rd::Layout::Default));
  const rd::Keys k = t.keys(kQueue);
  for (const std::string& body : default_layout_poison_bodies()) {
    SCOPED_TRACE(body);
    ASSERT_EQ(raw().command({"RPUSH", kQueue, body}).integer, 1);
    auto m = pop_now(t);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->body, body);  // binary-safe: no transcoding (RDS-1)
    EXPECT_TRUE(m->poison);
    EXPECT_FALSE(m->poison_reason.empty());
    const bq::Status st = t.release(*m, 0ms);
    EXPECT_TRUE(st.is(bq::ErrorCode::ReleaseUnsupported))
        << (st.ok() ? std::string("released") : std::string(st.error().what()));
    // Nothing touched: still reserved, nothing re-queued.
    EXPECT_EQ(raw().lrange(k.in_flight), Strings{body});
    EXPECT_EQ(raw().zcard(k.schedule), 1);
    EXPECT_FALSE(raw().exists(k.ready));
    ASSERT_OK(t.dead_letter(*m, "orders.dlq", "{}"));
    EXPECT_FALSE(raw().exists(k.in_flight));
  }
}

TEST_F(RedisInterop, RDST12_PoisonDefaultLayoutGoesToTheDlqOnFirstDeliveryInEveryConfiguration) {
  struct Config {
    const char* name;
    bq::UnknownUrnStrategy unknown_urn;
  };
  // Dead-lettering stays off in both: poison is dead-lettered anyway (RDS-28, D17).
  for (const Config config : {Config{"dead_letter=false", bq::UnknownUrnStrategy::Fail},
                              Config{"unknown_urn=delete", bq::UnknownUrnStrategy::Delete}}) {
    SCOPED_TRACE(config.name);
    flush_all();
    for (const std::string& body : default_layout_poison_bodies()) {
      raw().command({"RPUSH", kQueue, body});
    }
    auto t = std::make_shared<rd::RedisTransport>(options(rd::Layout::Default));
    bq::AppOptions ao = app_options();
    ao.dead_letter = false;
    ao.unknown_urn = config.unknown_urn;
    bq::App app(t, ao);
    bool handled = false;
    app.handle("urn:babel:orders:created", [&](bq::Context&, const bq::Envelope&) {
      handled = true;
      return bq::Status{};
    });
    const bq::DrainResult drained = app.drain(kQueue);
    EXPECT_TRUE(drained.status.ok()) << drained.status.error().what();
    EXPECT_EQ(drained.count, default_layout_poison_bodies().size());  // each delivered exactly once
    ASSERT_OK(t->flush());
    EXPECT_FALSE(handled);

    const Strings records = raw().lrange("orders.dlq");
    ASSERT_EQ(records.size(), default_layout_poison_bodies().size());
    for (std::size_t i = 0; i < records.size(); ++i) {
      SCOPED_TRACE(default_layout_poison_bodies()[i]);
      expect_poison_record(records[i], default_layout_poison_bodies()[i], kQueue);
    }
    const rd::Keys k = t->keys(kQueue);
    EXPECT_FALSE(raw().exists(k.in_flight));
    EXPECT_FALSE(raw().exists(k.schedule));
    EXPECT_FALSE(raw().exists(k.ready));  // never re-queued
  }
}

TEST_F(RedisInterop, RDST12_IdentitylessDecodableBodyIsRoutedAsUnknownUrnNotPoison) {
  const std::string body = R"({"data":{"order_id":7},"attempts":0})";
  {
    rd::RedisTransport t(options(rd::Layout::Default));
    raw().command({"RPUSH", kQueue, body});
    auto m = pop_now(t);
    ASSERT_TRUE(m);
    EXPECT_FALSE(m->poison) << m->poison_reason;
    ASSERT_OK(t.ack(*m));
  }
  flush_all();
  raw().command({"RPUSH", kQueue, body});
  auto t = std::make_shared<rd::RedisTransport>(options(rd::Layout::Default));
  bq::AppOptions ao = app_options();
  ao.unknown_urn = bq::UnknownUrnStrategy::DeadLetter;
  bq::App app(t, ao);
  EXPECT_EQ(app.drain(kQueue).count, 1u);
  ASSERT_OK(t->flush());
  const Strings records = raw().lrange("orders.dlq");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(dead_letter_reason(records[0]), "unknown_urn") << records[0];
  EXPECT_FALSE(raw().exists(t->keys(kQueue).in_flight));
  EXPECT_FALSE(raw().exists(t->keys(kQueue).schedule));
}

// ----------------------------------------------------------------------------------- RDS-T13

// Heads Laravel's pop script cannot take (RDS-46): stock Laravel would lose each of them.
const Strings& laravel_poison_heads() {
  static const Strings heads = {"not json", "[1]", R"({"job":"x"})", R"({"attempts":"1"})"};
  return heads;
}

TEST_F(RedisInterop, RDST13_PoisonLaravelHeadsAreFlaggedAndKeptReserved) {
  LaravelPeer peer(raw(), kLaravelPrefix);
  rd::RedisTransport t(options(rd::Layout::Laravel, kLaravelPrefix));
  const rd::Keys k = t.keys(kQueue);
  for (const std::string& head : laravel_poison_heads()) {
    SCOPED_TRACE(head);
    peer.push(kQueue, head);
    auto m = pop_now(t);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->body, head);
    EXPECT_TRUE(m->poison);
    // The raw head sits in :reserved (under a per-reservation member, RDS-58a) so a crash
    // before the dead-letter loses nothing.
    const Strings reserved = members_of(raw(), k.in_flight);
    ASSERT_EQ(reserved.size(), 1u);
    ASSERT_GE(reserved[0].size(), head.size());
    EXPECT_EQ(reserved[0].substr(reserved[0].size() - head.size()), head);
    const bq::Status st = t.release(*m, 0ms);
    EXPECT_TRUE(st.is(bq::ErrorCode::ReleaseUnsupported))
        << (st.ok() ? std::string("released") : std::string(st.error().what()));
    EXPECT_EQ(raw().zcard(k.in_flight), 1);
    EXPECT_FALSE(raw().exists(k.schedule));
    ASSERT_OK(t.dead_letter(*m, "orders.dlq", "{}"));
    EXPECT_EQ(raw().zcard(k.in_flight), 0);
  }
}

TEST_F(RedisInterop, RDST13_PoisonLaravelGoesToThePrefixedDlqAndIsNeverRedelivered) {
  const std::string dlq = std::string(kLaravelPrefix) + "orders.dlq";
  for (const bq::UnknownUrnStrategy strategy :
       {bq::UnknownUrnStrategy::Fail, bq::UnknownUrnStrategy::Delete}) {
    SCOPED_TRACE(std::string("unknown_urn=") + std::string(bq::to_string(strategy)));
    flush_all();
    LaravelPeer peer(raw(), kLaravelPrefix);
    for (const std::string& head : laravel_poison_heads()) {
      peer.push(kQueue, head);
    }
    auto t = std::make_shared<rd::RedisTransport>(options(rd::Layout::Laravel, kLaravelPrefix));
    bq::AppOptions ao = app_options();
    ao.dead_letter = false;
    ao.unknown_urn = strategy;
    bq::App app(t, ao);
    EXPECT_EQ(app.drain(kQueue).count, laravel_poison_heads().size());
    ASSERT_OK(t->flush());

    const Strings records = raw().lrange(dlq);
    ASSERT_EQ(records.size(), laravel_poison_heads().size());
    for (std::size_t i = 0; i < records.size(); ++i) {
      SCOPED_TRACE(laravel_poison_heads()[i]);
      expect_poison_record(records[i], laravel_poison_heads()[i], kQueue);
    }
    EXPECT_EQ(raw().llen(dlq + ":notify"), static_cast<long long>(records.size()));
    const rd::Keys k = t->keys(kQueue);
    EXPECT_EQ(raw().zcard(k.in_flight), 0);
    EXPECT_FALSE(raw().exists(k.schedule));
    EXPECT_FALSE(raw().exists(k.ready));
    expect_empty_pop(*t);  // never redelivered
  }
}

TEST_F(RedisInterop, RDST13_CrashBeforeDeadLetterBringsTheRawHeadBackStillFlagged) {
  LaravelPeer peer(raw(), kLaravelPrefix);
  rd::RedisTransport dying(options(rd::Layout::Laravel, kLaravelPrefix));
  rd::RedisTransport next(options(rd::Layout::Laravel, kLaravelPrefix));
  const rd::Keys k = dying.keys(kQueue);
  peer.push(kQueue, "not json");
  auto m = pop_now(dying);  // flagged, then the worker dies before DEADLETTER
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->poison);
  const Strings reserved = members_of(raw(), k.in_flight);
  ASSERT_EQ(reserved.size(), 1u);
  make_due(raw(), k.in_flight, reserved[0]);

  // Migration of a flagged member hands back the raw head, not the member (RDS-46, RDS-58a).
  auto again = pop_now(next);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->body, "not json");
  EXPECT_TRUE(again->poison);
  const Strings renewed = members_of(raw(), k.in_flight);
  ASSERT_EQ(renewed.size(), 1u);
  EXPECT_NE(renewed[0], reserved[0]);
  ASSERT_OK(next.dead_letter(*again, "orders.dlq", "{\"r\":1}"));
  EXPECT_EQ(raw().lrange(std::string(kLaravelPrefix) + "orders.dlq"), Strings{"{\"r\":1}"});
  EXPECT_EQ(raw().zcard(k.in_flight), 0);
}

TEST_F(RedisInterop, RDST13_FlaggedMemberMigratedByALaravelWorkerStillGivesTheRawHead) {
  // A stock Laravel worker sharing the queue migrates an expired flagged member back to ready as
  // it is, marker included (RDS-58a); our pop strips the marker again.
  LaravelPeer peer(raw(), kLaravelPrefix);
  rd::RedisTransport t(options(rd::Layout::Laravel, kLaravelPrefix));
  const rd::Keys k = t.keys(kQueue);
  peer.push(kQueue, "not json");
  auto m = pop_now(t);
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->poison);
  const Strings reserved = members_of(raw(), k.in_flight);
  ASSERT_EQ(reserved.size(), 1u);
  ASSERT_NE(reserved[0], "not json");
  raw().command({"ZREM", k.in_flight, reserved[0]});  // what Laravel's migrate does
  raw().command({"RPUSH", k.ready, reserved[0]});
  auto again = pop_now(t);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->body, "not json");
  EXPECT_TRUE(again->poison);
}

TEST_F(RedisInterop, RDST13_ThreeIdenticalPoisonHeadsReservedAtOnceGiveThreeDlqRecords) {
  // RDS-58a: identical heads must not collapse into one :reserved member.
  LaravelPeer peer(raw(), kLaravelPrefix);
  for (int i = 0; i < 3; ++i) {
    peer.push(kQueue, "not json");
  }
  rd::Options o = options(rd::Layout::Laravel, kLaravelPrefix);
  o.prefetch = 4;
  auto t = std::make_shared<rd::RedisTransport>(o);
  const rd::Keys k = t->keys(kQueue);
  std::vector<bq::ReceivedMessage> held;
  for (int i = 0; i < 3; ++i) {
    auto m = pop_now(*t);
    ASSERT_TRUE(m);
    EXPECT_TRUE(m->poison);
    held.push_back(std::move(*m));
  }
  EXPECT_EQ(raw().zcard(k.in_flight), 3);  // all three reserved before any dead-letter
  EXPECT_FALSE(raw().exists(k.ready));

  bq::AppOptions ao = app_options();
  ao.dead_letter = false;
  bq::App app(t, ao);
  for (auto& m : held) {
    app.dispatch(std::move(m));
  }
  const Strings records = raw().lrange(std::string(kLaravelPrefix) + "orders.dlq");
  ASSERT_EQ(records.size(), 3u);
  for (const std::string& record : records) {
    expect_poison_record(record, "not json", kQueue);
  }
  EXPECT_EQ(raw().zcard(k.in_flight), 0);
}

// ----------------------------------------------------------------------------------- RDS-T14

TEST_F(RedisInterop, RDST14_BigIntegersAndUnknownKeysSurviveRelease) {
  const std::string head =
      R"({"job":"urn:babel:orders:created","trace_id":"t-14","data":{"id":123456789012345678901},)"
      R"("x_ext":{"a":[1,2.50,null]},"attempts":4,"meta":{"id":"m-14","queue":"orders",)"
      R"("lang":"node","schema_version":1,"created_at":1749132727000}})";
  const std::string released = replace_once(head, "\"attempts\":4", "\"attempts\":5");
  for (const rd::Layout layout : kBothLayouts) {
    SCOPED_TRACE(name_of(layout));
    flush_all();
    rd::RedisTransport t(options(layout));
    const rd::Keys k = t.keys(kQueue);
    ASSERT_OK(t.publish(kQueue, head));
    auto m = pop_now(t);
    ASSERT_TRUE(m);
    ASSERT_FALSE(m->poison) << m->poison_reason;
    if (layout == rd::Layout::Laravel) {
      // The reserved copy went through cjson's %.14g: releasing it would lose the digits.
      const Strings reserved = members_of(raw(), k.in_flight);
      ASSERT_EQ(reserved.size(), 1u);
      EXPECT_EQ(reserved[0].find("123456789012345678901"), std::string::npos) << reserved[0];
    }
    ASSERT_OK(t.release(*m, 0ms));
    if (layout == rd::Layout::Default) {
      EXPECT_EQ(raw().lrange(k.ready), Strings{released});  // at once, to the tail (RDS-25)
      EXPECT_FALSE(raw().exists(k.in_flight));
      EXPECT_FALSE(raw().exists(k.schedule));
    } else {
      EXPECT_EQ(members_of(raw(), k.schedule), Strings{released});
      EXPECT_EQ(raw().zcard(k.in_flight), 0);
    }
    auto again = pop_now(t);  // delay 0: due at the next migrate
    ASSERT_TRUE(again);
    EXPECT_EQ(again->body, released);
    ASSERT_OK(t.ack(*again));
  }
}

// ----------------------------------------------------------------------------------- RDS-T15

std::string frame_of(const std::string& body, const bq::Headers& headers) {
  std::string out = "{\"__bq_frame\":1,\"headers\":{";
  bool first = true;
  for (const auto& [key, value] : headers) {
    if (!first) out += ',';
    first = false;
    bq::append_json_string(out, key);
    out += ':';
    bq::append_json_string(out, value);
  }
  out += "},\"body\":";
  bq::append_json_string(out, body);
  out += '}';
  return out;
}

TEST_F(RedisInterop, RDST15_FrameRoundTripCarriesTraceparent) {
  rd::Options o = options(rd::Layout::Default);
  o.pipelined_acks = false;
  rd::RedisTransport t(o);
  const rd::Keys k = t.keys(kQueue);
  const std::string body = envelope();
  const bq::Headers headers = {
      {"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
      {"baggage", "k=v"},
      {"dropped", ""}};
  const bq::Headers sent = {{"baggage", "k=v"}, {"traceparent", headers.at("traceparent")}};
  const std::string frame = frame_of(body, sent);  // keys in byte order (RDS-14)
  ASSERT_OK(t.publish_with_headers(kQueue, body, headers));
  EXPECT_EQ(raw().lrange(k.ready), Strings{frame});

  auto m = pop_now(t);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, body);  // the exact envelope, unframed (RDS-16)
  EXPECT_EQ(m->headers, sent);
  EXPECT_FALSE(m->poison) << m->poison_reason;
  EXPECT_EQ(raw().lrange(k.in_flight), Strings{frame});  // the handle keeps the stored frame
  const Strings member = members_of(raw(), k.schedule);
  ASSERT_EQ(member.size(), 1u);
  EXPECT_EQ(member[0].substr(32), ":" + frame);

  // A release keeps the frame around the new body (RDS-25).
  ASSERT_OK(t.release(*m, 0ms));
  const std::string next_body = replace_once(body, "\"attempts\":0", "\"attempts\":1");
  EXPECT_EQ(raw().lrange(k.ready), Strings{frame_of(next_body, sent)});
  auto again = pop_now(t);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->body, next_body);
  EXPECT_EQ(again->headers, sent);

  ASSERT_OK(t.ack(*again));  // matches the stored frame
  EXPECT_FALSE(raw().exists(k.in_flight));
  EXPECT_FALSE(raw().exists(k.schedule));
}

TEST_F(RedisInterop, RDST15_BlankHeadersPublishTheBareBody) {
  rd::RedisTransport t(options(rd::Layout::Default));
  const rd::Keys k = t.keys(kQueue);
  const std::string body = envelope();
  ASSERT_OK(t.publish_with_headers(kQueue, body, {}));
  ASSERT_OK(t.publish_with_headers(kQueue, body, {{"", "x"}, {"traceparent", ""}}));
  EXPECT_EQ(raw().lrange(k.ready), (Strings{body, body}));  // byte-identical to publish
  for (int i = 0; i < 2; ++i) {
    auto m = pop_now(t);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->body, body);
    EXPECT_TRUE(m->headers.empty());
    ASSERT_OK(t.ack(*m));
  }
}

TEST_F(RedisInterop, RDST15_DetectionNegativesAreDeliveredBare) {
  rd::Options o = options(rd::Layout::Default);
  o.pipelined_acks = false;
  rd::RedisTransport t(o);
  const rd::Keys k = t.keys(kQueue);
  const Strings negatives = {
      R"({"headers":{},"body":"x"})",                       // no sentinel
      R"({"__bq_frame":0,"headers":{},"body":"x"})",        // zero
      R"({"__bq_frame":1.0,"headers":{},"body":"x"})",      // not an integer lexeme
      R"({"__bq_frame":1e0,"headers":{},"body":"x"})",      // not an integer lexeme
      R"({"__bq_frame":true,"headers":{},"body":"x"})",     // not a number
      R"({"__bq_frame":"1","headers":{},"body":"x"})",      // not a number
      R"( {"__bq_frame":1,"headers":{},"body":"x"})",       // leading space
      R"({"__bq_frame":1,"headers":{"a":1},"body":"x"})",   // non-string header value
      R"({"__bq_frame":1,"headers":{},"body":{"job":1}})",  // body not a string
      R"({"__bq_frame":1,"headers":[],"body":"x"})",        // headers not an object
      R"({"__bq_frame":1,"headers":{},"body":"x")",         // not JSON
  };
  for (const std::string& v : negatives) {
    raw().command({"RPUSH", kQueue, v});
  }
  for (const std::string& v : negatives) {
    SCOPED_TRACE(v);
    auto m = pop_now(t);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->body, v);
    EXPECT_TRUE(m->headers.empty());
    ASSERT_OK(t.ack(*m));  // the handle is the stored value itself
  }
  EXPECT_FALSE(raw().exists(k.in_flight));
  EXPECT_FALSE(raw().exists(k.schedule));

  // The positive control: the same shape with a valid sentinel is a frame.
  raw().command({"RPUSH", kQueue, R"({"body":"x","__bq_frame":7,"headers":{"h":"v"}})"});
  auto framed = pop_now(t);
  ASSERT_TRUE(framed);
  EXPECT_EQ(framed->body, "x");
  EXPECT_EQ(framed->headers, (bq::Headers{{"h", "v"}}));
  ASSERT_OK(t.ack(*framed));
  EXPECT_FALSE(raw().exists(k.in_flight));
}

TEST_F(RedisInterop, RDST15_LaravelLayoutDropsHeaders) {
  rd::Options o = options(rd::Layout::Laravel);
  std::vector<std::string> warnings;  // written by the calling thread only
  o.logger = [&warnings](bq::LogLevel level, std::string_view text) {
    if (level == bq::LogLevel::Warning) warnings.emplace_back(text);
  };
  rd::RedisTransport t(o);
  const rd::Keys k = t.keys(kQueue);
  const std::string body = envelope();
  const bq::Headers headers{
      {"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}};
  ASSERT_OK(t.publish_with_headers(kQueue, body, headers));
  ASSERT_OK(t.publish_with_headers(kQueue, body, headers));
  // Nothing leaves without a word: the drop is logged, once per transport.
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("headers such as traceparent are dropped"), std::string::npos);
  auto first = pop_now(t);
  ASSERT_TRUE(first);
  ASSERT_OK(t.ack(*first));
  EXPECT_EQ(raw().lrange(k.ready), Strings{body});  // no frame: Laravel's pop would decode it
  EXPECT_EQ(raw().llen(k.notify), 1);
  auto m = pop_now(t);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, body);
  EXPECT_TRUE(m->headers.empty());
  ASSERT_OK(t.ack(*m));
}

// ----------------------------------------------------------------------------------- RDS-T16

TEST_F(RedisInterop, RDST16_MigrationMovesABatchPerPopDelayedFirstOneTokenEach) {
  rd::Options o = options(rd::Layout::Laravel);
  o.migration_batch_size = 2;
  rd::RedisTransport t(o);
  const rd::Keys k = t.keys(kQueue);
  Strings delayed;
  Strings reserved;
  const long long past = now_seconds() - 100;
  for (int i = 0; i < 5; ++i) {
    delayed.push_back(envelope(100 + i));
    reserved.push_back(envelope(200 + i));
    raw().command({"ZADD", k.schedule, std::to_string(past + i), delayed.back()});
    raw().command({"ZADD", k.in_flight, std::to_string(past + i), reserved.back()});
  }

  // Pop 1: d0 d1 from :delayed, then r0 r1 from :reserved, one token each; POP takes d0 and
  // one token.
  auto m = pop_now(t);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, delayed[0]);
  EXPECT_EQ(raw().lrange(k.ready), (Strings{delayed[1], reserved[0], reserved[1]}));
  EXPECT_EQ(raw().llen(k.notify), 3);
  EXPECT_EQ(raw().zcard(k.schedule), 3);
  EXPECT_EQ(raw().zcard(k.in_flight), 3 + 1);  // three due left + d0's reservation

  // Pop 2: two more of each, behind what was already ready.
  m = pop_now(t);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, delayed[1]);
  EXPECT_EQ(raw().lrange(k.ready),
            (Strings{reserved[0], reserved[1], delayed[2], delayed[3], reserved[2], reserved[3]}));
  EXPECT_EQ(raw().llen(k.notify), 6);
  EXPECT_EQ(raw().zcard(k.schedule), 1);

  // Pop 3: the last one of each.
  m = pop_now(t);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, reserved[0]);
  EXPECT_EQ(raw().lrange(k.ready).size(), 7u);
  EXPECT_EQ(raw().llen(k.notify), 7);
  EXPECT_EQ(raw().zcard(k.schedule), 0);
  const Strings ready = raw().lrange(k.ready);
  EXPECT_EQ(ready[5], delayed[4]);
  EXPECT_EQ(ready[6], reserved[4]);
}

TEST_F(RedisInterop, RDST16_DefaultLayoutSweepMovesABatchPerPop) {
  rd::RedisTransport crashed(options(rd::Layout::Default));
  const rd::Keys k = crashed.keys(kQueue);
  Strings bodies;
  for (int i = 0; i < 5; ++i) {
    bodies.push_back(envelope(i));
    ASSERT_OK(crashed.publish(kQueue, bodies.back()));
    ASSERT_TRUE(pop_now(crashed));
  }
  for (const std::string& m : members_of(raw(), k.schedule)) {
    make_due(raw(), k.schedule, m);
  }

  rd::Options o = options(rd::Layout::Default);
  o.migration_batch_size = 2;
  rd::RedisTransport t(o);
  auto m = pop_now(t);  // two swept to the tail, the first of them reserved again
  ASSERT_TRUE(m);
  EXPECT_EQ(raw().llen(k.ready), 1);
  EXPECT_EQ(raw().zcard(k.schedule), 3 + 1);
  EXPECT_EQ(raw().llen(k.in_flight), 4);
  m = pop_now(t);
  ASSERT_TRUE(m);
  EXPECT_EQ(raw().llen(k.ready), 2);
  EXPECT_EQ(raw().zcard(k.schedule), 1 + 2);
}

// ----------------------------------------------------------------------------------- RDS-T17

TEST_F(RedisInterop, RDST17_KeyNamesOfOneQueueInBothLayouts) {
  {
    rd::RedisTransport t(options(rd::Layout::Default));
    const rd::Keys k = t.keys(kQueue);
    EXPECT_EQ(k.ready, "orders");
    EXPECT_EQ(k.in_flight, "orders:processing");
    EXPECT_EQ(k.schedule, "orders:processing:deadlines");
    EXPECT_EQ(k.notify, "");
    ASSERT_OK(t.publish_batch(kQueue, {envelope(1), envelope(2), envelope(3)}));
    auto m = pop_now(t);
    ASSERT_TRUE(m);
    ASSERT_OK(t.dead_letter(*m, "orders.dlq", "{}"));
    ASSERT_TRUE(pop_now(t));
    EXPECT_EQ(all_keys(raw()), (Strings{"orders", "orders.dlq", "orders:processing",
                                        "orders:processing:deadlines"}));
  }
  flush_all();
  {
    rd::Options o = options(rd::Layout::Default);
    o.processing_suffix = ":inflight";
    rd::RedisTransport t(o);
    EXPECT_EQ(t.keys(kQueue).in_flight, "orders:inflight");
    EXPECT_EQ(t.keys(kQueue).schedule, "orders:inflight:deadlines");
    ASSERT_OK(t.publish(kQueue, envelope()));
    ASSERT_TRUE(pop_now(t));
    EXPECT_EQ(all_keys(raw()), (Strings{"orders:inflight", "orders:inflight:deadlines"}));
  }
  // Go WithLaravelLayout("queues:"), Node layout "zset", Python laravel_compat and Laravel with
  // an empty client prefix all address these four keys; with a client prefix it is in front.
  for (const std::string prefix : {"queues:", kLaravelPrefix}) {
    SCOPED_TRACE(prefix);
    flush_all();
    rd::RedisTransport t(options(rd::Layout::Laravel, prefix));
    LaravelPeer peer(raw(), prefix);
    const rd::Keys k = t.keys(kQueue);
    EXPECT_EQ(k.ready, prefix + "orders");
    EXPECT_EQ(k.in_flight, prefix + "orders:reserved");
    EXPECT_EQ(k.schedule, prefix + "orders:delayed");
    EXPECT_EQ(k.notify, prefix + "orders:notify");
    EXPECT_EQ(k.ready, peer.ready_key(kQueue));
    EXPECT_EQ(k.in_flight, peer.reserved_key(kQueue));
    EXPECT_EQ(k.schedule, peer.delayed_key(kQueue));
    EXPECT_EQ(k.notify, peer.notify_key(kQueue));
    ASSERT_OK(t.publish_batch(kQueue, {envelope(1), envelope(2), envelope(3)}));
    ASSERT_OK(t.publish_delayed(kQueue, envelope(4), 60s));
    auto m = pop_now(t);
    ASSERT_TRUE(m);
    ASSERT_OK(t.dead_letter(*m, "orders.dlq", "{}"));
    ASSERT_TRUE(pop_now(t));
    EXPECT_EQ(all_keys(raw()), (Strings{prefix + "orders", prefix + "orders.dlq",
                                        prefix + "orders.dlq:notify", prefix + "orders:delayed",
                                        prefix + "orders:notify", prefix + "orders:reserved"}));
  }
}

// ----------------------------------------------------------------------------------- RDS-T18

TEST_F(RedisInterop, RDST18_DefaultLayoutPollTimingBacksOffAndResetsAfterAReserve) {
  rd::RedisTransport t(options(rd::Layout::Default));
  // Rounds a Pop makes: a sleep never ends early, so a slow machine can only make fewer rounds
  // than the backoff allows, never more; the upper bounds below hold at any speed.
  auto timed_empty_pop = [&](std::chrono::milliseconds timeout, long long& rounds) {
    const long long calls = evalsha_calls(raw());
    const auto start = Clock::now();
    auto got = t.pop(kQueue, timeout);
    const auto elapsed = Clock::now() - start;
    EXPECT_TRUE(got.has_value() && !got->has_value());
    rounds = (evalsha_calls(raw()) - calls) / 2;
    return elapsed;
  };

  // Fresh: 100 ms, then 200 ms (cut to the 150 ms left): rounds at 0, 100 and 250 ms.
  long long rounds = 0;
  const auto first = timed_empty_pop(250ms, rounds);
  EXPECT_GE(first, 250ms);
  EXPECT_LT(first, 1000ms);
  EXPECT_GE(rounds, 2);
  EXPECT_LE(rounds, 3);

  // The backoff (now 400 ms) persists across Pops: one sleep covers the whole 250 ms.
  for (int i = 0; i < 2; ++i) {
    const auto elapsed = timed_empty_pop(250ms, rounds);
    EXPECT_GE(elapsed, 250ms);
    EXPECT_LE(rounds, 2) << "pop " << i + 2 << ": the backoff did not survive the previous Pop";
  }

  // A reserve resets it to 100 ms: a 500 ms Pop polls at 0, 100, 300 and 500 ms again.
  ASSERT_OK(t.publish(kQueue, envelope()));
  auto m = pop_now(t);
  ASSERT_TRUE(m);
  ASSERT_OK(t.ack(*m));
  ASSERT_OK(t.flush());
  const auto after_reset = timed_empty_pop(500ms, rounds);
  EXPECT_GE(after_reset, 500ms);
  EXPECT_GE(rounds, 3) << "the backoff was not reset by the reserve";
  EXPECT_LE(rounds, 4);
}

// ----------------------------------------------------------------------------------- RDS-T19

TEST_F(RedisInterop, RDST19_HashTaggedQueueRunsEveryScriptOnAClusterNode) {
  // A one-node cluster that serves only the slot of "{orders}": Redis answers CROSSSLOT to a
  // script whose KEYS span two slots and fails a script that touches an undeclared key of
  // another slot ("non local key"). So every script the transport runs here is checked by the
  // server itself; plain commands are checked by the key names at the end.
  RedisServer::Config config;
  // The cluster bus port is explicit: the default, port + 10000, does not exist for the high
  // free ports a test server gets.
  config.extra_args = {"--cluster-enabled",
                       "yes",
                       "--cluster-config-file",
                       "nodes.conf",
                       "--cluster-require-full-coverage",
                       "no",
                       "--cluster-port",
                       std::to_string(free_loopback_port())};
  RedisServer cluster(config);
  RawClient raw(cluster.port());
  const long long slot = raw.command({"CLUSTER", "KEYSLOT", "{orders}"}).as_integer();
  ASSERT_EQ(raw.command({"CLUSTER", "ADDSLOTS", std::to_string(slot)}).str, "OK");
  // A new cluster node refuses writes for about 2 s after it starts (Redis' writable delay);
  // polled, not slept.
  const auto deadline = Clock::now() + 10s;
  while (raw.command({"SET", "{orders}:probe", "1"}).is_error()) {
    ASSERT_LT(Clock::now(), deadline) << "the one-node cluster never accepted a write";
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(raw.command({"DEL", "{orders}:probe"}).integer, 1);
  // Controls: the node rejects what a missing hash tag would cause, and accepts the tagged form.
  const Reply cross = raw.command({"EVAL", "return 1", "2", "{orders}", "orders:processing"});
  EXPECT_TRUE(cross.is_error() && cross.str.starts_with("CROSSSLOT")) << cross.debug_string();
  EXPECT_TRUE(
      raw.command({"EVAL", "return redis.call('LLEN', 'orders:processing')", "1", "{orders}"})
          .is_error());
  EXPECT_FALSE(
      raw.command({"EVAL", "return redis.call('LLEN', '{orders}:processing')", "1", "{orders}"})
          .is_error());

  const std::string q = "{orders}";
  const std::string dlq = "{orders}.dlq";
  auto run = [&](rd::Layout layout) {
    SCOPED_TRACE(name_of(layout));
    rd::Options o = rd::parse_url(cluster.url());
    o.layout = layout;
    o.prefetch = 2;
    o.logger = log_.sink();
    {
      rd::RedisTransport t(o);
      EXPECT_OK(t.publish(q, envelope(1)));
      EXPECT_OK(t.publish_with_headers(q, envelope(2), {{"traceparent", "00-ab-cd-01"}}));
      EXPECT_OK(t.publish_batch(q, {envelope(3), envelope(4), envelope(5), envelope(6)}));
      if (layout == rd::Layout::Laravel) {
        EXPECT_OK(t.publish_delayed(q, envelope(7), 60s));
      }
      auto m1 = pop_now(t, q);  // sweep / migrate + a batched reserve of two
      auto m2 = pop_now(t, q);  // the prefetched one
      ASSERT_TRUE(m1 && m2);
      EXPECT_OK(t.ack(*m1));  // pipelined: rides on the next reserve
      EXPECT_OK(t.release(*m2, 0ms));
      auto m3 = pop_now(t, q);  // pending ack + sweep/migrate + reserve, one round trip
      ASSERT_TRUE(m3);
      EXPECT_OK(t.dead_letter(*m3, dlq, "{\"dead\":1}"));
      t.close();  // the give-back script returns the prefetched fourth message
    }
    // A consumer dies holding reservations; another recovers them (sweep / migrate with work).
    rd::RedisTransport crashed(o);
    ASSERT_TRUE(pop_now(crashed, q));
    const rd::Keys k = crashed.keys(q);
    const std::string reservations = layout == rd::Layout::Default ? k.schedule : k.in_flight;
    const Strings held = members_of(raw, reservations);
    EXPECT_EQ(held.size(), 2u);
    for (const std::string& m : held) {
      make_due(raw, reservations, m);
    }
    if (layout == rd::Layout::Laravel) {
      for (const std::string& m : members_of(raw, k.schedule)) {
        make_due(raw, k.schedule, m);
      }
    }
    rd::RedisTransport rescuer(o);
    auto recovered = pop_now(rescuer, q);
    ASSERT_TRUE(recovered);
    EXPECT_OK(rescuer.ack(*recovered));
    EXPECT_OK(rescuer.flush());
    rescuer.close();
    crashed.close();  // its give-back finds the swept member gone: nothing to do

    const std::string dlq_key = crashed.keys(dlq).ready;  // default: verbatim; Laravel: prefixed
    EXPECT_EQ(raw.lrange(dlq_key), Strings{"{\"dead\":1}"});
    const Strings keys = all_keys(raw);
    EXPECT_GE(keys.size(), 2u);  // at least the ready list and the DLQ
    for (const std::string& key : keys) {
      EXPECT_NE(key.find("{orders}"), std::string::npos) << key;
    }
    // The only warning: the Laravel layout says once that it drops the traceparent (RDS-43).
    const std::size_t dropped = log_.warnings_with({"stores no out-of-band headers"});
    EXPECT_EQ(dropped, layout == rd::Layout::Laravel ? 1u : 0u) << log_.dump();
    EXPECT_EQ(log_.warnings_with({}), dropped) << log_.dump();
  };
  run(rd::Layout::Default);
  ASSERT_EQ(raw.command({"FLUSHALL"}).str, "OK");
  run(rd::Layout::Laravel);
  // The DLQ keys land in the queue's slot (RDS-6).
  EXPECT_EQ(raw.command({"CLUSTER", "KEYSLOT", "queues:{orders}.dlq"}).integer, slot);
}

// --------------------------------------------------------------------- prefetch and acks

TEST_F(RedisInterop, RDS17_PrefetchReservesInOneRoundTripAndCloseGivesTheRestBack) {
  for (const rd::Layout layout : kBothLayouts) {
    SCOPED_TRACE(name_of(layout));
    flush_all();
    rd::Options o = options(layout);
    o.prefetch = 4;
    rd::RedisTransport t(o);
    const rd::Keys k = t.keys(kQueue);
    Strings bodies;
    for (int i = 0; i < 5; ++i) {
      bodies.push_back(envelope(i));
    }
    ASSERT_OK(t.publish_batch(kQueue, bodies));
    const long long calls = evalsha_calls(raw());
    auto first = pop_now(t);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->body, bodies[0]);
    // One round trip: default SWEEP + RESERVE, Laravel two MIGRATEs + POP; four reservations,
    // each with its own member.
    EXPECT_EQ(evalsha_calls(raw()) - calls, layout == rd::Layout::Default ? 2 : 3);
    if (layout == rd::Layout::Default) {
      EXPECT_EQ(raw().zcard(k.schedule), 4);
      EXPECT_EQ(raw().lrange(k.in_flight), (Strings{bodies[0], bodies[1], bodies[2], bodies[3]}));
    } else {
      EXPECT_EQ(raw().zcard(k.in_flight), 4);
      EXPECT_EQ(raw().llen(k.notify), 1);  // one token per reserved job
    }
    EXPECT_EQ(raw().lrange(k.ready), Strings{bodies[4]});

    t.close();  // the three never handed out go back to the head, in order
    EXPECT_EQ(raw().lrange(k.ready), (Strings{bodies[1], bodies[2], bodies[3], bodies[4]}));
    if (layout == rd::Layout::Default) {
      EXPECT_EQ(raw().lrange(k.in_flight), Strings{bodies[0]});
      const Strings left = members_of(raw(), k.schedule);
      ASSERT_EQ(left.size(), 1u);
      EXPECT_EQ(left[0].substr(32), ":" + bodies[0]);
    } else {
      EXPECT_EQ(raw().zcard(k.in_flight), 1);
      EXPECT_EQ(raw().llen(k.notify), 4);  // their tokens are back too
    }
  }
}

TEST_F(RedisInterop, RDS24_PipelinedAcksAreAppliedByTheNextPopFlushOrClose) {
  for (const rd::Layout layout : kBothLayouts) {
    SCOPED_TRACE(name_of(layout));
    flush_all();
    rd::RedisTransport t(options(layout));  // pipelined_acks is the default
    ASSERT_TRUE(t.options().pipelined_acks);
    const rd::Keys k = t.keys(kQueue);
    auto in_flight = [&] {
      return layout == rd::Layout::Default ? raw().llen(k.in_flight) : raw().zcard(k.in_flight);
    };
    const Strings bodies = {envelope(1), envelope(2), envelope(3)};
    ASSERT_OK(t.publish_batch(kQueue, bodies));

    auto m1 = pop_now(t);
    ASSERT_TRUE(m1);
    ASSERT_OK(t.ack(*m1));
    EXPECT_EQ(in_flight(), 1);  // held back
    auto m2 = pop_now(t);       // the held ack goes out with this reserve
    ASSERT_TRUE(m2);
    EXPECT_EQ(in_flight(), 1);
    if (layout == rd::Layout::Default) {
      EXPECT_EQ(raw().lrange(k.in_flight), Strings{bodies[1]});
    }

    ASSERT_OK(t.ack(*m2));
    EXPECT_EQ(in_flight(), 1);
    ASSERT_OK(t.flush());
    EXPECT_EQ(in_flight(), 0);

    auto m3 = pop_now(t);
    ASSERT_TRUE(m3);
    ASSERT_OK(t.ack(*m3));
    EXPECT_EQ(in_flight(), 1);
    t.close();
    EXPECT_EQ(in_flight(), 0);
    if (layout == rd::Layout::Default) {
      EXPECT_FALSE(raw().exists(k.schedule));
    }
    EXPECT_EQ(log_.warnings_with({"reservation expired"}), 0u) << log_.dump();
  }
}

}  // namespace
