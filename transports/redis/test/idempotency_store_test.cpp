// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// RedisIdempotencyStore against a real redis-server (02-runtime HLP-4): one key per id, prefix +
// id = "1", written by SET NX with an optional TTL; seen = EXISTS, forget = DEL, claim = the SET NX
// result. Every store on the same server shares the keys, so `idempotency::run_once` skips a
// message another store instance (another worker) already processed.

#include <babelqueue/codec.hpp>
#include <babelqueue/errors.hpp>
#include <babelqueue/idempotency.hpp>
#include <babelqueue/redis/idempotency_store.hpp>
#include <babelqueue/redis/transport.hpp>

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <latch>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "raw_client.hpp"
#include "redis_server.hpp"
#include "server_test.hpp"

namespace bq = babelqueue;
namespace rd = babelqueue::redis;
using namespace std::chrono_literals;
using rd::test::RawClient;
using rd::test::RedisServer;
using Store = rd::RedisIdempotencyStore;

namespace {

constexpr char kUrn[] = "urn:babel:orders:created";

class RedisIdempotencyStore : public rd::test::SharedRedisServerTest {
 protected:
  static rd::ConnectionOptions connection(int db = 0) {
    return rd::parse_url(server().url(db)).connection;
  }
  static rd::IdempotencyOptions with_ttl(std::chrono::seconds ttl) {
    rd::IdempotencyOptions o;
    o.ttl = ttl;
    return o;
  }
  long long ttl_of(const std::string& key) { return raw().command({"TTL", key}).as_integer(); }
  std::vector<std::string> all_keys() {
    std::vector<std::string> keys;
    for (const auto& k : raw().command({"KEYS", "*"}).elements)
      keys.push_back(k.as_string());
    return keys;
  }
};

TEST_F(RedisIdempotencyStore, HLP4_RememberWritesThePrefixedKeyAsOneWithoutExpiry) {
  Store store(connection());
  EXPECT_FALSE(store.seen("msg-1"));
  store.remember("msg-1");
  EXPECT_TRUE(store.seen("msg-1"));
  EXPECT_EQ(raw().command({"GET", "bq:idemp:msg-1"}).as_string(), "1");
  // ttl 0 = remembered forever.
  EXPECT_EQ(ttl_of("bq:idemp:msg-1"), -1);
  EXPECT_EQ(all_keys(), std::vector<std::string>{"bq:idemp:msg-1"});  // nothing else written
}

TEST_F(RedisIdempotencyStore, HLP4_SeenRememberForgetSemantics) {
  Store store(connection());
  store.forget("absent");  // forgetting an unknown id is a no-op
  EXPECT_FALSE(store.seen("absent"));
  EXPECT_TRUE(all_keys().empty());

  store.remember("a");
  store.remember("a");  // idempotent
  EXPECT_TRUE(store.seen("a"));
  EXPECT_FALSE(store.seen("b"));
  EXPECT_FALSE(store.seen("bq:idemp:a"));  // the id is not a key: the prefix is always added

  store.forget("a");
  EXPECT_FALSE(store.seen("a"));
  EXPECT_FALSE(raw().exists("bq:idemp:a"));
  store.remember("a");  // forget allows a rerun (HLP-3 forget-allows-rerun)
  EXPECT_TRUE(store.seen("a"));
}

TEST_F(RedisIdempotencyStore, HLP4_PositiveTtlExpiresTheKey) {
  Store store(connection(), with_ttl(60s));
  store.remember("m");
  const long long ttl = ttl_of("bq:idemp:m");
  EXPECT_GE(ttl, 1);
  EXPECT_LE(ttl, 60);
  EXPECT_EQ(raw().command({"GET", "bq:idemp:m"}).as_string(), "1");

  // NX: remembering again neither rewrites the key nor refreshes its expiry.
  ASSERT_EQ(raw().command({"EXPIRE", "bq:idemp:m", "1000"}).as_integer(), 1);
  store.remember("m");
  EXPECT_GT(ttl_of("bq:idemp:m"), 60);

  // claim writes the TTL too.
  EXPECT_TRUE(store.claim("c"));
  EXPECT_GE(ttl_of("bq:idemp:c"), 1);
  EXPECT_LE(ttl_of("bq:idemp:c"), 60);

  // An expired key is not seen (and can be claimed again). Expire it now instead of waiting.
  ASSERT_EQ(raw().command({"PEXPIRE", "bq:idemp:m", "1"}).as_integer(), 1);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (store.seen("m") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(2ms);
  }
  EXPECT_FALSE(store.seen("m"));
  EXPECT_TRUE(store.claim("m"));
}

TEST_F(RedisIdempotencyStore, HLP4_ClaimIsTrueOnceThenFalse) {
  Store store(connection());
  EXPECT_TRUE(store.claim("x"));
  EXPECT_FALSE(store.claim("x"));
  EXPECT_FALSE(store.claim("x"));
  EXPECT_TRUE(store.seen("x"));
  EXPECT_EQ(raw().command({"GET", "bq:idemp:x"}).as_string(), "1");
  EXPECT_EQ(ttl_of("bq:idemp:x"), -1);

  store.remember("y");
  EXPECT_FALSE(store.claim("y"));  // remember and claim record the same thing

  store.forget("x");
  EXPECT_TRUE(store.claim("x"));  // forgotten: claimable again
}

TEST_F(RedisIdempotencyStore, HLP4_ConcurrentClaimsOfOneIdHaveExactlyOneWinner) {
  constexpr std::size_t kThreads = 8;
  constexpr std::size_t kIds = 50;
  // Two instances, as two workers would have; each is also shared by four threads.
  Store worker_a(connection());
  Store worker_b(connection());
  const std::array<Store*, 2> stores = {&worker_a, &worker_b};
  std::array<std::atomic<int>, kIds> winners{};
  std::atomic<int> errors{0};
  std::latch start(static_cast<std::ptrdiff_t>(kThreads));
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();  // every thread races for each id
      for (std::size_t i = 0; i < kIds; ++i) {
        try {
          if (stores[t % 2]->claim("race-" + std::to_string(i))) ++winners[i];
        } catch (const std::exception&) {
          ++errors;
        }
      }
    });
  }
  for (std::thread& t : threads)
    t.join();
  EXPECT_EQ(errors.load(), 0);
  for (std::size_t i = 0; i < kIds; ++i)
    EXPECT_EQ(winners[i].load(), 1) << "race-" << i;
  EXPECT_EQ(all_keys().size(), kIds);
}

TEST_F(RedisIdempotencyStore, HLP4_RunOnceSkipsAMessageAnotherStoreInstanceProcessed) {
  const bq::Envelope env = bq::make(kUrn, bq::Json::object({{"order_id", 1042}}));
  const std::string key = "bq:idemp:" + std::string(env.meta().id);  // meta.id, never trace_id
  int effects = 0;
  const std::function<void()> effect = [&] { ++effects; };
  {
    Store worker_a(connection());
    EXPECT_EQ(bq::idempotency::run_once(worker_a, env, effect), bq::idempotency::Outcome::Ran);
    EXPECT_EQ(effects, 1);
    EXPECT_EQ(raw().command({"GET", key}).as_string(), "1");
    Store worker_b(connection());
    EXPECT_EQ(bq::idempotency::run_once(worker_b, env, effect), bq::idempotency::Outcome::Skipped);
    EXPECT_EQ(effects, 1);
  }
  // Persistent: a store created after the others are gone still knows the id.
  Store restarted(connection());
  EXPECT_EQ(bq::idempotency::run_once(restarted, env, effect), bq::idempotency::Outcome::Skipped);
  EXPECT_EQ(effects, 1);

  // A failing effect leaves the id unmarked, so another worker's redelivery runs it (HLP-2).
  const bq::Envelope other = bq::make(kUrn);
  EXPECT_THROW(bq::idempotency::run_once(restarted, other,
                                         [] { throw std::runtime_error("effect failed"); }),
               std::runtime_error);
  EXPECT_FALSE(raw().exists("bq:idemp:" + std::string(other.meta().id)));
  Store worker_c(connection());
  EXPECT_EQ(bq::idempotency::run_once(worker_c, other, effect), bq::idempotency::Outcome::Ran);
  EXPECT_EQ(effects, 2);
}

TEST_F(RedisIdempotencyStore, HLP4_PrefixIsConfigurableAndTheDatabaseIsHonoured) {
  rd::IdempotencyOptions o;
  o.key_prefix = "billing:done:";
  Store store(connection(3), o);
  const std::string id = "ord er:42/\xc3\xbc";  // ids are bytes: no escaping, no trimming
  store.remember(id);
  EXPECT_TRUE(store.seen(id));
  EXPECT_TRUE(all_keys().empty()) << "written to db 0 instead of db 3";
  RawClient db3(server().port());
  ASSERT_EQ(db3.command({"SELECT", "3"}).as_string(), "OK");
  EXPECT_EQ(db3.command({"GET", "billing:done:" + id}).as_string(), "1");
  EXPECT_FALSE(db3.exists("bq:idemp:" + id));
  EXPECT_FALSE(Store(connection()).seen(id)) << "db 0 must not see db 3's ids";
}

TEST_F(RedisIdempotencyStore, HLP4_ServerDownThrowsATransportError) {
  RedisServer down;
  const rd::ConnectionOptions options = rd::parse_url(down.url()).connection;
  down.stop();
  Store store(options);
  rd::test::expect_transient_transport_error([&] { (void)store.seen("m"); }, "seen");
  rd::test::expect_transient_transport_error([&] { store.remember("m"); }, "remember");
  rd::test::expect_transient_transport_error([&] { store.forget("m"); }, "forget");
  rd::test::expect_transient_transport_error([&] { (void)store.claim("m"); }, "claim");

  // run_once: a failing seen stops the effect and propagates (HLP-2).
  bool ran = false;
  EXPECT_THROW(bq::idempotency::run_once(store, "m", [&] { ran = true; }), bq::Error);
  EXPECT_FALSE(ran);

  // The store reconnects once the server is back.
  down.start();
  EXPECT_FALSE(store.seen("m"));
  EXPECT_TRUE(store.claim("m"));
}

TEST_F(RedisIdempotencyStore, HLP4_NegativeTtlOrEmptyPrefixIsAConfigError) {
  EXPECT_THROW(Store(connection(), with_ttl(-1s)), bq::ConfigError);
  rd::IdempotencyOptions no_prefix;
  no_prefix.key_prefix.clear();
  EXPECT_THROW(Store(connection(), no_prefix), bq::ConfigError);
  EXPECT_NO_THROW(Store(connection(), with_ttl(0s)));
}

}  // namespace
