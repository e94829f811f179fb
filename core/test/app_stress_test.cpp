// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Stress: concurrent publishers, a pooled consumer and handlers that fail at random (decided by a
// seeded RNG per publishing thread, so every run sees the same mix). At the end every meta.id
// must have ended exactly once: acked after a successful handler run, or in the dead-letter queue.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/in_memory_transport.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <future>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "support/test_transport.hpp"

namespace bq = babelqueue;
using namespace std::chrono_literals;

namespace {

// What a message's handler does, chosen by the publisher.
constexpr std::string_view kOk = "urn:stress:ok";          // succeeds
constexpr std::string_view kFlaky = "urn:stress:flaky";    // fails on the first attempt only
constexpr std::string_view kDoomed = "urn:stress:doomed";  // always fails -> DLQ

struct Outcome {
  std::mutex mu;
  std::unordered_map<std::string, int> succeeded;  // meta.id -> successful runs
  std::unordered_map<std::string, int> calls;      // meta.id -> handler runs
  std::atomic<std::size_t> successes{0};

  void record(std::string_view id, bool success) {
    std::lock_guard<std::mutex> lock(mu);
    ++calls[std::string(id)];
    if (success) {
      ++succeeded[std::string(id)];
      successes.fetch_add(1, std::memory_order_relaxed);
    }
  }
};

void register_handlers(bq::App& app, Outcome& out) {
  app.handle(kOk, [&](bq::Context&, const bq::Envelope& env) {
    out.record(env.meta().id, true);
    return bq::Status{};
  });
  app.handle(kFlaky, [&](bq::Context&, const bq::Envelope& env) -> bq::Status {
    const bool first = env.attempts() == 0;
    out.record(env.meta().id, !first);
    if (first) throw std::runtime_error("flaky");
    return bq::Status{};
  });
  app.handle(kDoomed, [&](bq::Context&, const bq::Envelope& env) {
    out.record(env.meta().id, false);
    return bq::Status(bq::Error(bq::ErrorCode::Handler, "doomed"));
  });
}

struct Published {
  std::vector<std::string> ok, flaky, doomed;
};

// `threads` publishers, `per_thread` messages each; the URN mix comes from a per-thread seed.
std::vector<Published> publish_all(bq::App& app, int threads, int per_thread) {
  std::vector<Published> out(static_cast<std::size_t>(threads));
  std::vector<std::thread> pubs;
  for (int i = 0; i < threads; ++i) {
    pubs.emplace_back([&app, &out, i, per_thread] {
      std::mt19937 rng(static_cast<std::mt19937::result_type>(1000 + i));
      std::uniform_int_distribution<int> pick(0, 99);
      Published& mine = out[static_cast<std::size_t>(i)];
      bq::PublishOptions po;
      po.queue = "stress";
      for (int n = 0; n < per_thread; ++n) {
        const int p = pick(rng);
        const std::string_view urn = p < 70 ? kOk : (p < 90 ? kFlaky : kDoomed);
        const std::string id = app.publish(urn, bq::Json::object({{"n", n}}), po);
        (p < 70 ? mine.ok : (p < 90 ? mine.flaky : mine.doomed)).push_back(id);
      }
    });
  }
  for (auto& t : pubs)
    t.join();
  return out;
}

// Checks the end state: every id exactly once, where its URN says it must be.
void check(const std::vector<Published>& published, Outcome& out,
           const std::vector<std::string>& dlq_bodies, std::size_t total, int max_attempts) {
  std::unordered_set<std::string> dead;
  std::size_t duplicates = 0;
  for (const std::string& body : dlq_bodies) {
    const bq::Envelope env = bq::decode(body);
    ASSERT_TRUE(env.dead_letter().has_value());
    EXPECT_EQ(env.dead_letter()->reason, "failed");
    EXPECT_EQ(env.dead_letter()->attempts, max_attempts);
    EXPECT_EQ(env.dead_letter()->error, "doomed");
    EXPECT_EQ(env.urn(), kDoomed);
    if (!dead.insert(std::string(env.meta().id)).second) ++duplicates;
  }
  EXPECT_EQ(duplicates, 0u);
  std::lock_guard<std::mutex> lock(out.mu);
  std::size_t ids = 0;
  std::size_t lost = 0;
  std::size_t wrong = 0;
  for (const Published& p : published) {
    for (const std::string& id : p.ok) {
      ++ids;
      const auto it = out.succeeded.find(id);
      if (it == out.succeeded.end()) {
        ++lost;
      } else if (it->second != 1 || dead.count(id) != 0 || out.calls[id] != 1) {
        ++wrong;
      }
    }
    for (const std::string& id : p.flaky) {
      ++ids;
      const auto it = out.succeeded.find(id);
      if (it == out.succeeded.end()) {
        ++lost;
      } else if (it->second != 1 || dead.count(id) != 0 || out.calls[id] != 2) {
        ++wrong;
      }
    }
    for (const std::string& id : p.doomed) {
      ++ids;
      if (dead.count(id) == 0) {
        ++lost;
      } else if (out.succeeded.count(id) != 0 || out.calls[id] != max_attempts) {
        ++wrong;
      }
    }
  }
  EXPECT_EQ(ids, total);
  EXPECT_EQ(lost, 0u);
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(out.succeeded.size() + dead.size(), total);  // nothing extra either
}

// Consumes "stress" while publishing, until every message has succeeded or sits in the
// dead-letter queue, then stops; returns what was published.
template <class T>
std::vector<Published> run_until_settled(bq::App& app, T& t, Outcome& out, int publishers,
                                         int per_publisher) {
  const std::size_t total =
      static_cast<std::size_t>(publishers) * static_cast<std::size_t>(per_publisher);
  auto consumer = std::async(std::launch::async, [&] { return app.consume("stress"); });
  std::vector<Published> published = publish_all(app, publishers, per_publisher);
  // A successful run is recorded before its ack; the DLQ size counts settled dead letters.
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (out.successes.load() + t.size("stress.dlq") < total &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(2ms);
  }
  app.stop();
  if (consumer.wait_for(30s) != std::future_status::ready) {
    ADD_FAILURE() << "consume did not return after stop()";
  } else {
    EXPECT_TRUE(consumer.get().ok());
  }
  EXPECT_EQ(t.size("stress"), 0u);
  return published;
}

}  // namespace

TEST(AppStress, HundredThousandMessagesEightPublishersFourWorkers) {
  constexpr int kPublishers = 8;
  constexpr int kPerPublisher = 12'500;
  constexpr std::size_t kTotal = static_cast<std::size_t>(kPublishers) * kPerPublisher;

  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::AppOptions o;
  o.concurrency = 4;
  o.dead_letter = true;
  o.max_attempts = 3;
  o.poll_timeout = 10ms;
  bq::App app(t, o);
  Outcome out;
  register_handlers(app, out);

  const std::vector<Published> published =
      run_until_settled(app, *t, out, kPublishers, kPerPublisher);
  check(published, out, t->drain_raw("stress.dlq"), kTotal, o.max_attempts);
}

TEST(AppStress, RepublishPathOverTheTestDouble) {
  // The same invariant on the republish path (no Releaser): retries are re-encoded bodies.
  constexpr int kPublishers = 4;
  constexpr int kPerPublisher = 2'500;
  constexpr std::size_t kTotal = static_cast<std::size_t>(kPublishers) * kPerPublisher;

  auto t = std::make_shared<bq::test::TestTransport<>>();
  bq::AppOptions o;
  o.concurrency = 4;
  o.dead_letter = true;
  o.max_attempts = 2;
  o.poll_timeout = 10ms;
  bq::App app(t, o);
  Outcome out;
  register_handlers(app, out);

  const std::vector<Published> published =
      run_until_settled(app, *t, out, kPublishers, kPerPublisher);
  EXPECT_EQ(t->reserved(), 0u);
  check(published, out, t->bodies("stress.dlq"), kTotal, o.max_attempts);
}
