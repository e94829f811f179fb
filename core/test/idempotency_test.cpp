// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/codec.hpp>
#include <babelqueue/idempotency.hpp>

#include <gtest/gtest.h>

#include "support/failing_store.hpp"

#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using babelqueue::ConfigError;
using babelqueue::Envelope;
using babelqueue::TransportError;
using babelqueue::idempotency::InMemoryStore;
using babelqueue::idempotency::Outcome;
using babelqueue::idempotency::run_once;
using babelqueue::idempotency::Store;
using babelqueue::idempotency::wrap;

// An order-created message with the given meta.id (and a fixed trace_id), as Go's test `msg(id)`.
Envelope msg(const std::string& id, const std::string& trace_id = "trace-1") {
  return babelqueue::decode(R"({"job":"urn:babel:orders:created","trace_id":")" + trace_id +
                            R"(","data":{"order_id":7},"meta":{"id":")" + id +
                            R"(","queue":"orders","lang":"go","schema_version":1,)"
                            R"("created_at":1749132727000},"attempts":0})");
}

using babelqueue::test::FailingStore;

// ---- HLP-4 "Tests (Go)" ----

TEST(Idempotency, HLP4_RunsAndRemembersOnFirstDelivery) {
  auto store = std::make_shared<InMemoryStore>();
  int calls = 0;
  const auto h = wrap(store, [&calls](const Envelope&) { ++calls; });
  EXPECT_NO_THROW(h(msg("msg-1")));
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(store->seen("msg-1"));
}

TEST(Idempotency, HLP4_SkipsRedeliveryOfSameId) {
  auto store = std::make_shared<InMemoryStore>();
  int calls = 0;
  const auto h = wrap(store, [&calls](const Envelope&) { ++calls; });
  h(msg("msg-1"));
  EXPECT_NO_THROW(h(msg("msg-1")));  // a skip returns normally, so the runtime acks
  EXPECT_EQ(calls, 1);
}

TEST(Idempotency, HLP4_RunsAgainForDifferentId) {
  auto store = std::make_shared<InMemoryStore>();
  int calls = 0;
  const auto h = wrap(store, [&calls](const Envelope&) { ++calls; });
  h(msg("msg-1"));
  h(msg("msg-2"));
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(store->size(), 2U);
}

TEST(Idempotency, HLP4_DoesNotRememberWhenHandlerThrows) {
  auto store = std::make_shared<InMemoryStore>();
  int calls = 0;
  const auto h = wrap(store, [&calls](const Envelope&) {
    ++calls;
    throw std::runtime_error("boom");
  });
  try {
    h(msg("msg-1"));
    FAIL() << "the handler's exception must propagate so the runtime retries";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "boom");
  }
  EXPECT_FALSE(store->seen("msg-1"));
  EXPECT_THROW(h(msg("msg-1")), std::runtime_error);  // a redelivery runs again
  EXPECT_EQ(calls, 2);
}

TEST(Idempotency, HLP4_RunsWhenNoUsableId) {
  auto store = std::make_shared<InMemoryStore>();
  int calls = 0;
  const auto h = wrap(store, [&calls](const Envelope&) { ++calls; });
  h(msg(""));
  h(msg(""));
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(store->size(), 0U);  // nothing to remember
  // An identity-less body (no meta at all) fails open too.
  h(babelqueue::decode("{}"));
  EXPECT_EQ(calls, 3);
}

TEST(Idempotency, HLP4_SeenErrorPropagates) {
  auto store = std::make_shared<FailingStore>();
  store->seen_throws = true;
  int calls = 0;
  const auto h = wrap(store, [&calls](const Envelope&) { ++calls; });
  EXPECT_THROW(h(msg("msg-1")), TransportError);
  EXPECT_EQ(calls, 0) << "the handler must not run when the dedupe check fails";
  EXPECT_EQ(store->remember_calls, 0);
}

TEST(Idempotency, HLP4_RememberErrorStillAcks) {
  auto store = std::make_shared<FailingStore>();
  store->remember_throws = true;
  int calls = 0;
  std::vector<std::string> logged;
  const auto h = wrap(
      store, [&calls](const Envelope&) { ++calls; },
      [&logged](std::string_view id, const std::exception& e) {
        logged.push_back(std::string(id) + ": " + e.what());
      });
  EXPECT_NO_THROW(h(msg("msg-1")));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(store->remember_calls, 1);
  ASSERT_EQ(logged.size(), 1U);
  EXPECT_EQ(logged[0], "msg-1: write failed");
  // Without a hook the failure is swallowed silently.
  const auto quiet = wrap(store, [&calls](const Envelope&) { ++calls; });
  EXPECT_NO_THROW(quiet(msg("msg-2")));
  EXPECT_EQ(calls, 2);
}

TEST(Idempotency, HLP4_InMemoryStoreForget) {
  InMemoryStore store;
  store.remember("msg-1");
  EXPECT_TRUE(store.seen("msg-1"));
  store.forget("msg-1");
  EXPECT_FALSE(store.seen("msg-1"));
  EXPECT_NO_THROW(store.forget("never-remembered"));
  EXPECT_EQ(store.size(), 0U);
}

// ---- HLP-3: the conformance sequences (manifest block idempotency.sequences) ----

struct Delivery {
  std::string meta_id;
  bool expect_run;      // "run" or "skip"
  bool throws = false;  // outcome "throw" (only for a run)
  bool forget_before = false;
};

// Replays one sequence through ONE wrapped handler backed by ONE store; returns the effects.
int replay(const std::vector<Delivery>& deliveries) {
  auto store = std::make_shared<InMemoryStore>();
  int effects = 0;
  bool fail_next = false;
  const auto h = wrap(store, [&](const Envelope&) {
    ++effects;
    if (fail_next) throw std::runtime_error("handler failed");
  });
  for (std::size_t i = 0; i < deliveries.size(); ++i) {
    const Delivery& d = deliveries[i];
    if (d.forget_before) store->forget(d.meta_id);
    fail_next = d.throws;
    const int before = effects;
    if (d.throws) {
      EXPECT_THROW(h(msg(d.meta_id)), std::runtime_error) << "delivery " << i;
    } else {
      EXPECT_NO_THROW(h(msg(d.meta_id))) << "delivery " << i;
    }
    EXPECT_EQ(effects - before, d.expect_run ? 1 : 0) << "delivery " << i;
  }
  return effects;
}

TEST(IdempotencyConformance, HLP3_DuplicateDeliveryRunsOnce) {
  EXPECT_EQ(replay({{"id-A", true}, {"id-A", false}}), 1);
}

TEST(IdempotencyConformance, HLP3_AtLeastOnceRedeliveryIsNoop) {
  EXPECT_EQ(replay({{"id-A", true}, {"id-A", false}, {"id-A", false}, {"id-A", false}}), 1);
}

TEST(IdempotencyConformance, HLP3_DistinctIdsEachRun) {
  EXPECT_EQ(replay({{"id-A", true}, {"id-B", true}, {"id-C", true}}), 3);
}

TEST(IdempotencyConformance, HLP3_ThrowLeavesIdUnmarked) {
  EXPECT_EQ(replay({{"id-A", true, true}, {"id-A", true, true}, {"id-A", true}, {"id-A", false}}),
            3);
}

TEST(IdempotencyConformance, HLP3_MissingIdFailsOpen) {
  EXPECT_EQ(replay({{"", true}, {"", true}}), 2);
}

TEST(IdempotencyConformance, HLP3_ForgetAllowsRerun) {
  EXPECT_EQ(replay({{"id-A", true}, {"id-A", false}, {"id-A", true, false, true}}), 2);
}

TEST(IdempotencyConformance, HLP3_DedupeKeyIsMetaIdOfOrderCreated) {
  // conformance fixtures/order-created.json (01-envelope EX-1 shape).
  const Envelope env = babelqueue::decode(
      R"({"job":"urn:babel:orders:created",)"
      R"("trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",)"
      R"("data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567",)"
      R"("queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000},)"
      R"("attempts":0})");
  InMemoryStore store;
  EXPECT_EQ(run_once(store, env, [] {}), Outcome::Ran);
  EXPECT_TRUE(store.seen("f1e2d3c4-b5a6-4789-90ab-cdef01234567"));
  EXPECT_FALSE(store.seen("7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b"));
  EXPECT_EQ(store.size(), 1U);
  // The same bytes again are the same message.
  int runs = 0;
  EXPECT_EQ(run_once(store, env, [&runs] { ++runs; }), Outcome::Skipped);
  EXPECT_EQ(runs, 0);
}

// ---- HLP-2 details ----

TEST(Idempotency, HLP2_KeyIsMetaIdNotTraceId) {
  auto store = std::make_shared<InMemoryStore>();
  int calls = 0;
  const auto h = wrap(store, [&calls](const Envelope&) { ++calls; });
  h(msg("id-1", "shared-trace"));
  h(msg("id-2", "shared-trace"));  // same trace, different message
  EXPECT_EQ(calls, 2);
  h(msg("id-1", "other-trace"));  // same message, whatever its trace
  EXPECT_EQ(calls, 2);
}

TEST(Idempotency, HLP2_KeyIsUsedVerbatim) {
  InMemoryStore store;
  EXPECT_EQ(run_once(store, " id-A", [] {}), Outcome::Ran);
  EXPECT_EQ(run_once(store, "id-A", [] {}), Outcome::Ran);  // not trimmed, so a different key
  EXPECT_EQ(run_once(store, "ID-A", [] {}), Outcome::Ran);  // nor case-folded
  EXPECT_EQ(store.size(), 3U);
}

TEST(Idempotency, HLP2_RunOnceReportsRanAndSkipped) {
  InMemoryStore store;
  int runs = 0;
  const auto effect = [&runs] { ++runs; };
  EXPECT_EQ(run_once(store, "a", effect), Outcome::Ran);
  EXPECT_EQ(run_once(store, "a", effect), Outcome::Skipped);
  EXPECT_EQ(run_once(store, "", effect), Outcome::Ran);
  EXPECT_EQ(run_once(store, "", effect), Outcome::Ran);
  EXPECT_EQ(runs, 3);
}

TEST(Idempotency, HLP2_EmptyIdNeverTouchesTheStore) {
  FailingStore store;
  store.seen_throws = true;
  store.remember_throws = true;
  int runs = 0;
  EXPECT_EQ(run_once(store, "", [&runs] { ++runs; }), Outcome::Ran);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(store.seen_calls, 0);
  EXPECT_EQ(store.remember_calls, 0);
}

TEST(Idempotency, HLP2_ThrowingRememberHookIsSwallowed) {
  FailingStore store;
  store.remember_throws = true;
  int hook_calls = 0;
  const auto hook = [&hook_calls](std::string_view, const std::exception&) {
    ++hook_calls;
    throw std::runtime_error("logger broke");
  };
  EXPECT_EQ(run_once(
                store, "a", [] {}, hook),
            Outcome::Ran);
  EXPECT_EQ(hook_calls, 1);
}

TEST(Idempotency, HLP2_NonStandardRememberExceptionIsReported) {
  class WeirdStore final : public Store {
   public:
    bool seen(std::string_view) override { return false; }
    void remember(std::string_view) override { throw 42; }
    void forget(std::string_view) override {}
  } store;
  std::string reported;
  EXPECT_EQ(run_once(
                store, "a", [] {},
                [&reported](std::string_view id, const std::exception& e) {
                  reported = std::string(id) + "|" + e.what();
                }),
            Outcome::Ran);
  EXPECT_EQ(reported, "a|remember: unknown exception");
}

TEST(Idempotency, HLP2_WrapForwardsExtraArguments) {
  auto store = std::make_shared<InMemoryStore>();
  std::string seen_urn;
  const auto h =
      wrap(store, [&seen_urn](const Envelope& env, int& counter, const std::string& tag) {
        seen_urn = std::string(env.urn()) + "#" + tag;
        ++counter;
      });
  int counter = 0;
  h(msg("x"), counter, std::string("t1"));
  h(msg("x"), counter, std::string("t2"));  // skipped
  EXPECT_EQ(counter, 1);
  EXPECT_EQ(seen_urn, "urn:babel:orders:created#t1");
}

TEST(Idempotency, HLP2_WrapRejectsANullStore) {
  EXPECT_THROW((void)wrap(std::shared_ptr<Store>(), [](const Envelope&) {}), ConfigError);
}

TEST(Idempotency, HLP2_WrappedHandlerFitsStdFunction) {
  auto store = std::make_shared<InMemoryStore>();
  int calls = 0;
  const std::function<void(const Envelope&)> h =
      wrap(store, [&calls](const Envelope&) { ++calls; });
  h(msg("a"));
  h(msg("a"));
  EXPECT_EQ(calls, 1);
}

// ---- HLP-1: the in-memory store ----

TEST(Idempotency, HLP1_InMemoryStoreIsThreadSafe) {
  InMemoryStore store;
  constexpr int kThreads = 8;
  constexpr int kIds = 500;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&store, t] {
      for (int i = 0; i < kIds; ++i) {
        const std::string id = std::to_string(t) + "-" + std::to_string(i);
        store.remember(id);
        if (!store.seen(id)) std::abort();
        if (i % 2 == 0) store.forget(id);
      }
    });
  }
  for (auto& th : threads)
    th.join();
  EXPECT_EQ(store.size(), static_cast<std::size_t>(kThreads * kIds / 2));
  EXPECT_TRUE(store.seen("3-1"));
  EXPECT_FALSE(store.seen("3-2"));
}

TEST(Idempotency, HLP1_RememberIsIdempotent) {
  InMemoryStore store;
  store.remember("a");
  store.remember("a");
  EXPECT_EQ(store.size(), 1U);
  store.forget("a");
  EXPECT_FALSE(store.seen("a"));
}

}  // namespace
