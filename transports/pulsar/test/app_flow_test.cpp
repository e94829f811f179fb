// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The App end to end on PulsarTransport against the shared broker: the testing kit's
// AppFlowContract (babelqueue/testing/app_flow_contract.hpp), checked with RawPulsar (what
// `<q>.dlq` holds) and a fresh transport (what the subscription still has): a handled message is
// acked (PLS-9) and gone; a failure is retried by a republish with attempts + 1, then
// dead-lettered to `<q>.dlq` with the PLS-5 properties (PLS-11, OB-8); poison bytes and a message
// the bq-schema-version gate rejects go to `<q>.dlq` untouched (D-2, PLS-8); four workers handle
// every message once.

#include <babelqueue/pulsar/transport.hpp>
#include <babelqueue/testing/app_flow_contract.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "transport_test.hpp"

namespace babelqueue::testing {
namespace {

using pulsar::test::SharedBrokerTest;

struct PulsarAppFlowTraits {
  static void set_up() { BABELQUEUE_REQUIRE_PULSAR(); }
  static std::unique_ptr<Transport> make() {
    return std::make_unique<pulsar::PulsarTransport>(
        pulsar::test::url_of(pulsar::test::shared_pulsar_server()));
  }
  static void send_foreign(const std::string& queue, const std::string& body,
                           const std::map<std::string, std::string>& properties) {
    pulsar::test::RawPulsar raw(pulsar::test::shared_pulsar_server().port(), kWithin);
    raw.send(raw.create_producer(pulsar::test::topic_for(queue)), body, properties);
  }
  // What `queue` holds, read through a subscription of the raw client's own.
  static std::vector<ForeignRecord> read_all(const std::string& queue, std::size_t n) {
    std::vector<ForeignRecord> out;
    for (pulsar::test::RawMessage& m : SharedBrokerTest::read_all(queue, n, kWithin, kBriefly)) {
      ForeignRecord record{std::move(m.message.payload), {}};
      for (const auto& p : m.message.metadata.properties())
        record.properties.emplace(p.key(), p.value());
      out.push_back(std::move(record));
    }
    return out;
  }
  static bool nothing_left(const std::string& queue) {
    return SharedBrokerTest::nothing_left(queue);
  }
  static constexpr std::string_view schema_version_property = "bq-schema-version";
  static constexpr std::string_view attempts_property = "bq-attempts";
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(Pulsar, AppFlowContract, PulsarAppFlowTraits);

}  // namespace babelqueue::testing
