// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The fake broker's self-check (testing/peers/pulsar/check.js) has pulsar-flex checks that need
// no scripting; here they run against the real standalone broker, showing that the fake and the
// broker behave alike for what they check (receipts, round trip, batches, negative-ack
// redelivery counts, Exclusive refusal, a closed consumer's message handed over with its count).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_broker.hpp"
#include "pulsar_server.hpp"

namespace babelqueue::pulsar::test {
namespace {

TEST(PulsarFakeBrokerCheck, PulsarFlexChecksHoldOnTheRealBroker) {
  BABELQUEUE_REQUIRE_PULSAR();
  BABELQUEUE_REQUIRE_FAKE_PULSAR();  // node and the check's npm packages
  const PulsarServer& server = shared_pulsar_server();
  const babelqueue::testing::CommandResult result =
      run_fake_broker_check({"--broker", server.service_url()});
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, ::testing::HasSubstr("6 of 6 checks held")) << result.output;
}

}  // namespace
}  // namespace babelqueue::pulsar::test
