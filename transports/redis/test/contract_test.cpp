// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The transport contract of the testing kit (babelqueue/testing/*_contract.hpp) for
// RedisTransport in both layouts, against the shared redis-server (each test on fresh queue
// names, so no FLUSHALL is needed). The default layout redelivers a release at once and has no
// delayed set (RDS-13, RDS-25); the Laravel layout drops headers (RDS-43) and schedules in whole
// seconds (RDS-44, RDS-54). Both count a release in the body's attempts (RDS-57) and answer a
// settlement whose reservation is gone with ok and a warning (RDS-9).

#include <babelqueue/redis/transport.hpp>
#include <babelqueue/testing/dead_letter_contract.hpp>
#include <babelqueue/testing/delayed_publish_contract.hpp>
#include <babelqueue/testing/header_contract.hpp>
#include <babelqueue/testing/inspector_contract.hpp>
#include <babelqueue/testing/release_contract.hpp>
#include <babelqueue/testing/release_delay_contract.hpp>
#include <babelqueue/testing/transport_contract.hpp>

#include <chrono>
#include <memory>

#include "server_test.hpp"

namespace babelqueue::testing {
namespace {

template <redis::Layout layout>
struct RedisTraits {
  static void set_up() { BABELQUEUE_REQUIRE_REDIS_SERVER(); }
  static std::unique_ptr<Transport> make() {
    redis::Options options = redis::parse_url(redis::test::shared_redis_server().url());
    options.layout = layout;
    return std::make_unique<redis::RedisTransport>(std::move(options));
  }
};

struct RedisDefault : RedisTraits<redis::Layout::Default> {
  static constexpr Promises promises{.release_counts = AttemptCounting::BodyAttempts};
};

struct RedisLaravel : RedisTraits<redis::Layout::Laravel> {
  static constexpr Promises promises{.carries_headers = false,
                                     .release_counts = AttemptCounting::BodyAttempts,
                                     .delay_granularity = std::chrono::seconds(1)};
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(RedisDefault, TransportContract, RedisDefault);
INSTANTIATE_TYPED_TEST_SUITE_P(RedisDefault, HeaderContract, RedisDefault);
INSTANTIATE_TYPED_TEST_SUITE_P(RedisDefault, ReleaseContract, RedisDefault);
INSTANTIATE_TYPED_TEST_SUITE_P(RedisDefault, DeadLetterContract, RedisDefault);
INSTANTIATE_TYPED_TEST_SUITE_P(RedisDefault, InspectorContract, RedisDefault);

INSTANTIATE_TYPED_TEST_SUITE_P(RedisLaravel, TransportContract, RedisLaravel);
INSTANTIATE_TYPED_TEST_SUITE_P(RedisLaravel, HeaderContract, RedisLaravel);
INSTANTIATE_TYPED_TEST_SUITE_P(RedisLaravel, ReleaseContract, RedisLaravel);
INSTANTIATE_TYPED_TEST_SUITE_P(RedisLaravel, ReleaseDelayContract, RedisLaravel);
INSTANTIATE_TYPED_TEST_SUITE_P(RedisLaravel, DeadLetterContract, RedisLaravel);
INSTANTIATE_TYPED_TEST_SUITE_P(RedisLaravel, InspectorContract, RedisLaravel);
INSTANTIATE_TYPED_TEST_SUITE_P(RedisLaravel, DelayedPublishContract, RedisLaravel);

}  // namespace babelqueue::testing
