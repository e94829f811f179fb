// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// artemis:// and artemis+ssl:// URLs and option checks (ART-1, ART-2): every option, errors
// naming the key, no password in any text, no I/O at construction, open_transport.

#include <babelqueue/artemis/transport.hpp>
#include <babelqueue/open.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue::artemis {
namespace {

std::string config_error(const auto& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError";
  return {};
}

TEST(ArtemisUrl, Defaults) {
  const Options o = parse_url("artemis://broker");
  EXPECT_EQ(o.host, "broker");
  EXPECT_EQ(o.port, 5672);
  EXPECT_FALSE(o.tls);
  EXPECT_TRUE(o.user.empty());
  EXPECT_TRUE(o.password.empty());
  EXPECT_EQ(o.prefetch, 100U);
  EXPECT_TRUE(o.durable);
  EXPECT_TRUE(o.queue_capability);
  EXPECT_TRUE(o.tls_verify_peer_name);
  EXPECT_EQ(o.timeout.count(), 30'000);
  EXPECT_EQ(o.max_wait.count(), 0);
}

TEST(ArtemisUrl, EmptyHostIsLocalhost) {
  const Options o = parse_url("artemis://:6000");
  EXPECT_EQ(o.host, "localhost");
  EXPECT_EQ(o.port, 6000);
}

TEST(ArtemisUrl, SslSchemeIsTlsOn5671) {
  const Options o = parse_url("artemis+ssl://h?cafile=/ca.pem&peer_name=broker.example&verify=0");
  EXPECT_TRUE(o.tls);
  EXPECT_EQ(o.port, 5671);
  EXPECT_EQ(o.tls_ca_file, "/ca.pem");
  EXPECT_EQ(o.tls_peer_name, "broker.example");
  EXPECT_FALSE(o.tls_verify_peer_name);
}

TEST(ArtemisUrl, EveryOption) {
  const Options o = parse_url(
      "artemis://h:1234/?prefetch=7&durable=false&queue_capability=no&timeout=1500&max_wait=20");
  EXPECT_EQ(o.port, 1234);
  EXPECT_EQ(o.prefetch, 7U);
  EXPECT_FALSE(o.durable);
  EXPECT_FALSE(o.queue_capability);
  EXPECT_EQ(o.timeout.count(), 1500);
  EXPECT_EQ(o.max_wait.count(), 20);
}

TEST(ArtemisUrl, UserinfoIsSaslPlain) {
  const Options o = parse_url("artemis://al%40ice:s%3Acret@h");
  EXPECT_EQ(o.user, "al@ice");
  EXPECT_EQ(o.password, "s:cret");
}

TEST(ArtemisUrl, BaseIsKept) {
  Options base;
  base.prefetch = 3;
  base.on_schema_version_rejected = [](std::string_view, std::string_view) {};
  const Options o = parse_url("artemis://h", base);
  EXPECT_EQ(o.prefetch, 3U);
  EXPECT_TRUE(static_cast<bool>(o.on_schema_version_rejected));
}

TEST(ArtemisUrl, ErrorsNameTheProblemAndNeverThePassword) {
  const std::string unknown = config_error([] { parse_url("artemis://u:hunter2@h?prefech=1"); });
  EXPECT_TRUE(unknown.starts_with("artemis URL: ")) << unknown;
  EXPECT_NE(unknown.find("prefech"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("prefetch"), std::string::npos) << "names the known keys: " << unknown;
  EXPECT_EQ(unknown.find("hunter2"), std::string::npos) << unknown;

  const std::string range = config_error([] { parse_url("artemis://u:hunter2@h?prefetch=0"); });
  EXPECT_NE(range.find("prefetch"), std::string::npos) << range;
  EXPECT_EQ(range.find("hunter2"), std::string::npos) << range;

  const std::string boolean =
      config_error([] { parse_url("artemis://u:hunter2@h?durable=maybe"); });
  EXPECT_NE(boolean.find("durable"), std::string::npos) << boolean;
  EXPECT_EQ(boolean.find("hunter2"), std::string::npos) << boolean;

  const std::string scheme = config_error([] { parse_url("amqp://u:hunter2@h"); });
  EXPECT_NE(scheme.find("artemis://"), std::string::npos) << scheme;
  EXPECT_EQ(scheme.find("hunter2"), std::string::npos) << scheme;

  const std::string path = config_error([] { parse_url("artemis://u:hunter2@h/orders"); });
  EXPECT_NE(path.find("path"), std::string::npos) << path;
  EXPECT_EQ(path.find("hunter2"), std::string::npos) << path;

  const std::string empty_user = config_error([] { parse_url("artemis://:hunter2@h"); });
  EXPECT_NE(empty_user.find("user"), std::string::npos) << empty_user;
  EXPECT_EQ(empty_user.find("hunter2"), std::string::npos) << empty_user;

  EXPECT_FALSE(config_error([] { parse_url("artemis://h?timeout=0"); }).empty());
  EXPECT_FALSE(config_error([] { parse_url("artemis://h?prefetch=1&prefetch=2"); }).empty());
}

TEST(ArtemisTransport, OptionChecksAtConstruction) {
  Options o;
  o.prefetch = 0;
  EXPECT_FALSE(config_error([&] { ArtemisTransport t(o); }).empty());
  o = Options{};
  o.host.clear();
  EXPECT_FALSE(config_error([&] { ArtemisTransport t(o); }).empty());
  o = Options{};
  o.max_wait = std::chrono::milliseconds(-1);
  EXPECT_NE(config_error([&] { ArtemisTransport t(o); }).find("max_wait"), std::string::npos);
}

// Construction does no I/O: nothing listens on port 1, yet it succeeds; the first publish then
// times out naming the broker, never the password.
TEST(ArtemisTransport, NoIoAtConstructionAndNoSecretInErrors) {
  ArtemisTransport t("artemis://u:hunter2@127.0.0.1:1?timeout=300");
  const Status s = t.publish("orders", "{}");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(std::string(s.error().what()).find("hunter2"), std::string::npos) << s.error().what();
  t.close();
  EXPECT_TRUE(t.publish("orders", "{}").is(ErrorCode::Closed));
}

// ART-1: credentials over plain TCP log one warning, which names no password; TLS or no
// credentials log nothing.
TEST(ArtemisTransport, PlainCredentialsOverTcpWarnOnce) {
  std::vector<std::pair<LogLevel, std::string>> lines;
  Options base;
  base.logger = [&](LogLevel level, std::string_view text) { lines.emplace_back(level, text); };
  { ArtemisTransport t(parse_url("artemis://u:hunter2@h", base)); }
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0].first, LogLevel::Warning);
  EXPECT_NE(lines[0].second.find("unencrypted"), std::string::npos) << lines[0].second;
  EXPECT_EQ(lines[0].second.find("hunter2"), std::string::npos) << lines[0].second;
  lines.clear();
  { ArtemisTransport t(parse_url("artemis+ssl://u:hunter2@h", base)); }
  { ArtemisTransport t(parse_url("artemis://h", base)); }
  EXPECT_TRUE(lines.empty());
}

TEST(ArtemisTransport, OpenTransportKnowsBothSchemes) {
  for (const char* url : {"artemis://h", "artemis+ssl://h"}) {
    const std::shared_ptr<Transport> t = open_transport(url);
    ASSERT_NE(t, nullptr) << url;
    EXPECT_NE(capability<Rewinder>(*t), nullptr);
    EXPECT_NE(capability<BatchPublisher>(*t), nullptr);
    EXPECT_NE(capability<HeaderPublisher>(*t), nullptr);
    t->close();
  }
}

TEST(ArtemisTransport, SettlingAMessageOfAnotherTransportIsAUsageError) {
  ArtemisTransport t("artemis://h");
  ReceivedMessage foreign;
  foreign.queue = "orders";
  EXPECT_TRUE(t.ack(foreign).is(ErrorCode::Usage));
  EXPECT_TRUE(t.rewind(foreign).is(ErrorCode::Usage));
}

}  // namespace
}  // namespace babelqueue::artemis
