// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// RedisTransport and the App under faults (spec/03-redis.md, README D-3): redis-server killed with
// SIGKILL and restarted mid-run (appendonly, appendfsync always), CLIENT KILL of the worker's
// connections, a handler slower than retry_after, a server that is down when the worker starts,
// still loading its AOF, or down when a message is published, a flushed script cache, and refused
// credentials. The invariant
// throughout: every meta.id a publish returned is handled or in the dead-letter queue, never lost;
// duplicates are allowed (at-least-once).
//
// Waits poll with short sleeps under generous bounds. The only real waiting is for retry_after,
// which Redis scores in whole seconds, so a reservation expires 0..1 s after retry_after - 1 s.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/errors.hpp>
#include <babelqueue/redis/transport.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "raw_client.hpp"
#include "redis_server.hpp"
#include "server_test.hpp"

namespace bq = babelqueue;
namespace rd = babelqueue::redis;
using namespace std::chrono_literals;
using rd::test::RawClient;
using rd::test::RedisServer;
using Clock = std::chrono::steady_clock;

namespace {

constexpr char kQueue[] = "orders";
constexpr char kUrn[] = "urn:babel:orders:created";
// How often a wait re-checks its condition.
constexpr auto kPollEvery = 5ms;
// Upper bound of any single "this must happen soon" wait; generous for a loaded 2-core machine.
constexpr auto kSoon = 15s;

// Polls `done` until it is true or `within` has passed; the final answer.
template <class Pred>
bool eventually(Pred&& done, Clock::duration within = kSoon) {
  const auto deadline = Clock::now() + within;
  for (;;) {
    if (done()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPollEvery);
  }
}

std::string layout_name(const ::testing::TestParamInfo<rd::Layout>& info) {
  return info.param == rd::Layout::Default ? "Default" : "Laravel";
}

// Log lines of the App and the transport, written from several threads. Keeping them (instead of
// the default stderr logger) lets a test assert on a warning and print the tail when it fails.
class LogSink {
 public:
  std::function<void(bq::LogLevel, std::string_view)> logger() {
    return [this](bq::LogLevel, std::string_view text) {
      std::lock_guard lock(mu_);
      lines_.emplace_back(text);
    };
  }
  std::vector<std::string> matching(std::string_view needle) const {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const std::string& line : lines_) {
      if (line.find(needle) != std::string::npos) out.push_back(line);
    }
    return out;
  }
  std::string tail(std::size_t n = 15) const {
    std::lock_guard lock(mu_);
    std::string out;
    for (std::size_t i = lines_.size() > n ? lines_.size() - n : 0; i < lines_.size(); ++i) {
      out += "  " + lines_[i] + "\n";
    }
    return out.empty() ? "  (no log lines)\n" : out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

// What the consumer's handler saw: every run per meta.id and the ids whose handler succeeded.
class Tally {
 public:
  void ran(const std::string& id, bool succeeded) {
    std::lock_guard lock(mu_);
    ++runs_[id];
    if (succeeded) handled_.insert(id);
  }
  int runs(const std::string& id) const {
    std::lock_guard lock(mu_);
    const auto it = runs_.find(id);
    return it == runs_.end() ? 0 : it->second;
  }
  std::size_t handled_count() const {
    std::lock_guard lock(mu_);
    return handled_.size();
  }
  std::set<std::string> handled() const {
    std::lock_guard lock(mu_);
    return handled_;
  }
  std::map<std::string, int> all_runs() const {
    std::lock_guard lock(mu_);
    return runs_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, int> runs_;
  std::set<std::string> handled_;
};

// A one-shot signal between threads.
class Gate {
 public:
  void open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  bool is_open() const {
    std::lock_guard lock(mu_);
    return open_;
  }
  // True when opened within `within`.
  bool wait(Clock::duration within = kSoon) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, within, [&] { return open_; });
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Runs `fn` when the scope ends, so a helper thread is joined even when an assertion returns early.
class ScopeExit {
 public:
  explicit ScopeExit(std::function<void()> fn) : fn_(std::move(fn)) {}
  ~ScopeExit() { fn_(); }
  ScopeExit(const ScopeExit&) = delete;
  ScopeExit& operator=(const ScopeExit&) = delete;

 private:
  std::function<void()> fn_;
};

// Options for a transport to `server` in `layout`, logging into `log`.
rd::Options transport_options(const RedisServer& server, rd::Layout layout, LogSink& log) {
  rd::Options o = rd::parse_url(server.url());
  o.layout = layout;
  o.logger = log.logger();
  return o;
}

// An App that publishes to `server` in `layout`, logging into `log`.
bq::App publishing_app(const RedisServer& server, rd::Layout layout, LogSink& log) {
  bq::AppOptions o;
  o.logger = log.logger();
  return bq::App(std::make_shared<rd::RedisTransport>(transport_options(server, layout, log)), o);
}

// A consumer App on its own thread. It counts what D-3 says the hooks must see: every pop error
// consume rides out goes to on_consume_error, which is only ever given transient errors.
class Worker {
 public:
  Worker(std::shared_ptr<rd::RedisTransport> transport, bq::AppOptions options, LogSink& log)
      : transport_(transport), app_(std::move(transport), hooked(std::move(options), log)) {}
  ~Worker() {
    app_.stop();
    if (thread_.joinable()) thread_.join();
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  bq::App& app() { return app_; }
  rd::RedisTransport& transport() { return *transport_; }
  // The key of the dead-letter list of `queue` in this transport's layout.
  std::string dead_letter_key(std::string_view queue) const {
    return transport_->keys(app_.dead_letter_queue_for(queue)).ready;
  }

  void start(std::string queue = kQueue) {
    thread_ = std::thread([this, queue = std::move(queue)] {
      bq::Status st = app_.consume(queue);
      std::lock_guard lock(mu_);
      result_ = std::move(st);
    });
  }
  bool returned() const {
    std::lock_guard lock(mu_);
    return result_.has_value();
  }
  // What consume returned; only after `returned()`.
  bq::Status result() const {
    std::lock_guard lock(mu_);
    return *result_;
  }
  // Stops the App and waits for consume to return (within one poll timeout).
  bq::Status stop() {
    app_.stop();
    if (thread_.joinable()) thread_.join();
    return result();
  }

  int consume_errors() const { return consume_errors_.load(); }
  int non_transient_consume_errors() const { return non_transient_consume_errors_.load(); }

 private:
  bq::AppOptions hooked(bq::AppOptions o, LogSink& log) {
    o.logger = log.logger();
    o.on_consume_error = [this](const bq::Error& e, std::chrono::milliseconds) {
      ++consume_errors_;
      if (!e.is_transient()) ++non_transient_consume_errors_;
    };
    return o;
  }

  std::atomic<int> consume_errors_{0};
  std::atomic<int> non_transient_consume_errors_{0};
  std::shared_ptr<rd::RedisTransport> transport_;
  bq::App app_;
  mutable std::mutex mu_;
  std::optional<bq::Status> result_;
  std::thread thread_;
};

// A default-layout worker whose handler succeeds and counts every run in `tally`: for the cases
// about the server (down at start, still loading), in which the handler plays no part.
class TallyingWorker : public Worker {
 public:
  TallyingWorker(const RedisServer& server, LogSink& log, Tally& tally)
      : Worker(std::make_shared<rd::RedisTransport>(
                   transport_options(server, rd::Layout::Default, log)),
               polling_every_200ms(), log) {
    const bq::Handler count = [&tally](bq::Context&, const bq::Envelope& env) -> bq::Status {
      tally.ran(std::string(env.meta().id), true);
      return {};
    };
    app().handle(kUrn, count);
  }

 private:
  static bq::AppOptions polling_every_200ms() {
    bq::AppOptions o;
    o.poll_timeout = 200ms;
    return o;
  }
};

// Counts of a publisher that retries.
class PublishStats {
 public:
  void failed(const bq::Error& e) {
    ++failures;
    if (e.is_transient()) return;
    std::lock_guard lock(mu_);
    if (non_transient_++ == 0) first_non_transient_ = e.what();
  }
  int non_transient() const {
    std::lock_guard lock(mu_);
    return non_transient_;
  }
  // For assertion messages.
  std::string first_non_transient() const {
    std::lock_guard lock(mu_);
    return non_transient_ == 0 ? "none" : first_non_transient_;
  }

  std::atomic<int> failures{0};

 private:
  mutable std::mutex mu_;
  int non_transient_ = 0;
  std::string first_non_transient_;
};

// App::publish of {"n": n}, retried while it throws a transient error, until `deadline`. Returns
// the meta.id of the publish that returned, or nullopt (deadline, or a non-transient error). A
// publish that threw may still have been stored (its reply was lost): that adds a message nobody
// waits for, never a loss.
std::optional<std::string> publish_retrying(bq::App& app, int n, Clock::time_point deadline,
                                            PublishStats& stats) {
  bq::PublishOptions po;
  po.queue = kQueue;
  for (;;) {
    try {
      return app.publish(kUrn, bq::Json::object({{"n", n}}), po);
    } catch (const bq::Error& e) {
      stats.failed(e);
      if (!e.is_transient()) return std::nullopt;
    }
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(2ms);
  }
}

// meta.id of every record in the dead-letter list `key`.
std::set<std::string> dead_lettered_ids(RawClient& raw, const std::string& key) {
  std::set<std::string> ids;
  for (const std::string& record : raw.lrange(key)) {
    auto env = bq::try_decode(record);
    ids.emplace(env ? std::string(env->meta().id) : "<undecodable record: " + record + ">");
  }
  return ids;
}

// The published ids that are neither handled nor dead-lettered.
std::vector<std::string> unaccounted(const std::vector<std::string>& published,
                                     const std::set<std::string>& handled,
                                     const std::set<std::string>& dead) {
  std::vector<std::string> out;
  for (const std::string& id : published) {
    if (!handled.contains(id) && !dead.contains(id)) out.push_back(id);
  }
  return out;
}

std::string first_few(const std::vector<std::string>& ids, std::size_t n = 5) {
  std::string out;
  for (std::size_t i = 0; i < ids.size() && i < n; ++i)
    out += (i ? ", " : "") + ids[i];
  return out;
}

// Messages reserved and not settled: the processing list (default layout) or :reserved (Laravel).
long long in_flight(RawClient& raw, const rd::Keys& k, rd::Layout layout) {
  return layout == rd::Layout::Default ? raw.llen(k.in_flight) : raw.zcard(k.in_flight);
}

// The raw in-flight entries: processing-list values (legacy) or :reserved members (Laravel).
std::vector<std::string> in_flight_entries(RawClient& raw, const rd::Keys& k, rd::Layout layout) {
  if (layout == rd::Layout::Default) return raw.lrange(k.in_flight);
  std::vector<std::string> members;
  for (auto& [member, score] : raw.zrange_withscores(k.in_flight))
    members.push_back(std::move(member));
  return members;
}

// A counter from INFO errorstats ("errorstat_NOSCRIPT:count=3,..."), 0 when not listed.
long long error_stat(RawClient& raw, const std::string& error) {
  const std::string info = raw.command({"INFO", "errorstats"}).as_string();
  const std::string needle = "errorstat_" + error + ":count=";
  const std::size_t at = info.find(needle);
  return at == std::string::npos ? 0 : std::stoll(info.substr(at + needle.size()));
}

class RedisFault : public ::testing::TestWithParam<rd::Layout> {
 protected:
  void SetUp() override { BABELQUEUE_REQUIRE_REDIS_SERVER(); }
  rd::Layout layout() const { return GetParam(); }
};

// A fixture for the cases that do not depend on the layout.
class RedisFaultSingle : public ::testing::Test {
 protected:
  void SetUp() override { BABELQUEUE_REQUIRE_REDIS_SERVER(); }
};

// ------------------------------------------------------------------------------------------------
// Issue requirement + D-3: redis-server killed (SIGKILL) and restarted while a publisher and a
// worker run. With appendonly (appendfsync always) every acknowledged write survives, the worker
// rides out the outage and every published meta.id ends up handled or dead-lettered.
//
// Reservations in flight at the kill (RDS-18/19, RDS-51/59; issue 8 item 14): when the kill comes,
// the worker's handlers are paused (so it reserves and sweeps nothing) and a second consumer has
// just reserved kDoomed messages and died with them; the test checks on the server that they
// are in flight, kills it, and requires the restarted server's recovery sweep to deliver them
// to the worker. Without the sweep they would be lost: the test does not depend on the kill
// landing in the middle of a reserve by luck.
TEST_P(RedisFault, D3_ServerKilledAndRestartedMidRunLosesNoMessage) {
  constexpr int kMessages = 1000;
  constexpr int kAlwaysFailsEvery = 125;  // -> dead-lettered after max_attempts
  constexpr int kFailsOnceEvery = 50;     // n % 50 == 7 fails on its first delivery only
  constexpr std::size_t kHandledBeforeKill = 100;
  constexpr int kDoomed = 5;  // reserved by the consumer that dies before the kill
  const auto deadline = Clock::now() + 60s;

  RedisServer server(RedisServer::Config{.appendonly = true});
  LogSink log;
  Tally tally;  // declared before the worker, whose handlers use it until the worker is gone

  rd::Options consumer_options = transport_options(server, layout(), log);
  // Reservations whose reply was lost in the crash come back after 1..2 s.
  consumer_options.retry_after = 2s;
  bq::AppOptions app_options;
  app_options.dead_letter = true;
  app_options.max_attempts = 3;
  app_options.concurrency = 2;
  app_options.poll_timeout = 200ms;
  Worker worker(std::make_shared<rd::RedisTransport>(consumer_options), app_options, log);
  Gate resume;  // opened at the kill: the paused handlers carry on
  std::atomic<int> paused{0};
  const ScopeExit resume_handlers([&] { resume.open(); });  // before the worker is joined
  const bq::Handler handler = [&](bq::Context&, const bq::Envelope& env) -> bq::Status {
    if (!resume.is_open() && tally.handled_count() >= kHandledBeforeKill) {
      ++paused;
      resume.wait();
    }
    const std::string id(env.meta().id);
    const std::int64_t n = env.data().find("n")->as_int64().value_or(-1);
    if (n % kAlwaysFailsEvery == 0) {
      tally.ran(id, false);
      throw std::runtime_error("always fails");
    }
    if (n % kFailsOnceEvery == 7 && env.attempts() == 0) {
      tally.ran(id, false);
      return bq::Error(bq::ErrorCode::Handler, "fails on the first delivery");
    }
    tally.ran(id, true);
    return {};
  };
  worker.app().handle(kUrn, handler);

  bq::App publisher = publishing_app(server, layout(), log);

  std::mutex published_mu;
  std::vector<std::string> published;  // ids of the publishes that returned
  std::set<std::string> always_failing;
  PublishStats publish_stats;
  Gate half_published;
  Gate fault_injected;
  std::atomic<bool> publisher_done{false};
  std::atomic<bool> publisher_gave_up{false};
  std::atomic<bool> abandon{false};

  worker.start();
  std::thread publisher_thread([&] {
    for (int n = 1; n <= kMessages && !abandon; ++n) {
      if (n == kMessages / 2 + 1) {
        // Mid-run: let the main thread kill the server before the second half.
        half_published.open();
        fault_injected.wait();
      }
      std::optional<std::string> id = publish_retrying(publisher, n, deadline, publish_stats);
      if (!id) {
        publisher_gave_up = true;
        break;
      }
      std::lock_guard lock(published_mu);
      published.push_back(*id);
      if (n % kAlwaysFailsEvery == 0) always_failing.insert(*id);
    }
    publisher_done = true;
  });
  const ScopeExit join_publisher([&] {
    abandon = true;
    fault_injected.open();
    publisher_thread.join();
  });

  // Kill the server while the worker is in the middle of the first half, with kDoomed
  // reservations of a dead consumer in flight.
  ASSERT_TRUE(half_published.wait(30s));
  ASSERT_TRUE(eventually([&] { return paused.load() == app_options.concurrency; }, 30s))
      << "the worker handled only " << tally.handled_count() << " messages\n"
      << log.tail();
  std::map<std::string, int> doomed;  // meta.id -> handler runs before the kill
  {
    rd::Options o = transport_options(server, layout(), log);
    o.prefetch = 1;  // it holds exactly what it popped
    // Due 2..3 s after the reserve: long after the kill, soon after the restart.
    o.retry_after = 3s;
    rd::RedisTransport dying(o);
    for (int i = 0; i < kDoomed; ++i) {
      auto popped = dying.pop(kQueue, kSoon);
      ASSERT_TRUE(popped.has_value()) << popped.error().what();
      ASSERT_TRUE(popped->has_value()) << "the queue ran dry";
      auto env = bq::try_decode((*popped)->body);
      ASSERT_TRUE(env.has_value()) << (*popped)->body;
      const std::string id(env->meta().id);
      doomed.emplace(id, tally.runs(id));
    }
    RawClient raw_at_kill(server.port());
    const rd::Keys k = dying.keys(kQueue);
    const std::vector<std::string> entries = in_flight_entries(raw_at_kill, k, layout());
    for (const auto& [id, runs] : doomed) {
      EXPECT_TRUE(std::any_of(entries.begin(), entries.end(),
                              [&](const std::string& e) { return e.find(id) != e.npos; }))
          << id << " is not in flight at the kill";
    }
    EXPECT_GE(in_flight(raw_at_kill, k, layout()), kDoomed);
  }  // closing gives back nothing: prefetch 1, every reservation was handed out
  server.kill();
  resume.open();
  fault_injected.open();
  std::this_thread::sleep_for(200ms);  // the outage: publisher and worker hit a dead server
  server.start();  // returns once PING answers PONG, i.e. after the AOF is loaded

  RawClient raw(server.port());
  const std::string dlq_key = worker.dead_letter_key(kQueue);
  auto missing = [&] {
    std::lock_guard lock(published_mu);
    return unaccounted(published, tally.handled(), dead_lettered_ids(raw, dlq_key));
  };
  // Done when every id is accounted for, or when nothing can change any more.
  (void)eventually([&] { return publisher_done && (worker.returned() || missing().empty()); },
                   deadline - Clock::now());
  const bq::Status consumed = worker.stop();
  const std::vector<std::string> lost = missing();

  EXPECT_TRUE(publisher_done);
  EXPECT_FALSE(publisher_gave_up) << "a publish kept failing: " << log.tail();
  EXPECT_EQ(publish_stats.non_transient(), 0)
      << "first non-transient publish error: " << publish_stats.first_non_transient();
  EXPECT_GE(publish_stats.failures.load(), 1) << "the publisher never saw the outage";
  std::lock_guard lock(published_mu);
  EXPECT_EQ(published.size(), static_cast<std::size_t>(kMessages));
  EXPECT_TRUE(lost.empty()) << lost.size() << " of " << published.size()
                            << " published ids neither handled nor dead-lettered, e.g. "
                            << first_few(lost) << "\nlog tail:\n"
                            << log.tail();
  for (const auto& [id, runs_before_kill] : doomed) {
    EXPECT_GT(tally.runs(id), runs_before_kill)
        << id << " was in flight at the kill and never recovered (RDS-19, RDS-51)";
  }
  // Every message that always fails is dead-lettered, and only those are.
  const std::set<std::string> dead = dead_lettered_ids(raw, dlq_key);
  for (const std::string& id : always_failing)
    EXPECT_TRUE(dead.contains(id)) << id;
  for (const std::string& record : raw.lrange(dlq_key)) {
    const bq::Envelope env = bq::decode(record);
    EXPECT_EQ(env.data().find("n")->as_int64().value_or(-1) % kAlwaysFailsEvery, 0) << record;
  }
  EXPECT_GE(worker.consume_errors(), 1) << "the worker never saw the outage while consuming";
  EXPECT_EQ(worker.non_transient_consume_errors(), 0);
  EXPECT_TRUE(consumed.ok()) << consumed.error().what();
}

// ------------------------------------------------------------------------------------------------
// Issue requirement + D-3: CLIENT KILL of every connection of the worker (and the publisher) while
// the worker is in the middle of the queue. The worker reconnects and carries on; the acks queued
// when the connection died are sent again, so nothing is lost and nothing is redelivered.
TEST_P(RedisFault, D3_ClientKillOfTheWorkersConnectionsLosesNothing) {
  constexpr int kMessages = 300;
  constexpr std::size_t kBlockAt = 100;  // the handler run during which the connections die
  const auto deadline = Clock::now() + 30s;

  RedisServer server;
  LogSink log;
  Tally tally;
  Gate blocked;
  Gate killed;
  bq::AppOptions app_options;
  app_options.poll_timeout = 200ms;
  // The default retry_after (90 s) is far beyond this test: no reservation may need recovery.
  Worker worker(std::make_shared<rd::RedisTransport>(transport_options(server, layout(), log)),
                app_options, log);
  const ScopeExit unblock([&] { killed.open(); });  // before the worker is joined
  const bq::Handler handler = [&](bq::Context&, const bq::Envelope& env) -> bq::Status {
    tally.ran(std::string(env.meta().id), true);
    if (tally.handled_count() == kBlockAt) {
      // The worker's connection is idle in its pool now; the main thread kills it.
      blocked.open();
      killed.wait();
    }
    return {};
  };
  worker.app().handle(kUrn, handler);

  bq::App publisher = publishing_app(server, layout(), log);
  PublishStats publish_stats;
  std::vector<std::string> published;
  for (int n = 1; n <= kMessages / 2; ++n) {
    auto id = publish_retrying(publisher, n, deadline, publish_stats);
    ASSERT_TRUE(id) << log.tail();
    published.push_back(*id);
  }

  worker.start();
  ASSERT_TRUE(blocked.wait()) << "handled " << tally.handled_count() << "\n" << log.tail();
  RawClient raw(server.port());
  const std::vector<long long> clients = raw.client_ids_except_self();
  EXPECT_GE(clients.size(), 2u) << "expected the worker's and the publisher's connections";
  for (const long long id : clients)
    raw.client_kill_by_id(id);
  killed.open();

  // The publisher's connection died too: its first publish fails, transiently, and is retried.
  for (int n = kMessages / 2 + 1; n <= kMessages; ++n) {
    auto id = publish_retrying(publisher, n, deadline, publish_stats);
    ASSERT_TRUE(id) << log.tail();
    published.push_back(*id);
  }
  std::vector<std::string> missing;
  const bool settled = eventually(
      [&] {
        missing = unaccounted(published, tally.handled(), {});
        return missing.empty();
      },
      deadline - Clock::now());
  const bq::Status consumed = worker.stop();
  worker.transport().close();  // sends the last pipelined acks

  EXPECT_TRUE(settled) << missing.size() << " ids not handled, e.g. " << first_few(missing) << "\n"
                       << log.tail();
  EXPECT_GE(worker.consume_errors(), 1) << "the worker never noticed its connection was killed";
  EXPECT_EQ(worker.non_transient_consume_errors(), 0);
  EXPECT_EQ(publish_stats.non_transient(), 0)
      << "first non-transient publish error: " << publish_stats.first_non_transient();
  EXPECT_GE(publish_stats.failures.load(), 1) << "the publisher's killed connection went unnoticed";
  EXPECT_TRUE(consumed.ok()) << consumed.error().what();
  // No reservation was in flight when the connections died, so nothing was delivered twice and
  // every ack arrived (also the ones queued before the kill).
  for (const auto& [id, runs] : tally.all_runs())
    EXPECT_EQ(runs, 1) << id;
  const rd::Keys k = worker.transport().keys(kQueue);
  EXPECT_EQ(raw.llen(k.ready), 0);
  EXPECT_EQ(in_flight(raw, k, layout()), 0);
  EXPECT_EQ(raw.zcard(k.schedule), 0);  // default: deadlines; Laravel: :delayed
  EXPECT_TRUE(log.matching("reservation expired").empty()) << log.tail();
}

// ------------------------------------------------------------------------------------------------
// Issue requirement, RDS-9, RDS-24: a handler slower than retry_after. The reservation is
// recovered and the message redelivered while the first run is still going; the late ack of the
// first run logs "reservation expired" and touches nothing. The message is handled twice (the
// documented at-least-once behaviour) and every key of the queue ends up empty.
TEST_P(RedisFault, RDS9_HandlerSlowerThanRetryAfterIsRedeliveredAndItsLateAckTouchesNothing) {
  RedisServer server;
  LogSink log;
  rd::Options o = transport_options(server, layout(), log);
  o.retry_after = 1s;
  std::atomic<int> runs{0};
  Gate second_run_done;
  std::atomic<bool> first_run_outlived_redelivery{false};
  std::mutex ids_mu;
  std::vector<std::string> run_ids;
  bq::AppOptions app_options;
  app_options.concurrency = 2;  // a second worker takes the redelivery while the first is busy
  app_options.poll_timeout = 200ms;
  Worker worker(std::make_shared<rd::RedisTransport>(o), app_options, log);
  const bq::Handler handler = [&](bq::Context&, const bq::Envelope& env) -> bq::Status {
    {
      std::lock_guard lock(ids_mu);
      run_ids.emplace_back(env.meta().id);
    }
    if (++runs == 1) {
      // Slower than retry_after by construction: return only after the
      // redelivery was handled (bounded, so a missing redelivery fails the test
      // instead of hanging it).
      first_run_outlived_redelivery = second_run_done.wait();
    } else {
      second_run_done.open();
    }
    return {};
  };
  worker.app().handle(kUrn, handler);

  RawClient raw(server.port());
  rd::RedisTransport producer(transport_options(server, layout(), log));
  const std::string body = bq::encode(bq::make(kUrn, bq::Json::object({{"n", 1}})));
  ASSERT_TRUE(producer.publish(kQueue, body));
  worker.start();

  EXPECT_TRUE(eventually([&] { return !log.matching("reservation expired").empty(); }))
      << "no late-ack warning; runs " << runs.load() << "\n"
      << log.tail();
  const bq::Status consumed = worker.stop();
  worker.transport().close();

  EXPECT_TRUE(first_run_outlived_redelivery) << "no redelivery while the first run was going";
  EXPECT_GE(runs.load(), 2);
  {
    std::lock_guard lock(ids_mu);
    for (const std::string& id : run_ids)
      EXPECT_EQ(id, run_ids.front());
  }
  const std::vector<std::string> warnings = log.matching("reservation expired");
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings.front().find("ack"), std::string::npos) << warnings.front();
  EXPECT_NE(warnings.front().find(kQueue), std::string::npos) << warnings.front();
  EXPECT_TRUE(consumed.ok());
  // The late ack removed nothing that belonged to the redelivery, whose own ack emptied the
  // reservation: nothing is left anywhere.
  const rd::Keys k = producer.keys(kQueue);
  EXPECT_EQ(raw.llen(k.ready), 0);
  EXPECT_EQ(in_flight(raw, k, layout()), 0);
  EXPECT_EQ(raw.zcard(k.schedule), 0);  // default: deadlines; Laravel: :delayed
  EXPECT_EQ(raw.llen(worker.dead_letter_key(kQueue)), 0);
}

// ------------------------------------------------------------------------------------------------
// D-3: the server is down when the worker starts. consume reports every failed pop to
// on_consume_error, does not return, and picks the queue up once the server is there.
TEST_F(RedisFaultSingle, D3_ServerDownAtStartIsRiddenOutUntilItComesUp) {
  RedisServer server;
  server.stop();
  LogSink log;
  Tally tally;
  TallyingWorker worker(server, log, tally);
  worker.start();

  // Two failures: the first try and one retry after the 100 ms backoff.
  EXPECT_TRUE(eventually([&] { return worker.consume_errors() >= 2; })) << log.tail();
  EXPECT_FALSE(worker.returned()) << "consume returned while the server was down";
  EXPECT_EQ(worker.non_transient_consume_errors(), 0);

  server.start();
  bq::App publisher(
      std::make_shared<rd::RedisTransport>(transport_options(server, rd::Layout::Default, log)));
  bq::PublishOptions po;
  po.queue = kQueue;
  const std::string id = publisher.publish(kUrn, bq::Json::object({{"n", 1}}), po);
  EXPECT_TRUE(eventually([&] { return tally.runs(id) == 1; })) << log.tail();
  EXPECT_FALSE(worker.returned());
  const bq::Status consumed = worker.stop();
  EXPECT_TRUE(consumed.ok()) << consumed.error().what();
}

// ------------------------------------------------------------------------------------------------
// D-3 "broker restarting": a restarted redis-server answers LOADING to every command until its AOF
// is loaded. That is transient: consume rides it out (it does not return), and a publish throws a
// transient error that the caller may retry.
TEST_F(RedisFaultSingle, D3_LoadingAfterARestartIsTransient) {
  // key-load-delay (µs per AOF command) stretches loading 4000 filler commands to ~1-2 s; Redis
  // serves clients every 1024 commands meanwhile, with LOADING.
  RedisServer server(
      RedisServer::Config{.appendonly = true, .extra_args = {"--key-load-delay", "250"}});
  LogSink log;
  Tally tally;
  {
    RawClient raw(server.port());
    ASSERT_EQ(raw.command({"EVAL",
                           "for i = 1, tonumber(ARGV[1]) do redis.call('SET', 'filler:' .. i, 'x') "
                           "end return 1",
                           "0", "4000"})
                  .integer,
              1);
  }
  TallyingWorker worker(server, log, tally);
  bq::App publisher = publishing_app(server, rd::Layout::Default, log);
  worker.start();
  PublishStats publish_stats;
  const auto before = publish_retrying(publisher, 1, Clock::now() + kSoon, publish_stats);
  ASSERT_TRUE(before);
  ASSERT_TRUE(eventually([&] { return tally.runs(*before) == 1; })) << log.tail();

  server.kill();
  // Publish from a helper thread, retrying, while the main thread restarts the server: start()
  // blocks until loading is over, and the publishes meet the refused connections and LOADING.
  std::vector<std::string> publish_errors;
  std::optional<std::string> after;
  std::thread publishing([&] {
    const auto deadline = Clock::now() + 30s;
    bq::PublishOptions po;
    po.queue = kQueue;
    while (!after && Clock::now() < deadline) {
      try {
        after = publisher.publish(kUrn, bq::Json::object({{"n", 2}}), po);
      } catch (const bq::Error& e) {
        publish_errors.push_back(std::string(e.is_transient() ? "transient: " : "NOT transient: ") +
                                 e.what());
        if (!e.is_transient()) return;
        std::this_thread::sleep_for(10ms);
      }
    }
  });
  const ScopeExit join_publishing([&] {
    if (publishing.joinable()) publishing.join();
  });
  server.start();
  publishing.join();  // returns at the first success or the first non-transient error

  std::string errors_text;
  bool saw_loading = false;
  for (const std::string& e : publish_errors) {
    errors_text += "  " + e + "\n";
    saw_loading = saw_loading || e.find("LOADING") != std::string::npos;
  }
  EXPECT_TRUE(saw_loading) << "no publish met the LOADING window; errors:\n" << errors_text;
  for (const std::string& e : publish_errors) {
    EXPECT_TRUE(e.starts_with("transient: ")) << "a publish error while restarting: " << e;
  }
  EXPECT_TRUE(after) << "publish never succeeded after the restart; errors:\n" << errors_text;
  if (!after) after = publish_retrying(publisher, 2, Clock::now() + kSoon, publish_stats);
  ASSERT_TRUE(after);

  EXPECT_TRUE(eventually([&] { return tally.runs(*after) == 1 || worker.returned(); }));
  const bool returned_early = worker.returned();
  const bq::Status consumed = worker.stop();
  EXPECT_FALSE(returned_early) << "consume returned while the server was loading: "
                               << (consumed.ok() ? "OK" : consumed.error().what());
  EXPECT_EQ(tally.runs(*after), 1) << log.tail();
  EXPECT_GE(worker.consume_errors(), 1);
  EXPECT_EQ(worker.non_transient_consume_errors(), 0);
  EXPECT_TRUE(consumed.ok()) << consumed.error().what();
}

// ------------------------------------------------------------------------------------------------
// D-3: "publish errors are returned to the caller, never swallowed". A publish to a server that is
// down throws a transient TransportError, both before any connection was made and on a pooled
// connection the crash closed; nothing is stored by the failed publish, and the next publish after
// the restart works.
TEST_P(RedisFault, D3_PublishWhileTheServerIsDownThrowsATransientTransportError) {
  RedisServer server;
  LogSink log;
  bq::AppOptions app_options;
  app_options.logger = log.logger();
  bq::PublishOptions po;
  po.queue = kQueue;
  auto publish = [&](bq::App& app) { (void)app.publish(kUrn, bq::Json::object(), po); };

  {  // never connected: the connect is refused
    server.stop();
    bq::App app(std::make_shared<rd::RedisTransport>(transport_options(server, layout(), log)),
                app_options);
    rd::test::expect_transient_transport_error([&] { publish(app); }, "publish, never connected");
    server.start();
    publish(app);  // the next call connects
  }
  {  // a pooled connection that the crash closed
    auto transport = std::make_shared<rd::RedisTransport>(transport_options(server, layout(), log));
    bq::App app(transport, app_options);
    publish(app);
    server.kill();
    rd::test::expect_transient_transport_error([&] { publish(app); },
                                               "publish on a closed connection");
    server.start();  // no appendonly: the server starts empty
    const std::string id = app.publish(kUrn, bq::Json::object(), po);
    RawClient raw(server.port());
    const std::vector<std::string> ready = raw.lrange(transport->keys(kQueue).ready);
    ASSERT_EQ(ready.size(), 1u);  // the failed publish stored nothing
    EXPECT_EQ(bq::decode(ready[0]).meta().id, id);
  }
}

// ------------------------------------------------------------------------------------------------
// Scripts run by EVALSHA fall back to EVAL on NOSCRIPT: after SCRIPT FLUSH (what a restarted server
// looks like to the script cache) the next reserve with its pipelined acks, an immediate ack, a
// release and a dead-letter all still work.
TEST_P(RedisFault, RDS3_ScriptFlushBetweenPopsFallsBackToEval) {
  RedisServer server;
  LogSink log;
  RawClient raw(server.port());
  rd::Options o = transport_options(server, layout(), log);
  o.prefetch = 1;  // every pop is a reserve round trip
  rd::RedisTransport t(o);
  const rd::Keys k = t.keys(kQueue);
  std::vector<std::string> bodies;
  for (int n = 1; n <= 3; ++n) {
    bodies.push_back(bq::encode(bq::make(kUrn, bq::Json::object({{"n", n}}))));
    ASSERT_TRUE(t.publish(kQueue, bodies.back()));
  }
  auto pop = [&]() -> bq::ReceivedMessage {
    auto got = t.pop(kQueue, 0ms);
    if (!got) throw std::runtime_error(std::string("pop failed: ") + got.error().what());
    if (!got->has_value()) throw std::runtime_error("pop returned nothing");
    return std::move(**got);
  };
  auto script_flush = [&] { ASSERT_EQ(raw.command({"SCRIPT", "FLUSH"}).as_string(), "OK"); };

  const bq::ReceivedMessage first = pop();  // loads the scripts
  EXPECT_EQ(first.body, bodies[0]);
  ASSERT_TRUE(t.ack(first));  // pipelined: rides on the next reserve

  long long noscript = error_stat(raw, "NOSCRIPT");
  script_flush();
  const bq::ReceivedMessage second = pop();  // pending ack + sweep/migrate + reserve, by EVAL
  EXPECT_EQ(second.body, bodies[1]);
  EXPECT_GT(error_stat(raw, "NOSCRIPT"), noscript) << "EVALSHA never met a flushed cache";
  EXPECT_EQ(in_flight(raw, k, layout()), 1) << "the first ack was not applied";
  ASSERT_TRUE(t.ack(second));

  noscript = error_stat(raw, "NOSCRIPT");
  script_flush();
  const bq::Status flushed = t.flush();
  ASSERT_TRUE(flushed) << flushed.error().what();
  EXPECT_GT(error_stat(raw, "NOSCRIPT"), noscript);
  EXPECT_EQ(in_flight(raw, k, layout()), 0);

  // A release (gated script) after a flush; the released copy is delivered again.
  const bq::ReceivedMessage third = pop();
  EXPECT_EQ(third.body, bodies[2]);
  script_flush();
  const bq::Status released = t.release(third, 0ms);
  ASSERT_TRUE(released) << released.error().what();
  const bq::ReceivedMessage again = pop();
  EXPECT_EQ(bq::decode(again.body).meta().id, bq::decode(bodies[2]).meta().id);
  EXPECT_EQ(bq::decode(again.body).attempts(), 1);

  // A dead-letter (gated script) after a flush.
  script_flush();
  const bq::Status dead = t.dead_letter(again, "orders.dlq", again.body);
  ASSERT_TRUE(dead) << dead.error().what();
  EXPECT_EQ(raw.llen(t.keys("orders.dlq").ready), 1);
  EXPECT_EQ(in_flight(raw, k, layout()), 0);
  EXPECT_EQ(raw.llen(k.ready), 0);
  EXPECT_TRUE(log.matching("reservation expired").empty()) << log.tail();
}

// ------------------------------------------------------------------------------------------------
// AUTH (RDS-2, D-3): with requirepass, the URL's (percent-encoded) password or an ACL user
// authenticates. A wrong or missing password is a configuration error: publish throws a
// non-transient error and consume returns it at once instead of retrying forever.
TEST_P(RedisFault, D3_AuthWithThePasswordWorksAndARefusedAuthEndsConsume) {
  RedisServer server(RedisServer::Config{.requirepass = "s3cr:t@pw/%x"});
  LogSink log;
  RawClient raw(server.port(), server.password());
  const rd::Keys k = rd::RedisTransport(transport_options(server, layout(), log)).keys(kQueue);

  {  // the URL carries the password, percent-encoded
    rd::Options o = transport_options(server, layout(), log);
    EXPECT_EQ(o.connection.password, server.password());
    rd::RedisTransport t(o);
    ASSERT_TRUE(t.publish(kQueue, bq::encode(bq::make(kUrn))));
    auto got = t.pop(kQueue, 0ms);
    ASSERT_TRUE(got) << got.error().what();
    ASSERT_TRUE(got->has_value());
    ASSERT_TRUE(t.ack(**got));
    ASSERT_TRUE(t.flush());
    EXPECT_EQ(in_flight(raw, k, layout()), 0);
  }
  {  // Redis 6 ACL: AUTH <user> <password>
    rd::Options o = transport_options(server, layout(), log);
    o.connection.user = "default";
    rd::RedisTransport t(o);
    ASSERT_TRUE(t.publish(kQueue, bq::encode(bq::make(kUrn))));
    EXPECT_EQ(raw.llen(k.ready), 1);
  }

  for (const std::string password : {"wrong", ""}) {
    SCOPED_TRACE("password \"" + password + "\"");
    rd::Options o = transport_options(server, layout(), log);
    o.connection.password = password;
    bq::AppOptions app_options;
    app_options.poll_timeout = 200ms;
    Worker worker(std::make_shared<rd::RedisTransport>(o), app_options, log);
    worker.app().handle(
        kUrn, bq::Handler([](bq::Context&, const bq::Envelope&) -> bq::Status { return {}; }));

    try {
      bq::PublishOptions po;
      po.queue = kQueue;
      (void)worker.app().publish(kUrn, bq::Json::object(), po);
      ADD_FAILURE() << "publish with a refused AUTH returned";
    } catch (const bq::Error& e) {
      EXPECT_FALSE(e.is_transient()) << e.what();
      EXPECT_EQ(e.code(), bq::ErrorCode::Transport) << e.what();
    }

    worker.start();
    const bool returned = eventually([&] { return worker.returned(); });
    EXPECT_TRUE(returned) << "consume keeps retrying a refused AUTH\n" << log.tail();
    const bq::Status consumed = worker.stop();
    ASSERT_FALSE(consumed.ok()) << "consume must end with the refused AUTH, not as a stop";
    EXPECT_FALSE(consumed.error().is_transient()) << consumed.error().what();
    EXPECT_EQ(worker.consume_errors(), 0) << "a configuration error was ridden out as transient";
  }
  EXPECT_EQ(raw.llen(k.ready), 1);  // the refused publishes stored nothing
}

// No instantiation prefix: the tests are RedisFault.<name>/<layout>, so RedisFault* selects them.
INSTANTIATE_TEST_SUITE_P(, RedisFault, ::testing::Values(rd::Layout::Default, rd::Layout::Laravel),
                         layout_name);

}  // namespace
