// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/transport.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <typeinfo>

/// @file
/// The transport contract of the testing kit: typed GoogleTest suites that every transport's tests
/// instantiate, one suite per capability, so a transport runs exactly the suites of the
/// capabilities it has (none is skipped):
///
/// | header                        | suite                  | for a transport that is a ...    |
/// |-------------------------------|------------------------|----------------------------------|
/// | transport_contract.hpp        | TransportContract      | Transport (every one)            |
/// | header_contract.hpp           | HeaderContract         | HeaderPublisher                  |
/// | release_contract.hpp          | ReleaseContract        | Releaser                         |
/// | release_delay_contract.hpp    | ReleaseDelayContract   | Releaser that honours the delay  |
/// | delayed_publish_contract.hpp  | DelayedPublishContract | DelayedPublisher that delays     |
/// | inspector_contract.hpp        | InspectorContract      | Inspector                        |
/// | dead_letter_contract.hpp      | DeadLetterContract     | DeadLetterer                     |
/// | app_flow_contract.hpp         | AppFlowContract        | broker transport whose `<q>.dlq` |
/// |                               |                        | the App writes (own traits)      |
///
/// How to instantiate, in one test source of the transport's test binary (that links
/// `babelqueue::testing` and GTest::gtest_main):
///
/// 1. A traits type per transport configuration:
/// @code
///   struct InMemoryTraits {
///     // Required: a fresh, open transport (for brokers: to the test's broker).
///     static std::unique_ptr<babelqueue::Transport> make() {
///       return std::make_unique<babelqueue::InMemoryTransport>();
///     }
///     // Required: what it promises (see Promises).
///     static constexpr babelqueue::testing::Promises promises{};
///     // Optional: runs first in every test's SetUp; may GTEST_SKIP() or FAIL() (e.g.
///     // BABELQUEUE_REQUIRE_BROKER when the broker cannot be started here).
///     static void set_up();
///     // Optional: a fresh queue name (default: unique_queue_name()).
///     static std::string queue_name();
///     // Optional: returns once a pop of `queue` on another thread is blocked (default: a short
///     // sleep; the tests hold either way, this only makes "close wakes a blocked pop" exact).
///     static void wait_until_pop_blocks(babelqueue::Transport& t, std::string_view queue);
///   };
/// @endcode
/// 2. Include the headers of the suites its capabilities call for and instantiate each inside
///    namespace babelqueue::testing (the macros name the suites unqualified):
/// @code
///   namespace babelqueue::testing {
///   INSTANTIATE_TYPED_TEST_SUITE_P(InMemory, TransportContract, InMemoryTraits);
///   INSTANTIATE_TYPED_TEST_SUITE_P(InMemory, HeaderContract, InMemoryTraits);
///   }  // namespace babelqueue::testing
/// @endcode
/// A header whose suite a binary does not instantiate must not be included there (GoogleTest
/// reports a registered suite that is never instantiated as a failure).
///
/// Every test gets a fresh transport from `make()` and a fresh queue name, and closes the
/// transport at the end; tests never depend on wall-clock speed: they bound how long something
/// may take only to fail instead of hanging (`kWithin`), and check delays only from below.

namespace babelqueue::testing {

/// How a Releaser counts the attempt of a released delivery (RT-3).
enum class AttemptCounting {
  /// The redelivery's `delivery_count` is one higher (in-memory; brokers with a delivery counter).
  DeliveryCount,
  /// The redelivered body's `attempts` is one higher (Redis, RDS-25/57).
  BodyAttempts,
};

/// What a transport promises beyond the interfaces it implements; the suites assert these.
struct Promises {
  /// One consumer pops a queue's messages in publish order.
  bool fifo = true;
  /// `publish_with_headers` delivers the headers; false: it delivers the body and drops them
  /// (Redis Laravel layout, RDS-43).
  bool carries_headers = true;
  /// What `ack` or `dead_letter` of a reservation already settled (acked, released or
  /// dead-lettered) returns: nullopt = ok. Either way it changes nothing.
  std::optional<ErrorCode> stale_settle_error = std::nullopt;
  /// How a release counts the attempt (ReleaseContract).
  AttemptCounting release_counts = AttemptCounting::DeliveryCount;
  /// How much earlier than asked a delayed release or publish may become visible: 0 for exact
  /// timers, 1 s for whole-second schedules (Redis Laravel layout, RDS-44/54).
  std::chrono::milliseconds delay_granularity{0};
  /// How much earlier than its timeout a pop that found nothing may return.
  std::chrono::milliseconds pop_timeout_slack{10};
  /// Header keys the transport itself writes on every message beside the publisher's headers
  /// (RabbitMQ mirrors the body's attempts, schema version and language, AMQP-13): the suites
  /// compare the received headers without them.
  std::span<const std::string_view> own_headers = {};
  /// The Inspector reports `in_flight`; false: the broker has no such figure, so it is nullopt.
  bool counts_in_flight = true;
  /// The Inspector reports `delayed`; false: the broker has no such figure, so it is nullopt.
  bool counts_delayed = true;
};

/// A delay whose lower bound (the delay less the granularity) is still at least half of it.
[[nodiscard]] constexpr std::chrono::milliseconds delay_beyond_granularity(
    const Promises& promises) {
  return std::max(std::chrono::milliseconds(200), 2 * promises.delay_granularity);
}

/// The bound of anything that must happen (a pop of a published message, a wake-up): reached
/// only when the transport is broken, so a loaded machine never trips it.
inline constexpr std::chrono::milliseconds kWithin{20'000};
/// How long a pop waits when the test expects nothing (a bound for the check, not a promise).
inline constexpr std::chrono::milliseconds kBriefly{200};

/// A queue name no other test uses: "bq-contract-<random hex>-<counter>" (letters, digits and
/// '-' only, so every broker accepts it).
[[nodiscard]] std::string unique_queue_name();
/// The URN of the kit's envelopes (contract_body, the App suites).
inline constexpr std::string_view kContractUrn = "urn:babelqueue:contract";
/// A valid envelope (kContractUrn, data {"n": n}, attempts 0), encoded.
[[nodiscard]] std::string contract_body(std::int64_t n);
/// data.n of a contract body; nullopt for anything else.
[[nodiscard]] std::optional<std::int64_t> body_number(std::string_view body);
/// `attempts` of a decodable body; nullopt for anything else.
[[nodiscard]] std::optional<std::int64_t> body_attempts(std::string_view body);

/// `t.pop(queue, timeout)`; a failed pop adds a test failure (naming the error) and returns
/// nullopt, like a pop that found nothing.
[[nodiscard]] std::optional<ReceivedMessage> pop_message(Transport& t, std::string_view queue,
                                                         std::chrono::milliseconds timeout);
/// `headers` without the keys of `Promises::own_headers`: what the publisher sent.
[[nodiscard]] Headers published_headers(Headers headers, const Promises& promises);
/// Sends what `t` batched (Flusher::flush) when it is a Flusher; ok otherwise.
[[nodiscard]] Status settle(Transport& t);
/// `ack`, then `settle`: the first error.
[[nodiscard]] Status ack_and_settle(Transport& t, const ReceivedMessage& msg);
/// The dead-letter queue of `queue`: the transport's DeadLetterNaming, else
/// default_dead_letter_name.
[[nodiscard]] std::string dead_letter_queue_of(Transport& t, std::string_view queue);

/// Success when `status` failed with ErrorCode::Closed and is not transient.
[[nodiscard]] ::testing::AssertionResult is_closed(const Status& status);
/// Success when `result` failed with ErrorCode::Closed and is not transient.
template <class T>
[[nodiscard]] ::testing::AssertionResult is_closed(const Result<T>& result) {
  return result.has_value() ? ::testing::AssertionFailure() << "succeeded after close()"
                            : is_closed(Status(result.error()));
}
/// Success when `status` is what the promise `error` says (nullopt: ok).
[[nodiscard]] ::testing::AssertionResult is_promised(const Status& status,
                                                     std::optional<ErrorCode> error);

/// One `pop` running on a thread of its own, for tests that must not hang when a pop does not
/// return: the destructor closes the transport if the pop is still running, then joins.
///
/// Thread-safety: use from the thread that constructed it.
class BackgroundPop {
 public:
  /// Starts `t.pop(queue, timeout)`; `t` must outlive this object.
  BackgroundPop(Transport& t, std::string queue, std::chrono::milliseconds timeout);
  ~BackgroundPop();
  BackgroundPop(const BackgroundPop&) = delete;
  BackgroundPop& operator=(const BackgroundPop&) = delete;

  /// What the pop returned, waiting at most `within`; nullopt while it has not returned.
  std::optional<Result<std::optional<ReceivedMessage>>> wait(std::chrono::milliseconds within);
  /// How long the pop took; only after `wait` returned a result.
  [[nodiscard]] std::chrono::steady_clock::duration elapsed() const;

 private:
  Transport& transport_;
  mutable std::mutex mu_;
  std::condition_variable done_;
  std::optional<Result<std::optional<ReceivedMessage>>> result_;
  std::chrono::steady_clock::duration elapsed_{};
  std::thread thread_;
};

/// The fixture of every contract suite: a fresh transport from `Traits::make()` with the
/// `Capabilities...` the suite needs (SetUp fails the test when one is missing) and a fresh
/// queue name; TearDown closes the transport.
///
/// Thread-safety: a GoogleTest fixture; the tests use it from their own thread.
template <class Traits, class... Capabilities>
class ContractTest : public ::testing::Test {
 protected:
  static constexpr Promises promises = Traits::promises;

  void SetUp() override {
    if constexpr (requires { Traits::set_up(); }) {
      Traits::set_up();
      if (IsSkipped() || HasFatalFailure()) return;
    }
    transport_ = Traits::make();
    ASSERT_NE(transport_, nullptr) << "Traits::make() returned no transport";
    (require<Capabilities>(), ...);
    queue_ = new_queue();
  }

  void TearDown() override {
    if (transport_) transport_->close();
  }

  Transport& transport() { return *transport_; }
  /// The capability `C` of the transport (one of `Capabilities...`, checked by SetUp).
  template <class C>
  C& cap() {
    return *capability<C>(*transport_);
  }
  /// This test's queue.
  const std::string& queue() const { return queue_; }
  /// Another fresh queue name.
  static std::string new_queue() {
    if constexpr (requires { Traits::queue_name(); }) {
      return Traits::queue_name();
    } else {
      return unique_queue_name();
    }
  }
  /// Publishes contract_body(n) to queue() and pops it: the reservation, or nullopt (with a test
  /// failure) when the publish failed or nothing came within kWithin.
  std::optional<ReceivedMessage> publish_and_pop(std::int64_t n) {
    const Status published = transport_->publish(queue_, contract_body(n));
    if (!published) {
      ADD_FAILURE() << "publish failed: " << published.error().what();
      return std::nullopt;
    }
    auto m = pop_message(*transport_, queue_, kWithin);
    if (!m) ADD_FAILURE() << "the published message never came";
    return m;
  }
  /// Returns once a pop of `queue` on another thread is likely (or, with the traits' hook,
  /// certainly) blocked.
  void wait_until_pop_blocks(std::string_view queue) {
    if constexpr (requires(Transport & t) { Traits::wait_until_pop_blocks(t, queue); }) {
      Traits::wait_until_pop_blocks(*transport_, queue);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

 private:
  template <class C>
  void require() {
    if (capability<C>(*transport_) == nullptr) {
      FAIL() << "the transport lacks the capability this suite tests (" << typeid(C).name()
             << "): do not instantiate the suite for it";
    }
  }

  std::unique_ptr<Transport> transport_;
  std::string queue_;
};

}  // namespace babelqueue::testing
