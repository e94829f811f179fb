// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The transport contract of the testing kit (babelqueue/testing/*_contract.hpp) for SqsTransport
// against the shared SQS emulator. SQS never creates queues (SQS-5), so the traits create each
// test's queue (VisibilityTimeout 2 s) and its SQS-14 dead-letter queue `<q>-dlq` before the test
// uses them. Two configurations: the defaults (prefetch 10, DeleteMessageBatch of 10, D-11) and
// one message per ReceiveMessage with every ack sent at once (prefetch=1, ack_batch=1).
//
// SqsTransport keeps these promises: Transport, HeaderPublisher (the SQS-6 attributes beside the
// publisher's, OB-3), Releaser (ChangeMessageVisibility, the attempt in ApproximateReceiveCount,
// SQS-10, SQS-13), the release delay (rounded up to whole seconds, so never early),
// DelayedPublisher (DelaySeconds, rounded up likewise) and Inspector (ApproximateNumberOfMessages,
// ...NotVisible, ...Delayed). A standard queue promises no order. Not instantiated: the
// dead-letter suite (no DeadLetterer: the App publishes the record to `<q>-dlq` and deletes,
// OB-8).

#include <babelqueue/sqs/transport.hpp>
#include <babelqueue/testing/delayed_publish_contract.hpp>
#include <babelqueue/testing/header_contract.hpp>
#include <babelqueue/testing/inspector_contract.hpp>
#include <babelqueue/testing/release_contract.hpp>
#include <babelqueue/testing/release_delay_contract.hpp>
#include <babelqueue/testing/transport_contract.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "sqs_emulator.hpp"

namespace babelqueue::testing {
namespace {

// The SQS-6 projection written on every publish of a decodable body.
constexpr std::string_view kContractAttributes[] = {"bq-job",         "bq-trace-id",
                                                    "bq-message-id",  "bq-schema-version",
                                                    "bq-source-lang", "bq-created-at"};

// A settlement of a reservation already settled (acked, released or handed back) is refused by
// the transport itself with StaleDelivery and sends nothing (SQS would answer 200 for the stale
// receipt handle, the emulator too, without deleting the redelivery).
constexpr Promises kSqsPromises{.fifo = false,
                                .stale_settle_error = ErrorCode::StaleDelivery,
                                .release_counts = AttemptCounting::DeliveryCount,
                                .own_headers = kContractAttributes,
                                .counts_in_flight = true,
                                .counts_delayed = true};

template <const char* query>
struct SqsTraits {
  static void set_up() { BABELQUEUE_REQUIRE_SQS_EMULATOR(); }
  static std::unique_ptr<Transport> make() {
    return std::make_unique<sqs::SqsTransport>(sqs::test::shared_sqs_emulator().url(query));
  }
  // The queue and its dead-letter queue, created before the test uses them.
  static std::string queue_name() {
    std::string name = unique_queue_name();
    sqs::test::SqsEmulator& emulator = sqs::test::shared_sqs_emulator();
    emulator.create_queue(name, {{"VisibilityTimeout", "2"}});
    emulator.create_queue(sqs::dead_letter_name(name, std::nullopt));
    return name;
  }
  static constexpr Promises promises = kSqsPromises;
};

constexpr char kDefaults[] = "";
constexpr char kOneByOne[] = "prefetch=1&ack_batch=1";

using Sqs = SqsTraits<kDefaults>;
using SqsOneByOne = SqsTraits<kOneByOne>;

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(Sqs, TransportContract, Sqs);
INSTANTIATE_TYPED_TEST_SUITE_P(Sqs, HeaderContract, Sqs);
INSTANTIATE_TYPED_TEST_SUITE_P(Sqs, ReleaseContract, Sqs);
INSTANTIATE_TYPED_TEST_SUITE_P(Sqs, ReleaseDelayContract, Sqs);
INSTANTIATE_TYPED_TEST_SUITE_P(Sqs, DelayedPublishContract, Sqs);
INSTANTIATE_TYPED_TEST_SUITE_P(Sqs, InspectorContract, Sqs);

INSTANTIATE_TYPED_TEST_SUITE_P(SqsOneByOne, TransportContract, SqsOneByOne);
INSTANTIATE_TYPED_TEST_SUITE_P(SqsOneByOne, ReleaseContract, SqsOneByOne);
INSTANTIATE_TYPED_TEST_SUITE_P(SqsOneByOne, InspectorContract, SqsOneByOne);

}  // namespace babelqueue::testing
