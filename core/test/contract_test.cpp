// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The transport contract of the testing kit (babelqueue/testing/*_contract.hpp) for
// InMemoryTransport: every suite of the capabilities it has (it is no DeadLetterer).

#include <babelqueue/in_memory_transport.hpp>
#include <babelqueue/testing/delayed_publish_contract.hpp>
#include <babelqueue/testing/header_contract.hpp>
#include <babelqueue/testing/inspector_contract.hpp>
#include <babelqueue/testing/release_contract.hpp>
#include <babelqueue/testing/release_delay_contract.hpp>
#include <babelqueue/testing/transport_contract.hpp>

#include <chrono>
#include <memory>
#include <string_view>
#include <thread>

namespace babelqueue::testing {
namespace {

struct InMemoryTraits {
  static std::unique_ptr<Transport> make() { return std::make_unique<InMemoryTransport>(); }
  static constexpr Promises promises{.pop_timeout_slack = std::chrono::milliseconds(0)};
  static void wait_until_pop_blocks(Transport& t, std::string_view queue) {
    const auto& memory = dynamic_cast<const InMemoryTransport&>(t);
    const auto give_up = std::chrono::steady_clock::now() + kWithin;
    while (memory.blocked_pops(queue) == 0 && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(InMemory, TransportContract, InMemoryTraits);
INSTANTIATE_TYPED_TEST_SUITE_P(InMemory, HeaderContract, InMemoryTraits);
INSTANTIATE_TYPED_TEST_SUITE_P(InMemory, ReleaseContract, InMemoryTraits);
INSTANTIATE_TYPED_TEST_SUITE_P(InMemory, ReleaseDelayContract, InMemoryTraits);
INSTANTIATE_TYPED_TEST_SUITE_P(InMemory, DelayedPublishContract, InMemoryTraits);
INSTANTIATE_TYPED_TEST_SUITE_P(InMemory, InspectorContract, InMemoryTraits);

}  // namespace babelqueue::testing
