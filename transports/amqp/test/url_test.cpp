// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Connection URLs and option bounds of the RabbitMQ transport (04 AMQP-1).

#include <babelqueue/amqp/transport.hpp>
#include <babelqueue/errors.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "options.hpp"

namespace {

using babelqueue::ConfigError;
using babelqueue::amqp::ConsumeMode;
using babelqueue::amqp::DeclareMode;
using babelqueue::amqp::Options;
using babelqueue::amqp::parse_consume_mode;
using babelqueue::amqp::parse_declare_mode;
using babelqueue::amqp::parse_url;
using babelqueue::amqp::detail::effective_port;
using babelqueue::amqp::detail::validate;
using std::chrono::milliseconds;
using std::chrono::seconds;

// The password of every URL and Options below; it appears in no other part of them.
constexpr std::string_view kPassword = "Zq9wX";

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

// The ConfigError text `f` throws, checked to start with `prefix` and to hold no password.
std::string error_of(const std::function<void()>& f, std::string_view prefix) {
  try {
    f();
  } catch (const ConfigError& e) {
    const std::string text = e.what();
    EXPECT_EQ(text.rfind(prefix, 0), 0U) << text;
    EXPECT_EQ(text.find(kPassword), std::string::npos) << text;
    return text;
  }
  ADD_FAILURE() << "no ConfigError";
  return {};
}

std::string url_error(std::string_view url) {
  return error_of([url] { parse_url(url); }, "amqp URL: ");
}

std::string with_password(std::string_view scheme, std::string_view rest) {
  return std::string(scheme) + "://u:" + std::string(kPassword) + "@" + std::string(rest);
}

// The error of "amqp://u:<password>@" + rest.
std::string amqp_error(std::string_view rest) {
  return url_error(with_password("amqp", rest));
}

std::string amqps_error(std::string_view rest) {
  return url_error(with_password("amqps", rest));
}

std::string options_error(const Options& o) {
  return error_of([&o] { validate(o); }, "amqp options: ");
}

TEST(AmqpUrl, AMQP1_ShortestUrlGivesTheDefaults) {
  const Options o = parse_url("amqp://localhost");
  const Options defaults;
  EXPECT_EQ(o.host, "localhost");
  EXPECT_EQ(o.port, 0);
  EXPECT_EQ(effective_port(o), 5672);
  EXPECT_EQ(o.user, "guest");
  EXPECT_EQ(o.password, "guest");
  EXPECT_EQ(o.vhost, "/");
  EXPECT_FALSE(o.tls.enabled);
  EXPECT_FALSE(o.heartbeat.has_value());
  EXPECT_EQ(o.connect_timeout, defaults.connect_timeout);
  EXPECT_EQ(o.publisher_confirms, defaults.publisher_confirms);
  EXPECT_EQ(o.confirm_timeout, defaults.confirm_timeout);
  EXPECT_EQ(o.consume_mode, ConsumeMode::Push);
  EXPECT_EQ(o.prefetch, 100);
  EXPECT_EQ(o.declare, DeclareMode::Classic);
  EXPECT_TRUE(o.tls.ca_file.empty());
  EXPECT_TRUE(o.tls.verify_peer);
  EXPECT_TRUE(o.tls.verify_hostname);
  validate(o);
}

TEST(AmqpUrl, AMQP1_EveryPartOfTheAuthority) {
  const Options o = parse_url(with_password("AMQP", "Rabbit-1.Example.org:5673/prod"));
  EXPECT_EQ(o.host, "rabbit-1.example.org");
  EXPECT_EQ(o.port, 5673);
  EXPECT_EQ(effective_port(o), 5673);
  EXPECT_EQ(o.user, "u");
  EXPECT_EQ(o.password, kPassword);
  EXPECT_EQ(o.vhost, "prod");
}

TEST(AmqpUrl, AMQP1_AmqpsDefaultPortAndTls) {
  const Options o = parse_url("amqps://broker");
  EXPECT_TRUE(o.tls.enabled);
  EXPECT_EQ(o.port, 0);
  EXPECT_EQ(effective_port(o), 5671);
  EXPECT_TRUE(o.tls.verify_peer);
  EXPECT_TRUE(o.tls.verify_hostname);
  EXPECT_EQ(effective_port(parse_url("amqps://broker:5672")), 5672);
  EXPECT_FALSE(parse_url("amqp://broker", parse_url("amqps://broker")).tls.enabled);
}

TEST(AmqpUrl, AMQP1_Ipv6LiteralHost) {
  const Options o = parse_url(with_password("amqp", "[::1]:5673/v"));
  EXPECT_EQ(o.host, "::1");
  EXPECT_EQ(o.port, 5673);
  EXPECT_EQ(o.vhost, "v");
  EXPECT_EQ(parse_url("amqps://[fe80::1:ffff:192.168.0.1]").host, "fe80::1:ffff:192.168.0.1");
  EXPECT_CONTAINS(amqp_error("::1:5672"), "an IPv6 address needs brackets");
}

TEST(AmqpUrl, AMQP1_Vhosts) {
  for (const auto& [path, vhost] : {
           std::pair{"", "/"},
           {"/", "/"},
           {"/%2f", "/"},
           {"/%2F", "/"},
           {"/prod", "prod"},
           {"/a%2Fb", "a/b"},
           {"/%2Fprod", "/prod"},
           {"/%2F%2F", "//"},
           {"/v%20h%3F%23", "v h?#"},
           {"/?heartbeat=5", "/"},
           {"/x?heartbeat=5", "x"},
       }) {
    EXPECT_EQ(parse_url(std::string("amqp://h") + path).vhost, vhost) << path;
  }
}

TEST(AmqpUrl, AMQP1_UnescapedSlashInTheVhostIsAnError) {
  for (const char* path : {"/a/b", "//", "/prod/", "/a%2Fb/c", "///"}) {
    const std::string error = amqp_error(std::string("h") + path);
    EXPECT_CONTAINS(error, "unescaped '/' in the vhost path \"" + std::string(path) + "\"");
    EXPECT_CONTAINS(error, "%2F");
  }
}

TEST(AmqpUrl, AMQP1_PercentEscapesInUserAndPassword) {
  const Options o = parse_url("amqp://us%40er%3A1:p%3Aw%2F%40%25%3F%23+@h");
  EXPECT_EQ(o.user, "us@er:1");
  EXPECT_EQ(o.password, "p:w/@%?#+");  // '+' is a space only in the query
}

TEST(AmqpUrl, AMQP1_CredentialsTheUrlLeavesOutKeepBase) {
  Options base;
  base.user = "bob";
  base.password = std::string(kPassword);
  const Options none = parse_url("amqp://h", base);
  EXPECT_EQ(none.user, "bob");
  EXPECT_EQ(none.password, kPassword);
  const Options user_only = parse_url("amqp://alice@h");
  EXPECT_EQ(user_only.user, "alice");
  EXPECT_EQ(user_only.password, "guest");
  const Options empty_password = parse_url("amqp://alice:@h");
  EXPECT_EQ(empty_password.user, "alice");
  EXPECT_EQ(empty_password.password, "");
}

TEST(AmqpUrl, AMQP1_WhatTheUrlLeavesOutKeepsBase) {
  Options base;
  base.port = 1234;
  base.vhost = "base";
  base.prefetch = 7;
  base.heartbeat = seconds(3);
  base.delay_queue_infix = ".wait.";
  const Options kept = parse_url("amqp://h", base);
  EXPECT_EQ(kept.port, 1234);
  EXPECT_EQ(kept.vhost, "base");
  EXPECT_EQ(kept.prefetch, 7);
  EXPECT_EQ(kept.heartbeat, seconds(3));
  EXPECT_EQ(kept.delay_queue_infix, ".wait.");
  const Options replaced = parse_url("amqp://h:99/%2F?prefetch=8&heartbeat=0", base);
  EXPECT_EQ(replaced.port, 99);
  EXPECT_EQ(replaced.vhost, "/");
  EXPECT_EQ(replaced.prefetch, 8);
  EXPECT_EQ(replaced.heartbeat, seconds(0));
}

TEST(AmqpUrl, AMQP1_QueryOptions) {
  const Options o = parse_url(
      "amqp://h/?heartbeat=65535&connect_timeout=2.5&confirms=false&confirm_timeout=0.25"
      "&prefetch=65535&consume=get&declare=quorum");
  EXPECT_EQ(o.heartbeat, seconds(65535));
  EXPECT_EQ(o.connect_timeout, milliseconds(2500));
  EXPECT_FALSE(o.publisher_confirms);
  EXPECT_EQ(o.confirm_timeout, milliseconds(250));
  EXPECT_EQ(o.prefetch, 65535);
  EXPECT_EQ(o.consume_mode, ConsumeMode::Get);
  EXPECT_EQ(o.declare, DeclareMode::Quorum);
  validate(o);

  EXPECT_EQ(parse_url("amqp://h?heartbeat=0").heartbeat, seconds(0));
  EXPECT_EQ(parse_url("amqp://h?connect_timeout=0.0001").connect_timeout, milliseconds(1));
  EXPECT_EQ(parse_url("amqp://h?connect_timeout=7").connect_timeout, seconds(7));
  EXPECT_TRUE(
      parse_url("amqp://h?confirms=on", parse_url("amqp://h?confirms=0")).publisher_confirms);
  EXPECT_EQ(parse_url("amqp://h?prefetch=1").prefetch, 1);
  EXPECT_EQ(parse_url("amqp://h?consume=push").consume_mode, ConsumeMode::Push);
  EXPECT_EQ(parse_url("amqp://h?consume=consume", parse_url("amqp://h?consume=get")).consume_mode,
            ConsumeMode::Push);
  EXPECT_EQ(parse_url("amqp://h?declare=classic").declare, DeclareMode::Classic);
  EXPECT_EQ(parse_url("amqp://h?declare=passive").declare, DeclareMode::Passive);
}

TEST(AmqpUrl, AMQP1_TlsOptions) {
  const Options o =
      parse_url("amqps://h?cacertfile=/etc/ca.pem&certfile=/c%20d/cert.pem&keyfile=key.pem");
  EXPECT_EQ(o.tls.ca_file, "/etc/ca.pem");
  EXPECT_EQ(o.tls.cert_file, "/c d/cert.pem");
  EXPECT_EQ(o.tls.key_file, "key.pem");
  EXPECT_TRUE(o.tls.verify_peer);
  EXPECT_TRUE(o.tls.verify_hostname);
  validate(o);

  const Options none = parse_url("amqps://h?verify=verify_none");
  EXPECT_FALSE(none.tls.verify_peer);
  EXPECT_FALSE(none.tls.verify_hostname);
  const Options peer = parse_url("amqps://h?verify=verify_peer", none);
  EXPECT_TRUE(peer.tls.verify_peer);
  const Options no_name = parse_url("amqps://h?verify=verify_peer&verify_hostname=false");
  EXPECT_TRUE(no_name.tls.verify_peer);
  EXPECT_FALSE(no_name.tls.verify_hostname);
  EXPECT_TRUE(parse_url("amqps://h?verify_hostname=true", no_name).tls.verify_hostname);
  EXPECT_FALSE(parse_url("amqps://h?verify=verify_none&verify_hostname=false").tls.verify_peer);
}

TEST(AmqpUrl, AMQP1_SchemeHostAndPortErrors) {
  EXPECT_CONTAINS(url_error(std::string("u:") + std::string(kPassword) + "@h:5672"),
                  "expected amqp://");
  EXPECT_CONTAINS(url_error(with_password("redis", "h")),
                  "unsupported scheme \"redis\" (expected amqp:// or amqps://)");
  EXPECT_CONTAINS(amqp_error(""), "empty host");
  EXPECT_CONTAINS(amqp_error("/vhost"), "empty host");
  EXPECT_CONTAINS(url_error("amqp://"), "empty host");
  EXPECT_CONTAINS(amqp_error(":5672"), "empty host");
  EXPECT_CONTAINS(amqp_error("h:0"), "invalid port \"0\" (expected 1..65535)");
  EXPECT_CONTAINS(amqp_error("h:65536"), "invalid port");
  EXPECT_CONTAINS(amqps_error("ho st"), "invalid character in host");
  EXPECT_CONTAINS(amqp_error("h/#x"), "fragment");
  // The kit's "URL <url>: ..." reads "amqp URL: <url>: ...".
  EXPECT_EQ(amqp_error("h:0").find("amqp URL: URL"), std::string::npos);
}

TEST(AmqpUrl, AMQP1_PercentEscapeErrors) {
  EXPECT_CONTAINS(url_error("amqp://u%zz:" + std::string(kPassword) + "@h"),
                  "invalid percent-escape in the user");
  EXPECT_CONTAINS(url_error("amqp://u:" + std::string(kPassword) + "%4@h"),
                  "invalid percent-escape in the password");
  EXPECT_CONTAINS(amqp_error("h/%g1"), "invalid percent-escape in the path");
  EXPECT_CONTAINS(amqp_error("h?prefetch=%2"), "invalid percent-escape in the query");
  // A password holding an unescaped '/' or '?' ends the authority early.
  EXPECT_CONTAINS(url_error("amqp://u:Zq9/wX@h/v"), "'@' after the host");
  EXPECT_CONTAINS(url_error("amqp://u:Zq9?wX@h"), "'@' after the host");
}

TEST(AmqpUrl, AMQP1_QueryValueErrors) {
  for (const char* v : {"-1", "65536", "1.5", "x"}) {
    EXPECT_CONTAINS(amqp_error(std::string("h?heartbeat=") + v),
                    "option \"heartbeat\" in amqp://u:***@h?heartbeat=" + std::string(v) +
                        " must be an integer in 0..65535");
  }
  for (const char* key : {"connect_timeout", "confirm_timeout"}) {
    EXPECT_CONTAINS(amqp_error("h?" + std::string(key) + "=0"),
                    "option \"" + std::string(key) + "\" must be a positive number of seconds");
    EXPECT_CONTAINS(amqp_error("h?" + std::string(key) + "=0.000"), "positive");
    EXPECT_CONTAINS(amqp_error("h?" + std::string(key) + "=-1"), "must be a number of seconds");
  }
  EXPECT_CONTAINS(amqp_error("h?confirms=maybe"), "\"confirms\"");
  EXPECT_CONTAINS(amqp_error("h?confirms=maybe"), "must be true or false, got \"maybe\"");
  for (const char* v : {"0", "65536", "-1", "1x"}) {
    EXPECT_CONTAINS(amqp_error(std::string("h?prefetch=") + v), "must be an integer in 1..65535");
  }
  EXPECT_CONTAINS(amqp_error("h?consume=Push"), "must be one of push, consume, get, got \"Push\"");
  EXPECT_CONTAINS(amqp_error("h?declare=lazy"),
                  "must be one of classic, quorum, passive, got \"lazy\"");
  EXPECT_CONTAINS(amqp_error("h?prefetch="), "option \"prefetch\"");
  EXPECT_CONTAINS(amqp_error("h?prefetch="), "has an empty value");
  EXPECT_CONTAINS(amqp_error("h?prefetch=1&prefetch=2"), "\"prefetch\" is given twice");
}

TEST(AmqpUrl, AMQP1_TlsOptionErrors) {
  for (const char* query : {"cacertfile=ca.pem", "certfile=c.pem&keyfile=k.pem", "keyfile=k.pem",
                            "verify=verify_peer", "verify=verify_none", "verify_hostname=false"}) {
    EXPECT_CONTAINS(amqp_error(std::string("h?") + query), "is a TLS option: it needs amqps://")
        << query;
  }
  EXPECT_CONTAINS(amqps_error("h?certfile=c.pem"), "certfile and keyfile go together");
  EXPECT_CONTAINS(amqps_error("h?keyfile=k.pem"), "certfile and keyfile go together");
  EXPECT_CONTAINS(amqps_error("h?cacertfile="), "option \"cacertfile\"");
  EXPECT_CONTAINS(amqps_error("h?cacertfile="), "has an empty value");
  EXPECT_CONTAINS(amqps_error("h?verify=none"),
                  "must be one of verify_peer, verify_none, got \"none\"");
  EXPECT_CONTAINS(amqps_error("h?verify=verify_none&verify_hostname=true"),
                  "verify_hostname=true needs verify=verify_peer");
  EXPECT_CONTAINS(amqps_error("h?verify_hostname=perhaps"), "must be true or false");
}

TEST(AmqpUrl, AMQP1_UnknownOptionNamesTheKnownOnes) {
  EXPECT_CONTAINS(amqp_error("h/v?prefetch=5&vhost=x"),
                  "unknown option \"vhost\" in amqp://u:***@h/v?prefetch=5&vhost=x (known: "
                  "heartbeat, connect_timeout, confirms, confirm_timeout, prefetch, consume, "
                  "declare, cacertfile, certfile, keyfile, verify, verify_hostname)");
  EXPECT_CONTAINS(amqp_error("h?Prefetch=5"), "unknown option \"Prefetch\"");
}

TEST(AmqpUrl, AMQP1_NoErrorContainsThePassword) {
  for (const char* rest :
       {"h:0", "h:x", "", "h/a/b", "h/%zz", "h?heartbeat=x", "h?prefetch=0", "h?zzz=1",
        "h?connect_timeout=0", "h?cacertfile=ca.pem", "h?a=1&a=2", "h#", "[::1", "::1"}) {
    EXPECT_FALSE(amqp_error(rest).empty()) << rest;
  }
  for (const char* rest :
       {"h?certfile=c", "h?verify=x", "h?verify=verify_none&verify_hostname=1"}) {
    EXPECT_FALSE(amqps_error(rest).empty()) << rest;
  }
  for (const char* url :
       {"amqp://u:Zq9wX/@h", "amqp://u:Zq9wX?@h", "amqp://u:Zq9wX#@h", "amqp://u:Zq9wX%@h",
        "u:Zq9wX@h", "redis://u:Zq9wX@h", "amqp://u:Zq9wX@"}) {
    EXPECT_FALSE(url_error(url).empty()) << url;
  }
}

TEST(AmqpModes, AMQP7_DeclareModes) {
  EXPECT_EQ(parse_declare_mode("classic"), DeclareMode::Classic);
  EXPECT_EQ(parse_declare_mode("quorum"), DeclareMode::Quorum);
  EXPECT_EQ(parse_declare_mode("passive"), DeclareMode::Passive);
  for (const char* bad : {"", "Classic", "lazy", "stream"}) {
    EXPECT_EQ(error_of([bad] { parse_declare_mode(bad); }, "unknown amqp declare mode"),
              "unknown amqp declare mode \"" + std::string(bad) +
                  "\" (expected classic, quorum, passive)");
  }
}

TEST(AmqpModes, AMQP18_ConsumeModes) {
  EXPECT_EQ(parse_consume_mode("push"), ConsumeMode::Push);
  EXPECT_EQ(parse_consume_mode("consume"), ConsumeMode::Push);
  EXPECT_EQ(parse_consume_mode("get"), ConsumeMode::Get);
  for (const char* bad : {"", "GET", "basic.get"}) {
    EXPECT_EQ(
        error_of([bad] { parse_consume_mode(bad); }, "unknown amqp consume mode"),
        "unknown amqp consume mode \"" + std::string(bad) + "\" (expected push, consume, get)");
  }
}

Options valid() {
  Options o;
  o.password = std::string(kPassword);
  return o;
}

TEST(AmqpOptions, AMQP1_DefaultsAndBoundsAreValid) {
  validate(valid());
  Options o = valid();
  o.port = 1;
  o.prefetch = 1;
  o.heartbeat = seconds(0);
  o.connect_timeout = milliseconds(1);
  o.confirm_timeout = milliseconds(1);
  o.empty_repoll_interval = milliseconds(1);
  o.delay_queue_infix = std::string(1, '-');  // not = "-": GCC 12 -Wrestrict false positive
  validate(o);
  o.port = 65535;
  o.prefetch = 65535;
  o.heartbeat = seconds(65535);
  o.tls.cert_file = "c.pem";
  o.tls.key_file = "k.pem";
  validate(o);
}

TEST(AmqpOptions, AMQP1_EffectivePort) {
  Options o;
  EXPECT_EQ(effective_port(o), 5672);
  o.tls.enabled = true;
  EXPECT_EQ(effective_port(o), 5671);
  o.port = 5672;
  EXPECT_EQ(effective_port(o), 5672);
  o.tls.enabled = false;
  o.port = 15672;
  EXPECT_EQ(effective_port(o), 15672);
}

TEST(AmqpOptions, AMQP1_EveryBoundIsChecked) {
  const auto error = [](const std::function<void(Options&)>& change) {
    Options o = valid();
    change(o);
    return options_error(o);
  };
  EXPECT_EQ(error([](Options& o) { o.host.clear(); }), "amqp options: empty host");
  EXPECT_EQ(error([](Options& o) { o.port = -1; }),
            "amqp options: port must be 1..65535 (or 0 for the default), got -1");
  EXPECT_CONTAINS(error([](Options& o) { o.port = 65536; }), "got 65536");
  EXPECT_EQ(error([](Options& o) { o.prefetch = 0; }),
            "amqp options: prefetch must be 1..65535, got 0");
  EXPECT_CONTAINS(error([](Options& o) { o.prefetch = 65536; }), "prefetch must be 1..65535");
  EXPECT_EQ(error([](Options& o) { o.heartbeat = seconds(-1); }),
            "amqp options: heartbeat must be 0..65535 s (0 = off), got -1 s");
  EXPECT_CONTAINS(error([](Options& o) { o.heartbeat = seconds(65536); }), "got 65536 s");
  EXPECT_EQ(error([](Options& o) { o.connect_timeout = milliseconds(0); }),
            "amqp options: connect_timeout must be positive, got 0 ms");
  EXPECT_EQ(error([](Options& o) { o.confirm_timeout = milliseconds(-5); }),
            "amqp options: confirm_timeout must be positive, got -5 ms");
  EXPECT_EQ(error([](Options& o) { o.empty_repoll_interval = milliseconds(0); }),
            "amqp options: empty_repoll_interval must be positive, got 0 ms");
  EXPECT_EQ(error([](Options& o) { o.delay_queue_infix.clear(); }),
            "amqp options: empty delay_queue_infix");
  EXPECT_EQ(error([](Options& o) { o.tls.cert_file = "c.pem"; }),
            "amqp options: tls.cert_file and tls.key_file go together: give both or neither");
  EXPECT_CONTAINS(error([](Options& o) { o.tls.key_file = "k.pem"; }), "go together");
}

}  // namespace
