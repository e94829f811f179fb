// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The transport contract of the testing kit (babelqueue/testing/*_contract.hpp) for
// PulsarTransport on the shared Pulsar broker, each test on a fresh queue. Pulsar keeps these
// promises: Transport and HeaderPublisher (riders as string properties beside the six bq-
// properties of PLS-5, OB-3), DelayedPublisher (deliverAt on the Shared subscription, up to the
// broker's delayed-delivery tick, 1 s, early), and with `admin_url` Inspector. Not instantiated:
// the release suites (no Releaser) and the dead-letter suite (no DeadLetterer: the App writes
// `<q>.dlq`, PLS-11).

#include <babelqueue/pulsar/transport.hpp>
#include <babelqueue/testing/delayed_publish_contract.hpp>
#include <babelqueue/testing/header_contract.hpp>
#include <babelqueue/testing/inspector_contract.hpp>
#include <babelqueue/testing/transport_contract.hpp>

#include <chrono>
#include <memory>
#include <string_view>

#include "transport_test.hpp"

namespace babelqueue::testing {
namespace {

// The PLS-5 properties written on every publish of a decodable body.
constexpr std::string_view kContractProperties[] = {
    "bq-job", "bq-trace-id", "bq-message-id", "bq-schema-version", "bq-source-lang", "bq-attempts"};

// A second settle of a settled message is StaleDelivery and changes nothing. A deliverAt
// message may come up to the broker's delayedDeliveryTickTimeMillis (1 s) early.
constexpr Promises kPulsarPromises{.stale_settle_error = ErrorCode::StaleDelivery,
                                   .delay_granularity = std::chrono::seconds(1),
                                   .own_headers = kContractProperties};

struct PulsarTraits {
  static void set_up() { BABELQUEUE_REQUIRE_PULSAR(); }
  static std::unique_ptr<Transport> make() {
    return std::make_unique<pulsar::PulsarTransport>(
        pulsar::test::url_of(pulsar::test::shared_pulsar_server()));
  }
  static constexpr Promises promises = kPulsarPromises;
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(Pulsar, TransportContract, PulsarTraits);
INSTANTIATE_TYPED_TEST_SUITE_P(Pulsar, HeaderContract, PulsarTraits);
INSTANTIATE_TYPED_TEST_SUITE_P(Pulsar, DelayedPublishContract, PulsarTraits);

}  // namespace babelqueue::testing

namespace babelqueue::testing {
namespace {

// With admin_url the transport is an Inspector through the admin REST API (no delayed count).
constexpr Promises kPulsarInspectorPromises{.stale_settle_error = ErrorCode::StaleDelivery,
                                            .own_headers = kContractProperties,
                                            .counts_delayed = false};

struct PulsarAdminTraits {
  static void set_up() { BABELQUEUE_REQUIRE_PULSAR(); }
  static std::unique_ptr<Transport> make() {
    const auto& server = pulsar::test::shared_pulsar_server();
    return std::make_unique<pulsar::PulsarTransport>(
        pulsar::test::url_of(server, "admin_url=" + server.admin_url()));
  }
  static constexpr Promises promises = kPulsarInspectorPromises;
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(Pulsar, InspectorContract, PulsarAdminTraits);

}  // namespace babelqueue::testing
