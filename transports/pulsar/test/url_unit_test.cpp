// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// pulsar:// and pulsar+ssl:// URLs and option checks (PLS-2, D-10): every option, errors naming
// the key, no token in any text, no I/O at construction, open_transport.

#include <babelqueue/open.hpp>
#include <babelqueue/pulsar/transport.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

namespace babelqueue::pulsar {
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

TEST(PulsarUrl, Defaults) {
  const Options o = parse_url("pulsar://broker");
  EXPECT_EQ(o.host, "broker");
  EXPECT_EQ(o.port, 6650);
  EXPECT_FALSE(o.tls);
  EXPECT_TRUE(o.token.empty());
  EXPECT_EQ(o.tenant, "public");
  EXPECT_EQ(o.namespace_name, "default");
  EXPECT_EQ(o.topic_prefix, "");
  EXPECT_EQ(o.subscription, "babelqueue");
  EXPECT_EQ(o.subscription_type, SubscriptionType::Shared);
  EXPECT_EQ(o.prefetch, 100U);
  EXPECT_EQ(o.ack_batch, 32U);
  EXPECT_TRUE(o.admin_url.empty());
  EXPECT_EQ(o.timeout.count(), 30'000);
  EXPECT_EQ(o.max_wait.count(), 0);
  EXPECT_EQ(topic_of(o, "orders"), "persistent://public/default/orders");
}

TEST(PulsarUrl, EveryOption) {
  const Options o = parse_url(
      "pulsar://:s3cret@h:7000/acme/jobs?subscription=workers&subscription_type=Key_Shared"
      "&prefetch=7&ack_batch=3&topic_prefix=bq-&admin_url=http://h:8080&timeout=1500"
      "&max_wait=250");
  EXPECT_EQ(o.host, "h");
  EXPECT_EQ(o.port, 7000);
  EXPECT_EQ(o.token, "s3cret");
  EXPECT_EQ(o.tenant, "acme");
  EXPECT_EQ(o.namespace_name, "jobs");
  EXPECT_EQ(o.subscription, "workers");
  EXPECT_EQ(o.subscription_type, SubscriptionType::KeyShared);
  EXPECT_EQ(o.prefetch, 7U);
  EXPECT_EQ(o.ack_batch, 3U);
  EXPECT_EQ(o.admin_url, "http://h:8080");
  EXPECT_EQ(o.timeout.count(), 1500);
  EXPECT_EQ(o.max_wait.count(), 250);
  EXPECT_EQ(topic_of(o, "orders"), "persistent://acme/jobs/bq-orders");
}

TEST(PulsarUrl, SubscriptionTypes) {
  EXPECT_EQ(parse_url("pulsar://h?subscription_type=Exclusive").subscription_type,
            SubscriptionType::Exclusive);
  EXPECT_EQ(parse_url("pulsar://h?subscription_type=Failover").subscription_type,
            SubscriptionType::Failover);
  EXPECT_EQ(parse_url("pulsar://h?subscription_type=Shared").subscription_type,
            SubscriptionType::Shared);
  EXPECT_EQ(parse_url("pulsar://h?subscription_type=Key_Shared").subscription_type,
            SubscriptionType::KeyShared);
  for (const SubscriptionType type : {SubscriptionType::Exclusive, SubscriptionType::Shared,
                                      SubscriptionType::Failover, SubscriptionType::KeyShared}) {
    const std::string url =
        "pulsar://h?subscription_type=" + std::string(subscription_type_name(type));
    EXPECT_EQ(parse_url(url).subscription_type, type) << url;
  }
  const std::string e = config_error([] { parse_url("pulsar://h?subscription_type=shared"); });
  EXPECT_NE(e.find("subscription_type"), std::string::npos) << e;
  EXPECT_NE(e.find("Key_Shared"), std::string::npos) << e;
}

TEST(PulsarUrl, TokenUserAndSsl) {
  const Options o = parse_url("pulsar+ssl://token:abc%2Fdef@h?cafile=/ca.pem&verify=no");
  EXPECT_TRUE(o.tls);
  EXPECT_EQ(o.port, 6651);
  EXPECT_EQ(o.token, "abc/def");
  EXPECT_EQ(o.tls_ca_file, "/ca.pem");
  EXPECT_FALSE(o.tls_verify);
}

TEST(PulsarUrl, ErrorsNameTheProblemNeverTheToken) {
  const std::string unknown = config_error([] { parse_url("pulsar://:s3cret@h?prefech=5"); });
  EXPECT_EQ(unknown.rfind("pulsar URL: ", 0), 0U) << unknown;
  EXPECT_NE(unknown.find("prefech"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("prefetch"), std::string::npos) << unknown;  // the known keys
  EXPECT_EQ(unknown.find("s3cret"), std::string::npos) << unknown;
  const std::string user = config_error([] { parse_url("pulsar://alice:s3cret@h"); });
  EXPECT_NE(user.find("alice"), std::string::npos) << user;
  EXPECT_EQ(user.find("s3cret"), std::string::npos) << user;
  EXPECT_NE(config_error([] { parse_url("pulsar://token@h"); }).find("no token"),
            std::string::npos);
  EXPECT_NE(config_error([] { parse_url("pulsar://h?prefetch=0"); }).find("prefetch"),
            std::string::npos);
  EXPECT_NE(config_error([] { parse_url("pulsar://h/onlytenant"); }).find("/<tenant>/<namespace>"),
            std::string::npos);
  EXPECT_NE(config_error([] { parse_url("pulsar://h/a/b/c"); }).find("unexpected path"),
            std::string::npos);
  EXPECT_NE(config_error([] { parse_url("pulsar://h?admin_url=ftp://x"); }).find("admin_url"),
            std::string::npos);
  EXPECT_NE(config_error([] { parse_url("kafka://h"); }).find("unsupported scheme"),
            std::string::npos);
  EXPECT_NE(config_error([] { parse_url("pulsar://h?timeout=0"); }).find("timeout"),
            std::string::npos);
}

TEST(PulsarTransport, ConstructionDoesNoIo) {
  // Port 1 on loopback has no broker: constructing and closing must not try to reach it.
  PulsarTransport t("pulsar://127.0.0.1:1");
  t.close();
  const Status s = t.publish("q", "{}");
  EXPECT_TRUE(s.is(ErrorCode::Closed));
}

TEST(PulsarTransport, TlsCaFileThatCannotBeReadIsNamed) {
  const std::string e = config_error(
      [] { PulsarTransport t("pulsar+ssl://127.0.0.1:1?cafile=/nonexistent/ca.pem"); });
  EXPECT_NE(e.find("/nonexistent/ca.pem"), std::string::npos) << e;
}

TEST(PulsarTransport, TlsConstructionDoesNoIo) {
  // pulsar+ssl:// without cafile trusts the system's CAs; like pulsar://, nothing is reached yet.
  PulsarTransport t("pulsar+ssl://127.0.0.1:1?verify=no");
  t.close();
  EXPECT_TRUE(t.publish("q", "{}").is(ErrorCode::Closed));
}

TEST(PulsarTransport, OpenTransportKnowsBothSchemes) {
  EXPECT_NE(open_transport("pulsar://127.0.0.1:1?subscription=s"), nullptr);
  const std::string e = config_error([] { (void)open_transport("pulsar://:s3cret@h?nope=1"); });
  EXPECT_NE(e.find("nope"), std::string::npos) << e;
  EXPECT_EQ(e.find("s3cret"), std::string::npos) << e;
}

// A deliverAt message goes at once to an Exclusive or Failover subscription: publish_delayed
// refuses before any I/O, naming why; a delay <= 0 is a publish (here: transient, no broker).
TEST(PulsarTransport, DelayedPublishNeedsASharedSubscription) {
  for (const char* type : {"Exclusive", "Failover"}) {
    PulsarTransport t(std::string("pulsar://127.0.0.1:1?timeout=300&subscription_type=") + type);
    const Status s = t.publish_delayed("q", "{}", std::chrono::seconds(1));
    ASSERT_TRUE(s.is(ErrorCode::DelayUnsupported)) << type;
    EXPECT_NE(std::string(s.error().what()).find(type), std::string::npos) << s.error().what();
    const Status now = t.publish_delayed("q", "{}", std::chrono::milliseconds(0));
    ASSERT_FALSE(now.ok());
    EXPECT_TRUE(now.error().is_transient()) << now.error().what();
  }
  // Shared (the default): the longest delay is sent as the latest deliverAt, not an overflow.
  PulsarTransport shared("pulsar://127.0.0.1:1?timeout=300");
  const Status longest = shared.publish_delayed("q", "{}", std::chrono::milliseconds::max());
  ASSERT_FALSE(longest.ok());
  EXPECT_TRUE(longest.error().is_transient()) << longest.error().what();
}

TEST(PulsarTransport, UnreachableBrokerIsTransient) {
  Options o = parse_url("pulsar://127.0.0.1:1?timeout=300");
  PulsarTransport t(o);
  const Status s = t.publish("q", "{}");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.error().is_transient()) << s.error().what();
}

}  // namespace
}  // namespace babelqueue::pulsar
