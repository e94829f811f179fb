// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The transport contract of the testing kit (babelqueue/testing/*_contract.hpp) for
// ArtemisTransport on the shared Artemis broker, each test on a fresh queue. Artemis keeps
// these promises: Transport and HeaderPublisher (riders as string application properties beside
// the four bq_ properties of ART-4, OB-3), Inspector (counts through the management address,
// in-flight = Artemis's delivering count, peek by a browser). Not instantiated: the release and
// delay suites (no Releaser, no DelayedPublisher) and the dead-letter suite (no DeadLetterer:
// the App writes `<q>.dlq`, ART-9).

#include <babelqueue/artemis/transport.hpp>
#include <babelqueue/testing/header_contract.hpp>
#include <babelqueue/testing/inspector_contract.hpp>
#include <babelqueue/testing/transport_contract.hpp>

#include <memory>
#include <string_view>

#include "shared_broker_test.hpp"

namespace babelqueue::testing {
namespace {

// The ART-4 application properties written on every publish of a decodable body.
constexpr std::string_view kContractProperties[] = {"bq_schema_version", "bq_source_lang",
                                                    "bq_attempts", "bq_app_id"};

// A second settle of a settled delivery is StaleDelivery and changes nothing.
constexpr Promises kArtemisPromises{.stale_settle_error = ErrorCode::StaleDelivery,
                                    .own_headers = kContractProperties};

struct ArtemisTraits {
  static void set_up() { BABELQUEUE_REQUIRE_ARTEMIS(); }
  static std::unique_ptr<Transport> make() {
    return std::make_unique<artemis::ArtemisTransport>(
        artemis::test::url_of(amqp10::test::shared_artemis_server()));
  }
  static constexpr Promises promises = kArtemisPromises;
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(Artemis, TransportContract, ArtemisTraits);
INSTANTIATE_TYPED_TEST_SUITE_P(Artemis, HeaderContract, ArtemisTraits);
INSTANTIATE_TYPED_TEST_SUITE_P(Artemis, InspectorContract, ArtemisTraits);

}  // namespace babelqueue::testing
