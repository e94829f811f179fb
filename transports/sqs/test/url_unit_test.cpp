// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// sqs:// URLs and option checks (SQS-2), the SQS-14 dead-letter names (SQS-T4): every option,
// errors naming the key, no secret in any text.

#include <babelqueue/open.hpp>
#include <babelqueue/spi/registry.hpp>
#include <babelqueue/sqs/transport.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "options.hpp"

namespace babelqueue::sqs {
namespace {

constexpr std::string_view kSecret = "s3cr%2Ft+KEY";  // percent-encoded "s3cr/t+KEY"

std::string config_error(const auto& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError";
  return {};
}

TEST(SqsUrl, SQS2_RegionAndCredentials) {
  const Options o = parse_url("sqs://AKID:" + std::string(kSecret) + "@eu-west-1");
  EXPECT_EQ(o.region, "eu-west-1");
  EXPECT_EQ(o.credentials.access_key_id, "AKID");
  EXPECT_EQ(o.credentials.secret_access_key, "s3cr/t+KEY");
  EXPECT_TRUE(o.credentials.session_token.empty());
  const Options bare = parse_url("sqs://");
  EXPECT_TRUE(bare.region.empty());
  EXPECT_TRUE(bare.credentials.access_key_id.empty());
  EXPECT_EQ(parse_url("sqs:///").region, "");
  EXPECT_EQ(parse_url("sqs://us-east-2/").region, "us-east-2");
}

TEST(SqsUrl, SQS2_EveryOption) {
  const Options o = parse_url(
      "sqs://us-east-1?endpoint=http%3A%2F%2F127.0.0.1%3A4566&prefix=http://h/000/&profile=p"
      "&fifo=true&content_dedup=yes&group_id=g1&wait_time=7&visibility_timeout=90&prefetch=4"
      "&ack_batch=3&ack_flush_interval=25&request_timeout=1500&keep_visibility=off&verify=0"
      "&cafile=/ca.pem");
  EXPECT_EQ(o.endpoint, "http://127.0.0.1:4566");
  EXPECT_EQ(o.queue_url_prefix, "http://h/000/");
  EXPECT_EQ(o.profile, "p");
  EXPECT_TRUE(o.fifo);
  EXPECT_TRUE(o.content_dedup);
  EXPECT_EQ(o.message_group_id, "g1");
  EXPECT_EQ(o.wait_time_seconds, 7);
  EXPECT_EQ(o.visibility_timeout, 90);
  EXPECT_EQ(o.prefetch, 4);
  EXPECT_EQ(o.ack_batch, 3);
  EXPECT_EQ(o.ack_flush_interval.count(), 25);
  EXPECT_EQ(o.request_timeout.count(), 1500);
  EXPECT_FALSE(o.keep_visibility);
  EXPECT_FALSE(o.curl.verify_tls);
  EXPECT_EQ(o.curl.ca_file, "/ca.pem");
}

TEST(SqsUrl, SQS2_BaseIsKept) {
  Options base;
  base.prefetch = 2;
  base.profile = "from-base";
  const Options o = parse_url("sqs://r?wait_time=1", base);
  EXPECT_EQ(o.prefetch, 2);
  EXPECT_EQ(o.profile, "from-base");
  EXPECT_EQ(o.wait_time_seconds, 1);
}

TEST(SqsUrl, SQS2_BadValuesNameTheOption) {
  const struct {
    const char* url;
    const char* says;
  } cases[] = {
      {"sqs://r?wait_time=21", "wait_time"},
      {"sqs://r?visibility_timeout=43201", "visibility_timeout"},
      {"sqs://r?prefetch=0", "prefetch"},
      {"sqs://r?prefetch=11", "prefetch"},
      {"sqs://r?ack_batch=11", "ack_batch"},
      {"sqs://r?fifo=maybe", "fifo"},
      {"sqs://r?request_timeout=0", "request_timeout"},
      {"sqs://r?ack_flush_interval=-1", "ack_flush_interval"},
      {"sqs://r?prefetch=1&prefetch=2", "prefetch"},
      {"sqs://r:4566", "port"},
      {"sqs://r/orders", "path"},
      {"amqp://r", "scheme"},
      {"sqs://AKID@r", "access_key_id:secret_access_key"},
  };
  for (const auto& c : cases) {
    const std::string what = config_error([&] { (void)parse_url(c.url); });
    EXPECT_TRUE(what.starts_with("sqs URL: ")) << what;
    EXPECT_NE(what.find(c.says), std::string::npos) << c.url << " -> " << what;
  }
}

TEST(SqsUrl, SQS2_UnknownKeyNamesTheKnownOnes) {
  const std::string what = config_error([] { (void)parse_url("sqs://r?prefech=3"); });
  EXPECT_NE(what.find("prefech"), std::string::npos) << what;
  for (const char* known :
       {"endpoint", "prefix", "profile", "fifo", "content_dedup", "group_id", "wait_time",
        "visibility_timeout", "prefetch", "ack_batch", "ack_flush_interval", "request_timeout",
        "keep_visibility", "verify", "cafile"}) {
    EXPECT_NE(what.find(known), std::string::npos) << known << " in " << what;
  }
}

TEST(SqsUrl, SQS2_NoSecretInAnyError) {
  const std::string secret = "s3cr/t+KEY";
  for (const std::string query : {"?prefetch=99", "?nope=1", "?fifo=x", ":1", "/p", "?a=%zz"}) {
    const std::string url = "sqs://AKID:" + std::string(kSecret) + "@r" + query;
    const std::string what = config_error([&] { (void)parse_url(url); });
    EXPECT_EQ(what.find(secret), std::string::npos) << what;
    EXPECT_EQ(what.find(kSecret), std::string::npos) << what;
    EXPECT_EQ(what.find("s3cr"), std::string::npos) << what;
  }
}

TEST(SqsOptions, SQS2_ValidatedFillsRegionAndEndpoint) {
  Options o;
  o.region = "eu-west-1";
  const Options v = detail::validated(o);
  EXPECT_EQ(v.endpoint, "https://sqs.eu-west-1.amazonaws.com/");
  o.queue_url_prefix = "http://h:1/000//";
  EXPECT_EQ(detail::validated(o).queue_url_prefix, "http://h:1/000");
}

TEST(SqsOptions, SQS2_RegionFromTheEnvironment) {
  ::unsetenv("AWS_REGION");
  ::setenv("AWS_DEFAULT_REGION", "ap-south-1", 1);
  EXPECT_EQ(detail::resolve_region(Options{}), "ap-south-1");
  ::setenv("AWS_REGION", "sa-east-1", 1);
  EXPECT_EQ(detail::resolve_region(Options{}), "sa-east-1");
  Options explicit_region;
  explicit_region.region = "us-west-2";
  EXPECT_EQ(detail::resolve_region(explicit_region), "us-west-2");
  ::unsetenv("AWS_REGION");
  ::unsetenv("AWS_DEFAULT_REGION");
  const std::string what = config_error([] { (void)detail::resolve_region(Options{}); });
  EXPECT_NE(what.find("AWS_REGION"), std::string::npos) << what;
  EXPECT_NE(what.find("AWS_DEFAULT_REGION"), std::string::npos) << what;
  // The constructor checks it too, before any I/O.
  EXPECT_THROW(SqsTransport(Options{}), ConfigError);
}

TEST(SqsOptions, SQS2_BadMembersNameThemselves) {
  const auto check = [](auto mutate, const char* says) {
    Options o;
    o.region = "us-east-1";
    mutate(o);
    const std::string what = config_error([&] { SqsTransport t(o); });
    EXPECT_TRUE(what.starts_with("sqs options: ")) << what;
    EXPECT_NE(what.find(says), std::string::npos) << what;
  };
  check([](Options& o) { o.prefetch = 0; }, "prefetch");
  check([](Options& o) { o.ack_batch = 11; }, "ack_batch");
  check([](Options& o) { o.wait_time_seconds = -1; }, "wait_time_seconds");
  check([](Options& o) { o.visibility_timeout = 50'000; }, "visibility_timeout");
  check([](Options& o) { o.request_timeout = std::chrono::milliseconds(0); }, "request_timeout");
  check([](Options& o) { o.handout_margin = std::chrono::milliseconds(-1); }, "handout_margin");
  check([](Options& o) { o.endpoint = "ftp://x/"; }, "endpoint");
  check([](Options& o) { o.endpoint = "http://user:pw@x/"; }, "endpoint");
  check([](Options& o) { o.queue_url_prefix = "nope"; }, "queue_url_prefix");
  check([](Options& o) { o.region = "eu west"; }, "region");
  check([](Options& o) { o.credentials.access_key_id = "AKID"; }, "secret access key");
  // The endpoint's password is not echoed.
  Options o;
  o.region = "us-east-1";
  o.curl.ca_file = "/no/such/ca.pem";
  EXPECT_NE(config_error([&] { SqsTransport t(o); }).find("CA file \"/no/such/ca.pem\""),
            std::string::npos);
  o.curl.ca_file.clear();
  o.endpoint = "http://user:hunter2@x/";
  EXPECT_EQ(config_error([&] { SqsTransport t(o); }).find("hunter2"), std::string::npos);
}

TEST(SqsOptions, SQS2_CliFlagsMapToUrlOptions) {
  std::vector<std::pair<std::string, std::string>> flags;
  for (const auto& f : spi::registered_transports()) {
    if (f.component != "sqs") continue;
    EXPECT_EQ(f.schemes, std::vector<std::string>{"sqs"});
    for (const auto& flag : f.flags)
      flags.emplace_back(flag.name, flag.query_key);
  }
  const std::vector<std::pair<std::string, std::string>> expected{
      {"endpoint", "endpoint"},
      {"queue-url-prefix", "prefix"},
      {"visibility-timeout", "visibility_timeout"}};
  EXPECT_EQ(flags, expected);
}

TEST(SqsOptions, SQS2_OpenTransportByScheme) {
  auto t = open_transport("sqs://AKID:secret@us-east-1?endpoint=http://127.0.0.1:9&prefetch=3");
  ASSERT_NE(t, nullptr);
  auto* sqs = dynamic_cast<SqsTransport*>(t.get());
  ASSERT_NE(sqs, nullptr);
  EXPECT_EQ(sqs->options().prefetch, 3);
  EXPECT_EQ(sqs->options().endpoint, "http://127.0.0.1:9");
  t->close();
}

TEST(SqsDeadLetterName, SQST4_Vectors) {
  EXPECT_EQ(dead_letter_name("orders", std::nullopt), "orders-dlq");
  EXPECT_EQ(dead_letter_name("orders.fifo", std::nullopt), "orders-dlq.fifo");
  EXPECT_EQ(dead_letter_name("orders", "-x"), "orders-x");
  EXPECT_EQ(dead_letter_name("orders.fifo", "-x"), "orders-x.fifo");
  EXPECT_EQ(dead_letter_name("a_b-C9", "_dead"), "a_b-C9_dead");
}

TEST(SqsDeadLetterName, SQST4_InvalidNamesAreRejected) {
  EXPECT_THROW((void)dead_letter_name("orders", ".dlq"), ConfigError);
  EXPECT_THROW((void)dead_letter_name("orders", "/x"), ConfigError);
  EXPECT_THROW((void)dead_letter_name("or ders", std::nullopt), ConfigError);
  EXPECT_THROW((void)dead_letter_name(std::string(77, 'q'), std::nullopt), ConfigError);
  // 76 + "-dlq" = 80 characters: the limit.
  EXPECT_EQ(dead_letter_name(std::string(76, 'q'), std::nullopt).size(), 80U);
  // 71 + "-dlq" + ".fifo" = 80 with the ending.
  EXPECT_EQ(dead_letter_name(std::string(71, 'q') + ".fifo", std::nullopt).size(), 80U);
  EXPECT_THROW((void)dead_letter_name(std::string(72, 'q') + ".fifo", std::nullopt), ConfigError);
  const std::string what = config_error([] { (void)dead_letter_name("orders", ".dlq"); });
  EXPECT_NE(what.find("orders.dlq"), std::string::npos) << what;
}

TEST(SqsDeadLetterName, SQST4_TransportCapabilityAgrees) {
  Options o;
  o.region = "us-east-1";
  SqsTransport t(o);
  const DeadLetterNaming& naming = t;
  EXPECT_EQ(naming.dead_letter_name("orders.fifo", std::nullopt), "orders-dlq.fifo");
  EXPECT_EQ(naming.dead_letter_name("orders", std::string_view("-x")), "orders-x");
}

TEST(SqsDeadLetterName, SQS14_ValidQueueNames) {
  EXPECT_TRUE(detail::valid_queue_name("orders"));
  EXPECT_TRUE(detail::valid_queue_name("orders.fifo"));
  EXPECT_TRUE(detail::valid_queue_name(std::string(80, 'a')));
  EXPECT_FALSE(detail::valid_queue_name(std::string(81, 'a')));
  EXPECT_FALSE(detail::valid_queue_name(""));
  EXPECT_FALSE(detail::valid_queue_name(".fifo"));
  EXPECT_FALSE(detail::valid_queue_name("orders.dlq"));
}

}  // namespace
}  // namespace babelqueue::sqs
