// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The transport contract of the testing kit (babelqueue/testing/*_contract.hpp) for AmqpTransport
// against the shared RabbitMQ node, each test on fresh queue names: push consumption (D-8, the
// default), basic.get consumption (AMQP-18) and, once, unconfirmed publishes (D-9 off). A release
// and a retry count in the body's attempts (the transport republishes, AMQP-25); a settlement of
// a delivery already settled is StaleDelivery (AMQP-23). No DeadLetterContract: the transport is
// not a DeadLetterer (the App publishes the record and acks, AMQP-26).

#include <babelqueue/amqp/transport.hpp>
#include <babelqueue/testing/delayed_publish_contract.hpp>
#include <babelqueue/testing/header_contract.hpp>
#include <babelqueue/testing/inspector_contract.hpp>
#include <babelqueue/testing/release_contract.hpp>
#include <babelqueue/testing/release_delay_contract.hpp>
#include <babelqueue/testing/transport_contract.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "rabbit_server.hpp"

namespace babelqueue::testing {
namespace {

// A holding queue's TTL runs from the moment the broker enqueued the message, which is before
// the publish (or release) returns: the confirm of a persistent message comes once it is on disk
// or has left the queue, so measured from that return a delayed message may come early by up to
// the whole confirm wait (seen here: 0.03 ms after a 100 ms delayed publish returned). The
// contract measures from before the call, where the only earliness left is the broker's clock
// against ours (it computes the expiry from its own system time and rounds to milliseconds;
// seen here: never less than the delay in 40 tries). 50 ms covers that with a wide margin and
// still checks the contract's 200 ms delay from 150 ms on (delay_beyond_granularity).
constexpr std::chrono::milliseconds kTtlGranularity{50};

// The body's mirror on every publish (AMQP-13).
constexpr std::string_view kContractHeaders[] = {"x-attempts", "x-schema-version", "x-source-lang"};

// AMQP 0-9-1 reports a queue's ready and consumer counts, not its unacked or held messages.
constexpr Promises kAmqpPromises{.stale_settle_error = ErrorCode::StaleDelivery,
                                 .release_counts = AttemptCounting::BodyAttempts,
                                 .delay_granularity = kTtlGranularity,
                                 .own_headers = kContractHeaders,
                                 .counts_in_flight = false,
                                 .counts_delayed = false};

template <const char* query>
struct AmqpTraits {
  static void set_up() { BABELQUEUE_REQUIRE_RABBITMQ(); }
  static std::unique_ptr<Transport> make() {
    return std::make_unique<amqp::AmqpTransport>(amqp::test::shared_rabbit_server().url() + query);
  }
  static constexpr Promises promises = kAmqpPromises;
};

constexpr char kPush[] = "";
constexpr char kGet[] = "?consume=get";
constexpr char kUnconfirmed[] = "?confirms=false";

using AmqpPush = AmqpTraits<kPush>;
using AmqpGet = AmqpTraits<kGet>;
using AmqpUnconfirmed = AmqpTraits<kUnconfirmed>;

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(AmqpPush, TransportContract, AmqpPush);
INSTANTIATE_TYPED_TEST_SUITE_P(AmqpPush, HeaderContract, AmqpPush);
INSTANTIATE_TYPED_TEST_SUITE_P(AmqpPush, ReleaseContract, AmqpPush);
INSTANTIATE_TYPED_TEST_SUITE_P(AmqpPush, ReleaseDelayContract, AmqpPush);
INSTANTIATE_TYPED_TEST_SUITE_P(AmqpPush, DelayedPublishContract, AmqpPush);
INSTANTIATE_TYPED_TEST_SUITE_P(AmqpPush, InspectorContract, AmqpPush);

INSTANTIATE_TYPED_TEST_SUITE_P(AmqpGet, TransportContract, AmqpGet);
INSTANTIATE_TYPED_TEST_SUITE_P(AmqpGet, HeaderContract, AmqpGet);
INSTANTIATE_TYPED_TEST_SUITE_P(AmqpGet, ReleaseContract, AmqpGet);
INSTANTIATE_TYPED_TEST_SUITE_P(AmqpGet, ReleaseDelayContract, AmqpGet);
INSTANTIATE_TYPED_TEST_SUITE_P(AmqpGet, DelayedPublishContract, AmqpGet);
INSTANTIATE_TYPED_TEST_SUITE_P(AmqpGet, InspectorContract, AmqpGet);

INSTANTIATE_TYPED_TEST_SUITE_P(AmqpUnconfirmed, TransportContract, AmqpUnconfirmed);

}  // namespace babelqueue::testing
