// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// parse_url / parse_layout (RDS-2, RDS-8, spec/03-redis.md §5).

#include <gtest/gtest.h>
#include <babelqueue/errors.hpp>
#include <babelqueue/open.hpp>
#include <babelqueue/redis/transport.hpp>

#include <string>

namespace bq = babelqueue;
namespace redis = babelqueue::redis;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

// The ConfigError message for `url`; fails the test when parse_url accepts it.
std::string config_error(std::string_view url) {
  try {
    (void)redis::parse_url(url);
  } catch (const bq::ConfigError& e) {
    EXPECT_EQ(e.code(), bq::ErrorCode::Config);
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << url;
  return {};
}

void expect_error(std::string_view url, std::string_view needle) {
  const std::string what = config_error(url);
  EXPECT_NE(what.find(needle), std::string::npos) << url << " -> " << what;
}

TEST(ParseLayout, RDS8_Names) {
  EXPECT_EQ(redis::parse_layout("default"), redis::Layout::Default);
  EXPECT_EQ(redis::parse_layout("legacy"), redis::Layout::Default);  // the other SDKs' word
  EXPECT_EQ(redis::parse_layout("laravel"), redis::Layout::Laravel);
  EXPECT_EQ(redis::parse_layout("zset"), redis::Layout::Laravel);
  EXPECT_THROW((void)redis::parse_layout("Laravel"), bq::ConfigError);
  EXPECT_THROW((void)redis::parse_layout(""), bq::ConfigError);
  try {
    (void)redis::parse_layout("fifo");
    FAIL();
  } catch (const bq::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("\"fifo\""), std::string::npos);
  }
}

TEST(ParseUrl, RDS2_HostOnlyKeepsDefaults) {
  const redis::Options o = redis::parse_url("redis://cache.internal");
  const redis::Options d;
  EXPECT_EQ(o.connection.host, "cache.internal");
  EXPECT_EQ(o.connection.port, 6379);
  EXPECT_EQ(o.connection.db, 0);
  EXPECT_TRUE(o.connection.user.empty());
  EXPECT_TRUE(o.connection.password.empty());
  EXPECT_TRUE(o.connection.unix_socket.empty());
  EXPECT_EQ(o.connection.connect_timeout, d.connection.connect_timeout);
  EXPECT_EQ(o.connection.command_timeout, d.connection.command_timeout);
  EXPECT_EQ(o.layout, redis::Layout::Default);
  EXPECT_EQ(o.laravel_key_prefix, "queues:");
  EXPECT_EQ(o.processing_suffix, ":processing");
  EXPECT_EQ(o.retry_after, seconds(90));
  EXPECT_EQ(o.migration_batch_size, -1);
  EXPECT_EQ(o.prefetch, 16);
}

TEST(ParseUrl, RDS2_PortAndDb) {
  const redis::Options o = redis::parse_url("redis://10.0.0.5:6380/3");
  EXPECT_EQ(o.connection.host, "10.0.0.5");
  EXPECT_EQ(o.connection.port, 6380);
  EXPECT_EQ(o.connection.db, 3);
  EXPECT_EQ(redis::parse_url("redis://h/").connection.db, 0);
  EXPECT_EQ(redis::parse_url("redis://h:1").connection.port, 1);
  EXPECT_EQ(redis::parse_url("redis://h:65535").connection.port, 65535);
  EXPECT_EQ(redis::parse_url("REDIS://h").connection.host, "h");
}

TEST(ParseUrl, RDS2_PasswordOnly) {
  const redis::Options o = redis::parse_url("redis://:s3cret@h:6379/1");
  EXPECT_TRUE(o.connection.user.empty());
  EXPECT_EQ(o.connection.password, "s3cret");
  EXPECT_EQ(o.connection.host, "h");
  EXPECT_EQ(o.connection.db, 1);
}

TEST(ParseUrl, RDS2_UserAndPasswordArePercentDecoded) {
  const redis::Options o = redis::parse_url("redis://app%2Dworker:p%40ss%3Aw%2Fo+rd%25@h");
  EXPECT_EQ(o.connection.user, "app-worker");
  EXPECT_EQ(o.connection.password, "p@ss:w/o+rd%");
  // A raw '@' or ':' inside the password needs no escape: the last '@' ends the userinfo.
  const redis::Options raw = redis::parse_url("redis://u:a:b@c@h");
  EXPECT_EQ(raw.connection.user, "u");
  EXPECT_EQ(raw.connection.password, "a:b@c");
  EXPECT_EQ(raw.connection.host, "h");
}

TEST(ParseUrl, RDS2_Ipv6) {
  const redis::Options o = redis::parse_url("redis://[::1]:6380/2");
  EXPECT_EQ(o.connection.host, "::1");
  EXPECT_EQ(o.connection.port, 6380);
  EXPECT_EQ(o.connection.db, 2);
  EXPECT_EQ(redis::parse_url("redis://:pw@[fe80::1:2]").connection.host, "fe80::1:2");
  expect_error("redis://::1:6380", "IPv6 address needs brackets");
  expect_error("redis://[::1", "missing ']'");
  expect_error("redis://[]:6379", "empty IPv6 address");
  expect_error("redis://[::1]x", "after the IPv6 address");
  expect_error("redis://[::g]", "invalid IPv6 address");
}

TEST(ParseUrl, RDS2_UnixSocket) {
  const redis::Options o = redis::parse_url("unix:///var/run/redis/redis.sock?db=4&timeout=1.5");
  EXPECT_EQ(o.connection.unix_socket, "/var/run/redis/redis.sock");
  EXPECT_EQ(o.connection.db, 4);
  EXPECT_EQ(o.connection.command_timeout, milliseconds(1500));
  const redis::Options auth = redis::parse_url("unix://:pw@/tmp/r%20s.sock");
  EXPECT_EQ(auth.connection.password, "pw");
  EXPECT_EQ(auth.connection.unix_socket, "/tmp/r s.sock");
  expect_error("unix://", "absolute socket path");
  expect_error("unix:///", "empty socket path");
  expect_error("unix://localhost/tmp/x.sock", "takes no host");
}

TEST(ParseUrl, RDS2_RedisSchemeClearsABaseUnixSocket) {
  redis::Options base;
  base.connection.unix_socket = "/tmp/x.sock";
  EXPECT_TRUE(redis::parse_url("redis://h", base).connection.unix_socket.empty());
}

TEST(ParseUrl, RDS2_UnstatedPartsKeepTheBase) {
  redis::Options base;
  base.connection.password = "from-secret-store";
  base.connection.port = 7000;
  base.prefetch = 3;
  base.pipelined_acks = false;
  const redis::Options o = redis::parse_url("redis://h?layout=laravel", base);
  EXPECT_EQ(o.connection.password, "from-secret-store");
  EXPECT_EQ(o.connection.port, 7000);
  EXPECT_EQ(o.prefetch, 3);
  EXPECT_FALSE(o.pipelined_acks);
  EXPECT_EQ(o.layout, redis::Layout::Laravel);
}

TEST(ParseUrl, RDS59_QueryOptions) {
  const redis::Options o = redis::parse_url(
      "redis://h?connect_timeout=0.5&timeout=7&layout=zset&prefix=laravel_database_queues%3A"
      "&processing_suffix=%3Ainflight&retry_after=120&migration_batch_size=50&prefetch=1&db=9");
  EXPECT_EQ(o.connection.connect_timeout, milliseconds(500));
  EXPECT_EQ(o.connection.command_timeout, milliseconds(7000));
  EXPECT_EQ(o.layout, redis::Layout::Laravel);
  EXPECT_EQ(o.laravel_key_prefix, "laravel_database_queues:");
  EXPECT_EQ(o.processing_suffix, ":inflight");
  EXPECT_EQ(o.retry_after, seconds(120));
  EXPECT_EQ(o.migration_batch_size, 50);
  EXPECT_EQ(o.prefetch, 1);
  EXPECT_EQ(o.connection.db, 9);
}

TEST(ParseUrl, QueryEdgesEmptySegmentsAndRawColon) {
  const redis::Options o = redis::parse_url("redis://h/?&prefix=queues:&&");
  EXPECT_EQ(o.laravel_key_prefix, "queues:");
}

TEST(ParseUrl, TimeoutsInSecondsRoundUpToMilliseconds) {
  EXPECT_EQ(redis::parse_url("redis://h?timeout=0.001").connection.command_timeout,
            milliseconds(1));
  EXPECT_EQ(redis::parse_url("redis://h?timeout=0.0001").connection.command_timeout,
            milliseconds(1));
  EXPECT_EQ(redis::parse_url("redis://h?timeout=2.2505").connection.command_timeout,
            milliseconds(2251));
  EXPECT_EQ(redis::parse_url("redis://h?timeout=10.000").connection.command_timeout,
            milliseconds(10000));
  for (const char* zero : {"0", "0.0", "0.0000"}) {  // a timeout must be positive
    expect_error(std::string("redis://h?connect_timeout=") + zero,
                 "connect_timeout must be a positive number of seconds");
  }
  for (const char* bad : {"-1", ".5", "5.", "1e3", "abc", "1.2.3", "1234567890"}) {
    expect_error(std::string("redis://h?connect_timeout=") + bad,
                 "\"connect_timeout\" in the redis URL must be a number of seconds");
  }
}

TEST(ParseUrl, RDS59_RetryAfter) {
  EXPECT_EQ(redis::parse_url("redis://h?retry_after=none").retry_after, std::nullopt);
  EXPECT_EQ(redis::parse_url("redis://h?retry_after=null").retry_after, std::nullopt);
  EXPECT_EQ(redis::parse_url("redis://h?retry_after=0").retry_after, seconds(0));
  expect_error("redis://h?retry_after=-1", "must not be negative");
  expect_error("redis://h?retry_after=1.5", "whole seconds");
  expect_error("redis://h?retry_after=soon", "whole seconds");
}

TEST(ParseUrl, RDS51_MigrationBatchSize) {
  EXPECT_EQ(redis::parse_url("redis://h?migration_batch_size=-1").migration_batch_size, -1);
  EXPECT_EQ(redis::parse_url("redis://h?migration_batch_size=1").migration_batch_size, 1);
  expect_error("redis://h?migration_batch_size=0", "migration_batch_size must be -1");
  expect_error("redis://h?migration_batch_size=-2", "migration_batch_size must be -1");
  expect_error("redis://h?migration_batch_size=x", "migration_batch_size must be -1");
}

TEST(ParseUrl, PrefetchAndDbRanges) {
  expect_error("redis://h?prefetch=0", "\"prefetch\" in the redis URL must be an integer in 1..");
  expect_error("redis://h?prefetch=99999999999",
               "\"prefetch\" in the redis URL must be an integer in 1..");
  expect_error("redis://h?db=-1", "\"db\" in the redis URL must be an integer in 0..");
  expect_error("redis://h/1?db=2", "given twice");
  expect_error("redis://h/x", "invalid database index");
  expect_error("redis://h/-0", "invalid database index");
  expect_error("redis://h/1/2", "invalid database index");
  expect_error("redis://h/99999999999", "invalid database index");
}

TEST(ParseUrl, QueryOptionErrors) {
  expect_error("redis://h?tls=1", "unknown option \"tls\" in the redis URL");
  expect_error("redis://h?prefetch", "\"prefetch\" needs a value");
  expect_error("redis://h?prefix=", "\"prefix\" in the redis URL has an empty value");
  expect_error("redis://h?prefetch=1&prefetch=2", "\"prefetch\" is given twice");
  expect_error("redis://h?layout=fifo", "unknown redis layout \"fifo\"");
  expect_error("redis://h?prefix=%zz", "invalid percent-escape in the query");
  expect_error("redis://h?prefix=%4", "invalid percent-escape in the query");
}

TEST(ParseUrl, RDS2_RedissIsRefusedForWantOfTls) {
  expect_error("rediss://:pw@h:6380", "hiredis (0.14) has no TLS");
}

TEST(ParseUrl, SchemeHostAndPortErrors) {
  expect_error("http://h", "unsupported scheme \"http\"");
  expect_error("localhost:6379", "expected redis://");
  expect_error("redis://", "empty host");
  expect_error("redis://:pw@", "empty host");
  expect_error("redis://:pw@:6379", "empty host");
  expect_error("redis://h:", "invalid port");
  expect_error("redis://h:0", "invalid port");
  expect_error("redis://h:65536", "invalid port");
  expect_error("redis://h:-1", "invalid port");
  expect_error("redis://h:+1", "invalid port");
  expect_error("redis://h:63x9", "invalid port");
  expect_error("redis://h h", "invalid character in host");
  expect_error("redis://h#frag", "fragment");
}

TEST(ParseUrl, RDS2_ErrorsNeverEchoThePassword) {
  // Each password below is malformed or leaks into another part of the URL when not
  // percent-encoded; the message must name the problem without the secret.
  for (const char* url : {
           "redis://user:Hunter2Secret%zz@h",
           "redis://user:Hunter2Secret%4@h",
           "redis://user:Hunter2/Secret@h",
           "redis://user:Hunter2?Secret@h",
           "redis://user:Hunter2#Secret@h",
           "redis://Hunter2Secret@h",
           "rediss://user:Hunter2Secret@h",
           "foo://user:Hunter2Secret@h",
           "redis://user:Hunter2Secret@h:bad",
           "redis://user:Hunter2Secret@h/x?nope=1",
           "unix://user:Hunter2Secret@localhost/x",
           "user:Hunter2Secret@h:6379",
           "redis://user:6379?Hunter2Secret@h",
           "redis://Hunter2/Secret@h",
           "redis://user:Hunter2Secret@h?prefetch=0",
       }) {
    const std::string what = config_error(url);
    EXPECT_FALSE(what.empty()) << url;
    EXPECT_EQ(what.find("Hunter2"), std::string::npos) << url << " -> " << what;
    EXPECT_EQ(what.find("Secret"), std::string::npos) << url << " -> " << what;
  }
}

TEST(ParseUrl, RDS2_UserWithoutPasswordIsRefused) {
  expect_error("redis://alice@h", "user without a password");
  // An empty userinfo is no credentials at all.
  EXPECT_TRUE(redis::parse_url("redis://@h").connection.password.empty());
}

// register.cpp: linking babelqueue::redis makes its schemes open through the core factory, and
// the URL fills both the connection and the queue options.
TEST(OpenTransport, RedisSchemesOpenARedisTransportWithTheUrlsOptions) {
  const auto t = bq::open_transport("redis://:pw@127.0.0.1:1/2?layout=laravel&prefix=app:");
  const auto* redis_transport = dynamic_cast<const redis::RedisTransport*>(t.get());
  ASSERT_NE(redis_transport, nullptr);
  const redis::Options& o = redis_transport->options();
  EXPECT_EQ(o.layout, redis::Layout::Laravel);
  EXPECT_EQ(o.laravel_key_prefix, "app:");
  EXPECT_EQ(o.connection.port, 1);
  EXPECT_EQ(o.connection.db, 2);
  EXPECT_EQ(o.connection.password, "pw");
  EXPECT_NE(dynamic_cast<const redis::RedisTransport*>(
                bq::open_transport("unix:///tmp/redis.sock?layout=default").get()),
            nullptr);
  try {
    (void)bq::open_transport("rediss://h");
    ADD_FAILURE() << "rediss:// opened";
  } catch (const bq::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no TLS"), std::string::npos) << e.what();
  }
}

}  // namespace
