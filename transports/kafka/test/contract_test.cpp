// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The transport contract of the testing kit (babelqueue/testing/*_contract.hpp) for
// KafkaTransport against the shared Kafka broker, each test on a fresh topic (one partition, so
// a consumer reads in publish order) and a fresh consumer group. Kafka keeps these promises:
// Transport, HeaderPublisher (the bq-* headers of KFK-5 beside the publisher's, OB-3) and
// Inspector (the lag of the group; no in-flight or delayed figure). Not instantiated: the
// release and delay suites (no Releaser, no DelayedPublisher: a retry is a republish, KFK-17)
// and the dead-letter suite (no DeadLetterer: the App writes `<q>.dlq`, KFK-16).

#include <babelqueue/kafka/transport.hpp>
#include <babelqueue/testing/header_contract.hpp>
#include <babelqueue/testing/inspector_contract.hpp>
#include <babelqueue/testing/transport_contract.hpp>

#include <memory>
#include <string>
#include <string_view>

#include "kafka_server.hpp"

namespace babelqueue::testing {
namespace {

// The KFK-5 projection written on every publish of a decodable body.
constexpr std::string_view kContractHeaders[] = {
    "bq-job", "bq-trace-id", "bq-message-id", "bq-schema-version", "bq-source-lang", "bq-attempts"};

// A second ack of an acked offset is StaleDelivery and changes nothing. The Inspector's ready
// count is the group's lag (end offset less committed offset) less the records this transport
// holds unsettled, which are its in-flight count; Kafka has no delayed figure.
constexpr Promises kKafkaPromises{.stale_settle_error = ErrorCode::StaleDelivery,
                                  .own_headers = kContractHeaders,
                                  .counts_in_flight = true,
                                  .counts_delayed = false};

struct KafkaTraits {
  static void set_up() { BABELQUEUE_REQUIRE_KAFKA(); }
  static std::unique_ptr<Transport> make() {
    return std::make_unique<kafka::KafkaTransport>(kafka::test::shared_kafka_server().url(
        "partitions=1&group_id=bq-contract-group-" + unique_queue_name()));
  }
  static constexpr Promises promises = kKafkaPromises;
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(Kafka, TransportContract, KafkaTraits);
INSTANTIATE_TYPED_TEST_SUITE_P(Kafka, HeaderContract, KafkaTraits);
INSTANTIATE_TYPED_TEST_SUITE_P(Kafka, InspectorContract, KafkaTraits);

}  // namespace babelqueue::testing
