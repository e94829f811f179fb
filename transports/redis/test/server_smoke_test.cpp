// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Proves the Redis test support against a real redis-server: RedisServer's lifecycle, RawClient,
// and LaravelPeer's keys, scripts and scores. Time-based cases move scores into the past with
// RawClient instead of waiting.
#include "laravel_peer.hpp"
#include "raw_client.hpp"
#include "redis_server.hpp"
#include "server_test.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cerrno>
#include <ctime>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using babelqueue::redis::test::LaravelPeer;
using babelqueue::redis::test::RawClient;
using babelqueue::redis::test::RedisServer;
using babelqueue::redis::test::Reply;

constexpr char kPrefix[] = "laravel_database_queues:";
constexpr char kQueue[] = "orders";

long long now_seconds() {
  return static_cast<long long>(std::time(nullptr));
}

std::string config_get(RawClient& client, const std::string& name) {
  const Reply reply = client.command({"CONFIG", "GET", name});
  return reply.elements.size() == 2 ? reply.elements[1].as_string() : reply.debug_string();
}

// The top-level attempts of a JSON member as Redis' cjson reads it.
long long cjson_attempts(RawClient& client, const std::string& json) {
  return client.command({"EVAL", "return cjson.decode(ARGV[1]).attempts", "0", json}).as_integer();
}

// Asserts `score` lies in [before + delay, after + delay]: the peer read the clock in between.
void expect_score_between(const std::string& score, long long before, long long after,
                          long long delay) {
  const long long value = std::stoll(score);
  EXPECT_GE(value, before + delay);
  EXPECT_LE(value, after + delay);
}

// Asserts the sorted set `key` holds `member` alone, scored as expect_score_between() says.
void expect_sole_member(RawClient& client, const std::string& key, const std::string& member,
                        long long before, long long after, long long delay) {
  const auto members = client.zrange_withscores(key);
  ASSERT_EQ(members.size(), 1u);
  EXPECT_EQ(members[0].first, member);
  expect_score_between(members[0].second, before, after, delay);
}

// Moves an existing member's score one second into the past: "the time has come" without
// waiting for it. XX CH answers 1 only if the member was there and its score changed.
void make_due(RawClient& client, const std::string& key, const std::string& member) {
  const Reply changed =
      client.command({"ZADD", key, "XX", "CH", std::to_string(now_seconds() - 1), member});
  EXPECT_EQ(changed.as_integer(), 1) << "no such member in " << key;
}

// Makes `member` of the sorted set `key` due and pops: the peer must deliver exactly those bytes,
// as delivery number `attempts_1based`. nullopt when it popped nothing.
std::optional<LaravelPeer::Job> pop_once_due(LaravelPeer& peer, RawClient& client,
                                             const std::string& key, const std::string& member,
                                             long long attempts_1based) {
  make_due(client, key, member);
  std::optional<LaravelPeer::Job> job = peer.pop(kQueue);
  if (job.has_value()) {
    EXPECT_EQ(job->raw_body, member);
    EXPECT_EQ(job->attempts_1based, attempts_1based);
  }
  return job;
}

class RedisServerSmoke : public ::testing::Test {
 protected:
  void SetUp() override { BABELQUEUE_REQUIRE_REDIS_SERVER(); }
};

// The LaravelPeer cases need an empty server, not one of their own.
class LaravelPeerSmoke : public babelqueue::redis::test::SharedRedisServerTest {};

TEST_F(RedisServerSmoke, StartsOnLoopbackAndAnswersCommands) {
  RedisServer server;
  ASSERT_TRUE(server.running());
  EXPECT_GT(server.pid(), 0);
  EXPECT_GT(server.port(), 0);
  EXPECT_LT(server.port(), 65536);
  const std::string address = "127.0.0.1:" + std::to_string(server.port());
  EXPECT_EQ(server.url(), "redis://" + address + "/0");
  EXPECT_EQ(server.url(3), "redis://" + address + "/3");

  RawClient client(server.port());
  const Reply pong = client.command({"PING"});
  EXPECT_EQ(pong.type, Reply::Status);
  EXPECT_EQ(pong.str, "PONG");

  const std::string binary("a\0b\xff\r\n", 6);
  EXPECT_EQ(client.command({"SET", binary, binary}).as_string(), "OK");
  const Reply value = client.command({"GET", binary});
  EXPECT_EQ(value.type, Reply::String);
  EXPECT_EQ(value.str, binary);
  EXPECT_TRUE(client.command({"GET", "missing"}).is_nil());
  EXPECT_TRUE(client.command({"NO-SUCH-COMMAND"}).is_error());

  EXPECT_EQ(config_get(client, "bind"), "127.0.0.1");
  EXPECT_EQ(config_get(client, "save"), "");
  EXPECT_EQ(config_get(client, "appendonly"), "no");
  EXPECT_EQ(config_get(client, "protected-mode"), "no");
  EXPECT_EQ(std::filesystem::path(config_get(client, "dir")),
            std::filesystem::canonical(server.dir()));
  EXPECT_TRUE(std::filesystem::exists(server.dir() + "/redis.log"));
}

TEST_F(RedisServerSmoke, StopThenStartKeepsDataWithAppendonly) {
  RedisServer server({.appendonly = true});
  RawClient client(server.port());
  EXPECT_EQ(config_get(client, "appendonly"), "yes");
  EXPECT_EQ(config_get(client, "appendfsync"), "always");
  ASSERT_EQ(client.command({"SET", "k", "v"}).as_string(), "OK");
  const int port = server.port();
  const std::string dir = server.dir();

  server.stop();
  EXPECT_FALSE(server.running());
  EXPECT_EQ(server.pid(), -1);
  EXPECT_THROW(client.command({"PING"}), std::runtime_error);
  EXPECT_THROW(RawClient{port}, std::runtime_error);

  server.start();
  EXPECT_TRUE(server.running());
  EXPECT_EQ(server.port(), port);
  EXPECT_EQ(server.dir(), dir);
  client.reconnect();
  EXPECT_EQ(client.command({"GET", "k"}).as_string(), "v");
}

TEST_F(RedisServerSmoke, StopThenStartWithoutAppendonlyStartsEmpty) {
  RedisServer server;
  RawClient client(server.port());
  ASSERT_EQ(client.command({"SET", "k", "v"}).as_string(), "OK");
  server.stop();
  // --save "": a clean shutdown writes no snapshot either.
  EXPECT_FALSE(std::filesystem::exists(server.dir() + "/dump.rdb"));
  server.start();
  client.reconnect();
  EXPECT_EQ(client.command({"DBSIZE"}).as_integer(), 0);
}

TEST_F(RedisServerSmoke, KillThenStartKeepsAcknowledgedWrites) {
  RedisServer server({.appendonly = true});
  RawClient client(server.port());
  std::vector<std::string> written;
  for (int i = 0; i < 20; ++i) {
    written.push_back("item-" + std::to_string(i));
    ASSERT_EQ(client.command({"RPUSH", "list", written.back()}).as_integer(), i + 1);
  }
  const pid_t crashed = server.pid();

  server.kill();
  EXPECT_FALSE(server.running());
  // Reaped by the support library: no zombie left to this process.
  EXPECT_EQ(::waitpid(crashed, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);

  server.start();
  EXPECT_NE(server.pid(), crashed);
  client.reconnect();
  EXPECT_EQ(client.lrange("list"), written);
}

TEST_F(RedisServerSmoke, StartWhileRunningIsALogicError) {
  RedisServer server;
  EXPECT_THROW(server.start(), std::logic_error);
  EXPECT_TRUE(server.running());
}

TEST_F(RedisServerSmoke, DestructorStopsTheServerAndRemovesItsDirectory) {
  pid_t pid = -1;
  std::string dir;
  {
    RedisServer server;
    pid = server.pid();
    dir = server.dir();
    ASSERT_TRUE(std::filesystem::is_directory(dir));
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST_F(RedisServerSmoke, FailedStartThrowsWithTheLogTail) {
  try {
    RedisServer server({.extra_args = {"--no-such-directive", "1"}});
    FAIL() << "redis-server started with an unknown directive";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("exited during startup"), std::string::npos) << message;
    EXPECT_NE(message.find("no-such-directive"), std::string::npos) << message;
  }
}

TEST_F(RedisServerSmoke, ExtraArgsReachTheServer) {
  RedisServer server({.extra_args = {"--databases", "4"}});
  RawClient client(server.port());
  EXPECT_EQ(config_get(client, "databases"), "4");
  EXPECT_EQ(client.command({"SELECT", "3"}).as_string(), "OK");
  EXPECT_TRUE(client.command({"SELECT", "4"}).is_error());
}

TEST_F(RedisServerSmoke, RequirepassIsEnforcedAndInTheUrl) {
  RedisServer server({.requirepass = "p@ss word"});
  EXPECT_EQ(server.url(2),
            "redis://:p%40ss%20word@127.0.0.1:" + std::to_string(server.port()) + "/2");
  RawClient anonymous(server.port());
  const Reply refused = anonymous.command({"PING"});
  ASSERT_TRUE(refused.is_error());
  EXPECT_EQ(refused.str.rfind("NOAUTH", 0), 0u) << refused.str;
  RawClient authenticated(server.port(), server.password());
  EXPECT_EQ(authenticated.command({"PING"}).as_string(), "PONG");
  EXPECT_THROW(RawClient(server.port(), "wrong"), std::runtime_error);
}

TEST_F(RedisServerSmoke, ClientKillByIdDropsAnotherConnection) {
  RedisServer server;
  RawClient admin(server.port());
  RawClient victim(server.port());
  const int victim_id = victim.client_id();
  EXPECT_NE(admin.client_id(), victim_id);
  EXPECT_EQ(admin.client_ids_except_self(), std::vector<long long>{victim_id});

  admin.client_kill_by_id(victim_id);
  EXPECT_THROW(victim.command({"PING"}), std::runtime_error);
  EXPECT_TRUE(admin.client_ids_except_self().empty());
  EXPECT_THROW(admin.client_kill_by_id(victim_id), std::runtime_error);

  victim.reconnect();
  EXPECT_EQ(victim.command({"PING"}).as_string(), "PONG");
}

TEST_F(LaravelPeerSmoke, LaravelPeerKeyNames) {
  LaravelPeer peer(raw(), kPrefix);
  EXPECT_EQ(peer.ready_key(kQueue), "laravel_database_queues:orders");
  EXPECT_EQ(peer.delayed_key(kQueue), "laravel_database_queues:orders:delayed");
  EXPECT_EQ(peer.reserved_key(kQueue), "laravel_database_queues:orders:reserved");
  EXPECT_EQ(peer.notify_key(kQueue), "laravel_database_queues:orders:notify");

  peer.push(kQueue, LaravelPeer::make_payload());
  const Reply keys = raw().command({"KEYS", "*"});
  ASSERT_EQ(keys.elements.size(), 2u) << keys.debug_string();
  EXPECT_TRUE(raw().exists("laravel_database_queues:orders"));
  EXPECT_TRUE(raw().exists("laravel_database_queues:orders:notify"));
}

TEST_F(RedisServerSmoke, LaravelPayloadIsPhpJsonEncode) {
  const std::string note = "a/b \xc3\xa9\xe2\x80\xa8\n\x01\x7f\"";
  const std::string command = R"(O:18:"App\Jobs\ShipOrder":1:{s:4:"note";s:)" +
                              std::to_string(note.size()) + ":\"" + note + "\";}";
  const std::string payload =
      LaravelPeer::make_payload({.display_name = R"(App\Jobs\ShipOrder)",
                                 .command = command,
                                 .uuid = "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d",
                                 .id = "AbCdEfGhIjKlMnOpQrStUvWxYz012345"});
  EXPECT_EQ(
      payload,
      R"({"uuid":"9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d","displayName":"App\\Jobs\\ShipOrder",)"
      R"("job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,)"
      R"("maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,)"
      R"("retryUntil":null,"data":{"commandName":"App\\Jobs\\ShipOrder",)"
      R"("command":"O:18:\"App\\Jobs\\ShipOrder\":1:{s:4:\"note\";s:13:\"a\/b )"
      "\xc3\xa9"
      R"(\u2028\n\u0001)"
      "\x7f"
      R"(\"\";}"},"id":"AbCdEfGhIjKlMnOpQrStUvWxYz012345","attempts":0})");

  const std::string first = LaravelPeer::make_payload();
  const std::string second = LaravelPeer::make_payload();
  EXPECT_NE(first, second);
  EXPECT_NE(first.find(R"("displayName":"App\\Jobs\\ProcessOrder")"), std::string::npos);
  EXPECT_NE(first.find(R"("command":"O:21:\"App\\Jobs\\ProcessOrder\":0:{}")"), std::string::npos);
  EXPECT_TRUE(first.ends_with(R"(","attempts":0})")) << first;
}

TEST_F(LaravelPeerSmoke, LaravelPeerPushPopRemove) {
  LaravelPeer peer(raw(), kPrefix);
  const std::string payload = LaravelPeer::make_payload();
  peer.push(kQueue, payload);
  EXPECT_EQ(raw().lrange(peer.ready_key(kQueue)), std::vector<std::string>{payload});
  EXPECT_EQ(raw().lrange(peer.notify_key(kQueue)), std::vector<std::string>{"1"});

  const long long before = now_seconds();
  const std::optional<LaravelPeer::Job> job = peer.pop(kQueue);
  const long long after = now_seconds();
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->raw_body, payload);
  EXPECT_EQ(job->attempts_1based, 1);
  EXPECT_EQ(cjson_attempts(raw(), job->reserved), 1);
  EXPECT_EQ(raw().llen(peer.ready_key(kQueue)), 0);
  EXPECT_EQ(raw().llen(peer.notify_key(kQueue)), 0);
  expect_sole_member(raw(), peer.reserved_key(kQueue), job->reserved, before, after, 90);

  EXPECT_FALSE(peer.pop(kQueue).has_value());
  peer.remove(kQueue, *job);
  EXPECT_EQ(raw().zcard(peer.reserved_key(kQueue)), 0);
}

TEST_F(LaravelPeerSmoke, LaravelPeerPopsABabelQueueEnvelopePushedRaw) {
  LaravelPeer peer(raw(), kPrefix);
  // The BabelQueue Laravel driver pushes the bare envelope, pretty-printed bytes and all.
  const std::string envelope =
      "{\n  \"job\": \"urn:babel:orders:created\",\n  \"data\": {\"url\": \"https://a/b\"},\n"
      "  \"meta\": {\"id\": \"m-1\"},\n  \"attempts\": 0\n}\n";
  peer.push(kQueue, envelope);
  const std::optional<LaravelPeer::Job> job = peer.pop(kQueue);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->raw_body, envelope);
  EXPECT_EQ(job->attempts_1based, 1);
  EXPECT_NE(job->reserved, envelope);
  EXPECT_NE(job->reserved.find(R"(https:\/\/a\/b)"), std::string::npos) << job->reserved;
  EXPECT_EQ(cjson_attempts(raw(), job->reserved), 1);
}

TEST_F(LaravelPeerSmoke, LaravelLaterIsInvisibleUntilDue) {
  LaravelPeer peer(raw(), kPrefix);
  const std::string payload = LaravelPeer::make_payload();
  const long long before = now_seconds();
  peer.later(kQueue, 60, payload);
  const long long after = now_seconds();
  expect_sole_member(raw(), peer.delayed_key(kQueue), payload, before, after, 60);
  EXPECT_FALSE(raw().exists(peer.notify_key(kQueue)));

  EXPECT_FALSE(peer.pop(kQueue).has_value());
  EXPECT_EQ(raw().zcard(peer.delayed_key(kQueue)), 1);

  ASSERT_TRUE(pop_once_due(peer, raw(), peer.delayed_key(kQueue), payload, 1).has_value());
  EXPECT_EQ(raw().zcard(peer.delayed_key(kQueue)), 0);
  EXPECT_EQ(raw().llen(peer.notify_key(kQueue)), 0);
}

TEST_F(LaravelPeerSmoke, LaravelReleaseMovesTheReservedCopyToDelayed) {
  LaravelPeer peer(raw(), kPrefix);
  peer.push(kQueue, LaravelPeer::make_payload());
  const std::optional<LaravelPeer::Job> first = peer.pop(kQueue);
  ASSERT_TRUE(first.has_value());

  const long long before = now_seconds();
  peer.release(kQueue, *first, 30);
  const long long after = now_seconds();
  EXPECT_EQ(raw().zcard(peer.reserved_key(kQueue)), 0);
  expect_sole_member(raw(), peer.delayed_key(kQueue), first->reserved, before, after, 30);
  EXPECT_FALSE(peer.pop(kQueue).has_value());

  const std::optional<LaravelPeer::Job> second =
      pop_once_due(peer, raw(), peer.delayed_key(kQueue), first->reserved, 2);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(cjson_attempts(raw(), second->reserved), 2);
}

TEST_F(LaravelPeerSmoke, LaravelMigratesAnExpiredReservation) {
  LaravelPeer peer(raw(), kPrefix);
  peer.push(kQueue, LaravelPeer::make_payload());
  const std::optional<LaravelPeer::Job> first = peer.pop(kQueue);
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(peer.pop(kQueue).has_value());

  // The worker died: its reservation expires.
  ASSERT_TRUE(pop_once_due(peer, raw(), peer.reserved_key(kQueue), first->reserved, 2).has_value());
  EXPECT_EQ(raw().llen(peer.notify_key(kQueue)), 0);
  EXPECT_EQ(raw().zcard(peer.reserved_key(kQueue)), 1);
}

TEST_F(LaravelPeerSmoke, LaravelWithNullRetryAfterNeverMigratesReserved) {
  LaravelPeer null_peer(raw(), kPrefix, std::nullopt);
  null_peer.push(kQueue, LaravelPeer::make_payload());
  const long long before = now_seconds();
  const std::optional<LaravelPeer::Job> job = null_peer.pop(kQueue);
  const long long after = now_seconds();
  ASSERT_TRUE(job.has_value());
  const auto reserved = raw().zrange_withscores(null_peer.reserved_key(kQueue));
  ASSERT_EQ(reserved.size(), 1u);
  expect_score_between(reserved[0].second, before, after, 0);

  make_due(raw(), null_peer.reserved_key(kQueue), job->reserved);
  EXPECT_FALSE(null_peer.pop(kQueue).has_value());
  EXPECT_EQ(raw().zcard(null_peer.reserved_key(kQueue)), 1);

  LaravelPeer peer(raw(), kPrefix);
  const std::optional<LaravelPeer::Job> recovered = peer.pop(kQueue);
  ASSERT_TRUE(recovered.has_value());
  EXPECT_EQ(recovered->raw_body, job->reserved);
}

TEST_F(LaravelPeerSmoke, LaravelMigrationMovesEverythingDueInOrder) {
  LaravelPeer peer(raw(), kPrefix);
  // More than one 100-item RPUSH chunk, plus one member that is not due yet.
  const long long past = now_seconds() - 1000;
  std::vector<std::string> due;
  for (int i = 0; i < 250; ++i) {
    due.push_back(R"({"n":)" + std::to_string(i) + R"(,"attempts":0})");
    const Reply added =
        raw().command({"ZADD", peer.delayed_key(kQueue), std::to_string(past + i), due.back()});
    ASSERT_EQ(added.as_integer(), 1);
  }
  const std::string later = R"({"n":"later","attempts":0})";
  const Reply added = raw().command(
      {"ZADD", peer.delayed_key(kQueue), std::to_string(now_seconds() + 3600), later});
  ASSERT_EQ(added.as_integer(), 1);

  const std::optional<LaravelPeer::Job> job = peer.pop(kQueue);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->raw_body, due.front());
  EXPECT_EQ(raw().lrange(peer.ready_key(kQueue)),
            std::vector<std::string>(due.begin() + 1, due.end()));
  EXPECT_EQ(raw().llen(peer.notify_key(kQueue)), 249);
  const auto delayed = raw().zrange_withscores(peer.delayed_key(kQueue));
  ASSERT_EQ(delayed.size(), 1u);
  EXPECT_EQ(delayed[0].first, later);
}

TEST_F(LaravelPeerSmoke, LaravelLosesAHeadItCannotDecode) {
  LaravelPeer peer(raw(), kPrefix);
  peer.push(kQueue, "not json");
  EXPECT_THROW(peer.pop(kQueue), std::runtime_error);
  // The script raised after its LPOP: the head is gone, nothing reserved, the token left.
  EXPECT_EQ(raw().llen(peer.ready_key(kQueue)), 0);
  EXPECT_EQ(raw().zcard(peer.reserved_key(kQueue)), 0);
  EXPECT_EQ(raw().llen(peer.notify_key(kQueue)), 1);
}

}  // namespace
