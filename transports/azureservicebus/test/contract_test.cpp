// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The transport contract of the testing kit for ServiceBusTransport on the shared scripted
// Service Bus peer, each test on a fresh entity (the peer auto-creates entities). Instantiated:
// Transport and HeaderPublisher (riders as string application properties beside the three
// bq- properties of ASB-4, OB-3). Not instantiated: the release and delay suites (no Releaser,
// no DelayedPublisher), the dead-letter suite (no DeadLetterer: the App writes `<q>.dlq`,
// ASB-11) and the inspector suite: Service Bus has no count over AMQP, and the peek that
// `stats` counts with sees locked messages too, so `ready` cannot drop on a pop as the suite
// requires (conformance_wire_test.cpp tests peek and stats instead).

#include <babelqueue/azureservicebus/transport.hpp>
#include <babelqueue/testing/header_contract.hpp>
#include <babelqueue/testing/transport_contract.hpp>

#include <memory>
#include <string_view>

#include "servicebus_peer.hpp"

namespace babelqueue::testing {
namespace {

// The ASB-4 application properties written on every publish of a decodable body.
constexpr std::string_view kContractProperties[] = {"bq-schema-version", "bq-source-lang",
                                                    "bq-created-at"};

constexpr Promises kServiceBusPromises{.stale_settle_error = ErrorCode::StaleDelivery,
                                       .own_headers = kContractProperties};

struct ServiceBusTraits {
  static void set_up() { BABELQUEUE_REQUIRE_SERVICEBUS_PEER(); }
  static std::unique_ptr<Transport> make() {
    return std::make_unique<azureservicebus::ServiceBusTransport>(
        azureservicebus::test::shared_peer().url());
  }
  static constexpr Promises promises = kServiceBusPromises;
};

// The same with the prefetch option (credit 10 per entity) instead of ASB-5's one per pop.
struct ServiceBusPrefetchTraits {
  static void set_up() { BABELQUEUE_REQUIRE_SERVICEBUS_PEER(); }
  static std::unique_ptr<Transport> make() {
    return std::make_unique<azureservicebus::ServiceBusTransport>(
        azureservicebus::test::shared_peer().url("prefetch=10"));
  }
  static constexpr Promises promises = kServiceBusPromises;
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(ServiceBus, TransportContract, ServiceBusTraits);
INSTANTIATE_TYPED_TEST_SUITE_P(ServiceBus, HeaderContract, ServiceBusTraits);
INSTANTIATE_TYPED_TEST_SUITE_P(ServiceBusPrefetch10, TransportContract, ServiceBusPrefetchTraits);
INSTANTIATE_TYPED_TEST_SUITE_P(ServiceBusPrefetch10, HeaderContract, ServiceBusPrefetchTraits);

}  // namespace babelqueue::testing
