// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The App end to end on ArtemisTransport against the shared broker: the testing kit's
// AppFlowContract (babelqueue/testing/app_flow_contract.hpp), checked with RawAmqp10 (the
// broker's message counts and what `<q>.dlq` holds): a handled message is accepted (ART-7) and
// gone; a failure is retried by a republish with attempts + 1, then dead-lettered to `<q>.dlq`
// with the ART-4 properties (ART-9, OB-8); poison bytes and a message the bq_schema_version gate
// rejects go to `<q>.dlq` untouched (D-2, ART-6); four workers handle every message once. And
// refused credentials name no secret.

#include <babelqueue/app.hpp>
#include <babelqueue/artemis/transport.hpp>
#include <babelqueue/testing/app_flow_contract.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shared_broker_test.hpp"

namespace babelqueue::testing {
namespace {

struct ArtemisAppFlowTraits {
  static void set_up() { BABELQUEUE_REQUIRE_ARTEMIS(); }
  static std::unique_ptr<Transport> make() {
    return std::make_unique<artemis::ArtemisTransport>(
        artemis::test::url_of(amqp10::test::shared_artemis_server()));
  }
  static amqp10::test::RawAmqp10 raw() {
    return artemis::test::raw_of(amqp10::test::shared_artemis_server());
  }
  static void send_foreign(const std::string& queue, const std::string& body,
                           const std::map<std::string, std::string>& properties) {
    amqp10::test::RawMessage out;
    out.body = body;
    out.properties = properties;
    raw().send(queue, out);
  }
  // What `queue` holds, taken (accepted) by the raw client.
  static std::vector<ForeignRecord> read_all(const std::string& queue, std::size_t n) {
    const amqp10::test::RawAmqp10 client = raw();
    std::vector<amqp10::test::RawMessage> got = client.receive(queue, n, kWithin);
    for (amqp10::test::RawMessage& more : client.receive(queue, 16, kBriefly))
      got.push_back(std::move(more));
    std::vector<ForeignRecord> out;
    for (amqp10::test::RawMessage& m : got)
      out.push_back({std::move(m.body), std::move(m.properties)});
    return out;
  }
  // Artemis's count (ready, delivering and scheduled) becomes 0.
  static bool nothing_left(const std::string& queue) {
    return artemis::test::count_becomes(raw(), queue, 0) == 0;
  }
  static constexpr std::string_view schema_version_property = "bq_schema_version";
  static constexpr std::string_view attempts_property = "bq_attempts";
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(Artemis, AppFlowContract, ArtemisAppFlowTraits);

}  // namespace babelqueue::testing

namespace babelqueue::artemis::test {
namespace {

using ArtemisCredentials = SharedBrokerTest;

// Refused credentials: the publish fails (no outcome: the broker refused the SASL exchange),
// naming why and never the password; a consume stops with a ConfigError (D-3).
TEST_F(ArtemisCredentials, RefusedCredentialsFailThePublishNamingNoSecret) {
  std::string bad = "artemis://";
  bad += ArtemisServer::kUser;
  bad += ":not-the-secret-42@";
  bad += server().host_port();
  bad += "?timeout=500";
  ArtemisTransport t(bad);
  const Status s = t.publish(queue(), "{}");
  ASSERT_FALSE(s.ok()) << "published with a wrong password";
  const std::string what = s.error().what();
  EXPECT_EQ(what.find("not-the-secret-42"), std::string::npos) << what;
  EXPECT_NE(what.find("the last connection failed"), std::string::npos) << what;
  // D-3: a consume stops on refused credentials instead of waiting forever.
  App app(std::make_shared<ArtemisTransport>(bad),
          {.poll_timeout = std::chrono::milliseconds(200)});
  app.handle_any([](Context&, const Envelope&) { return Status(); });
  const Status consumed = app.consume(queue());
  ASSERT_FALSE(consumed.ok());
  EXPECT_TRUE(consumed.is(ErrorCode::Config)) << consumed.error().what();
  EXPECT_EQ(std::string(consumed.error().what()).find("not-the-secret-42"), std::string::npos);
}

}  // namespace
}  // namespace babelqueue::artemis::test
