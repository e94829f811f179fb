// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// kafka:// URLs and option validation (KFK-2, KFK-19): every option, errors naming the key,
// no password in any text.

#include <babelqueue/kafka/transport.hpp>

#include <gtest/gtest.h>
#include <librdkafka/rdkafkacpp.h>

#include <memory>

#include <string>

#include "options.hpp"

namespace babelqueue::kafka {
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

TEST(KafkaUrl, HostListWithDefaultPorts) {
  const Options o = parse_url("kafka://a:9093,b,[::1]:9000");
  EXPECT_EQ(o.brokers, "a:9093,b:9092,[::1]:9000");
  EXPECT_TRUE(o.sasl_username.empty());
  EXPECT_TRUE(o.security_protocol.empty());
}

TEST(KafkaUrl, EveryOption) {
  const Options o = parse_url(
      "kafka://h:1/?group_id=g&client_id=c&topic_prefix=p.&publish_timeout=1500&max_wait=20"
      "&revoke_grace=0&linger=5&idempotence=false&assignor=roundrobin&commit_batch=7"
      "&partitions=3&replication_factor=1&security_protocol=ssl&sasl_mechanism=SCRAM-SHA-256"
      "&sasl_username=u&sasl_password=pw&ssl_ca_location=/ca.pem&property.socket.timeout.ms=999"
      "&producer.batch.size=10&consumer.fetch.min.bytes=2");
  EXPECT_EQ(o.brokers, "h:1");
  EXPECT_EQ(o.group_id, "g");
  EXPECT_EQ(o.client_id, "c");
  EXPECT_EQ(o.topic_prefix, "p.");
  EXPECT_EQ(o.publish_timeout.count(), 1500);
  EXPECT_EQ(o.max_wait.count(), 20);
  EXPECT_EQ(o.revoke_grace.count(), 0);
  EXPECT_EQ(o.linger.count(), 5);
  EXPECT_FALSE(o.idempotence);
  EXPECT_EQ(o.assignor, Assignor::RoundRobin);
  EXPECT_EQ(o.commit_batch, 7U);
  EXPECT_EQ(o.partitions, 3);
  EXPECT_EQ(o.replication_factor, 1);
  EXPECT_EQ(o.security_protocol, "ssl");
  EXPECT_EQ(o.sasl_mechanism, "SCRAM-SHA-256");
  EXPECT_EQ(o.sasl_username, "u");
  EXPECT_EQ(o.sasl_password, "pw");
  EXPECT_EQ(o.ssl_ca_location, "/ca.pem");
  EXPECT_EQ(o.properties.at("socket.timeout.ms"), "999");
  EXPECT_EQ(o.producer_properties.at("batch.size"), "10");
  EXPECT_EQ(o.consumer_properties.at("fetch.min.bytes"), "2");
}

TEST(KafkaUrl, UserinfoIsSaslPlain) {
  const Options o = parse_url("kafka://al%40ice:s%3Acret@h");
  EXPECT_EQ(o.sasl_username, "al@ice");
  EXPECT_EQ(o.sasl_password, "s:cret");
  EXPECT_EQ(o.security_protocol, "sasl_plaintext");
  EXPECT_EQ(o.sasl_mechanism, "PLAIN");
  const Options tls =
      parse_url("kafka://u:p@h?security_protocol=sasl_ssl&sasl_mechanism=SCRAM-SHA-512");
  EXPECT_EQ(tls.security_protocol, "sasl_ssl");
  EXPECT_EQ(tls.sasl_mechanism, "SCRAM-SHA-512");
}

TEST(KafkaUrl, BaseIsKept) {
  Options base;
  base.group_id = "from-base";
  base.client_id = "cid";
  const Options o = parse_url("kafka://h?client_id=x", base);
  EXPECT_EQ(o.group_id, "from-base");
  EXPECT_EQ(o.client_id, "x");
}

TEST(KafkaUrl, ErrorsNameTheKeyWithoutThePassword) {
  const auto bad = [](const std::string& url) {
    return config_error([&] { (void)parse_url(url); });
  };
  std::string e = bad("kafka://u:hunter2@h?nope=1");
  EXPECT_NE(e.find("kafka URL: "), std::string::npos) << e;
  EXPECT_NE(e.find("nope"), std::string::npos) << e;
  EXPECT_EQ(e.find("hunter2"), std::string::npos) << e;
  e = bad("kafka://u:hunter2@h?commit_batch=0");
  EXPECT_NE(e.find("commit_batch"), std::string::npos) << e;
  EXPECT_EQ(e.find("hunter2"), std::string::npos) << e;
  EXPECT_NE(bad("kafka://h?publish_timeout=0").find("publish_timeout"), std::string::npos);
  EXPECT_NE(bad("kafka://h?max_wait=-1").find("max_wait"), std::string::npos);
  EXPECT_NE(bad("kafka://h?replication_factor=0").find("replication_factor"), std::string::npos);
  EXPECT_NE(bad("kafka://h?idempotence=maybe").find("idempotence"), std::string::npos);
  EXPECT_NE(bad("kafka://h?assignor=sticky").find("sticky"), std::string::npos);
  EXPECT_NE(bad("kafka://h?property.=1").find("property."), std::string::npos);
  EXPECT_NE(bad("kafka://h,,b").find("empty host"), std::string::npos);
  EXPECT_NE(bad("kafka://h:99999").find("kafka URL: "), std::string::npos);
  EXPECT_NE(bad("kafka://h/path").find("path"), std::string::npos);
  EXPECT_NE(bad("amqp://h").find("kafka://"), std::string::npos);
  EXPECT_NE(bad("kafka://").find("kafka URL: "), std::string::npos);
}

TEST(KafkaAssignor, CooperativeStickyRefused) {
  EXPECT_EQ(parse_assignor("range"), Assignor::Range);
  EXPECT_EQ(parse_assignor("roundrobin"), Assignor::RoundRobin);
  const std::string e = config_error([] { (void)parse_assignor("cooperative-sticky"); });
  EXPECT_NE(e.find("refused"), std::string::npos) << e;
}

Options valid() {
  Options o;
  o.brokers = "127.0.0.1:1";
  return o;
}

TEST(KafkaOptions, ConstructionChecksProperties) {
  Options o = valid();
  o.properties["no.such.property"] = "1";
  EXPECT_NE(config_error([&] { KafkaTransport t(o); }).find("no.such.property"), std::string::npos);

  o = valid();
  o.producer_properties["linger.ms"] = "soon";
  EXPECT_NE(config_error([&] { KafkaTransport t(o); }).find("linger.ms"), std::string::npos);

  o = valid();
  o.consumer_properties["enable.auto.commit"] = "true";
  EXPECT_NE(config_error([&] { KafkaTransport t(o); }).find("enable.auto.commit"),
            std::string::npos);

  o = valid();
  o.properties["partition.assignment.strategy"] = "cooperative-sticky";
  EXPECT_NE(config_error([&] { KafkaTransport t(o); }).find("cooperative-sticky"),
            std::string::npos);

  o = valid();
  o.security_protocol = "carrier-pigeon";
  o.sasl_password = "hunter2";
  const std::string e = config_error([&] { KafkaTransport t(o); });
  EXPECT_NE(e.find("security.protocol"), std::string::npos) << e;
  EXPECT_EQ(e.find("hunter2"), std::string::npos) << e;
}

// The value librdkafka holds for `name` (topic-level ones such as acks included).
std::string get(const std::unique_ptr<RdKafka::Conf>& conf, const std::string& name) {
  std::string value;
  EXPECT_EQ(conf->get(name, value), RdKafka::Conf::CONF_OK) << name;
  return value;
}

TEST(KafkaOptions, ProducerIsAcksAllIdempotentAndConsumerCommitsManually) {  // KFK-T9, KFK-3, KFK-6
  Options o = valid();
  o.publish_timeout = std::chrono::milliseconds(1234);
  const auto producer = detail::producer_conf(o, {});
  EXPECT_EQ(get(producer, "acks"), "-1");
  EXPECT_EQ(get(producer, "enable.idempotence"), "true");
  EXPECT_EQ(get(producer, "linger.ms"), "0");
  EXPECT_EQ(get(producer, "message.timeout.ms"), "1234");
  o.producer_properties["acks"] = "1";
  EXPECT_EQ(get(detail::producer_conf(o, {}), "acks"), "1") << "an explicit acks wins";

  o.assignor = Assignor::RoundRobin;
  const auto consumer = detail::consumer_conf(o, "grp", {});
  EXPECT_EQ(get(consumer, "group.id"), "grp");
  EXPECT_EQ(get(consumer, "enable.auto.commit"), "false");
  EXPECT_EQ(get(consumer, "enable.auto.offset.store"), "false");
  EXPECT_EQ(get(consumer, "auto.offset.reset"), "smallest");
  EXPECT_EQ(get(consumer, "partition.assignment.strategy"), "roundrobin");
}

TEST(KafkaOptions, ValidationNamesTheMember) {
  const auto bad = [](auto change) {
    Options o = valid();
    change(o);
    return config_error([&] { KafkaTransport t(o); });
  };
  EXPECT_NE(bad([](Options& o) { o.brokers.clear(); }).find("brokers"), std::string::npos);
  EXPECT_NE(bad([](Options& o) { o.group_id.clear(); }).find("group_id"), std::string::npos);
  EXPECT_NE(bad([](Options& o) { o.commit_batch = 0; }).find("commit_batch"), std::string::npos);
  EXPECT_NE(bad([](Options& o) { o.partitions = -1; }).find("partitions"), std::string::npos);
  EXPECT_NE(bad([](Options& o) {
              o.publish_timeout = std::chrono::milliseconds(0);
            }).find("publish_timeout"),
            std::string::npos);
}

TEST(KafkaOptions, NoIoAtConstructionAndClosedAfterClose) {
  KafkaTransport t(valid());  // nothing listens on port 1: construction must not care
  EXPECT_EQ(t.topic("q"), "q");
  t.close();
  t.close();
  EXPECT_TRUE(t.publish("q", "{}").is(ErrorCode::Closed));
  const auto popped = t.pop("q", std::chrono::milliseconds(0));
  ASSERT_FALSE(popped.has_value());
  EXPECT_EQ(popped.error().code(), ErrorCode::Closed);
  EXPECT_TRUE(t.flush().is(ErrorCode::Closed));
  EXPECT_FALSE(t.stats("q", "").has_value());
  EXPECT_FALSE(t.peek("q", 1).has_value());
}

}  // namespace
}  // namespace babelqueue::kafka
