// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/transport.hpp>

#include <algorithm>
#include <any>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/// @file
/// A configurable transport test double for the App runtime tests: it can play any subset of the
/// optional capabilities (RT-3), inject failures, and records every call for assertions. The
/// capabilities are a compile-time set because the App discovers them with `dynamic_cast`:
///
///   auto t = std::make_shared<TestTransport<kReleaser | kRewinder>>();
///   t->fail_publish("orders", 1);
///
/// Messages live in in-memory FIFOs the double owns; `pop` blocks (condition variable) up to its
/// timeout. Every reserved message gets an id (in `ReceivedMessage::handle`), so release and
/// rewind can put the very same delivery back when asked to.

namespace babelqueue::test {

/// Capability flags (RT-3).
enum Cap : unsigned {
  kHeaderPublisher = 1u << 0,
  kReleaser = 1u << 1,
  kRewinder = 1u << 2,
  kKeyedRepublisher = 1u << 3,
  kDeadLetterer = 1u << 4,
  kBrokerDeadLetter = 1u << 5,
  kDeadLetterNaming = 1u << 6,
};

/// Behaviour switches that are not capabilities.
struct Behaviour {
  /// `pop` stamps `delivery_count` = deliveries so far + 1 (SQS-like); otherwise the enqueued
  /// `Delivery::delivery_count` is reported as is.
  bool stamp_delivery_count = false;
  /// A successful `release` puts the delivery back at the tail of its queue (in place, body
  /// untouched); otherwise it is only recorded.
  bool release_requeues = false;
  /// A successful `rewind` puts the delivery back at the tail of its queue.
  bool rewind_requeues = false;
};

/// A delivery as a test enqueues it directly (everything a transport can set on RT-1).
struct Delivery {
  std::string body;
  Headers headers = {};
  std::string route = {};
  bool poison = false;
  std::string poison_reason = {};
  std::optional<std::string> key = std::nullopt;
  std::int64_t delivery_count = 0;
};

/// One successful publish-like write (publish, publish_with_headers, republish).
struct Published {
  enum class Via { Publish, PublishWithHeaders, Republish };
  std::string queue;
  std::string body;
  Headers headers;
  /// For `Republish`: the source key (nullopt = null key).
  std::optional<std::string> key;
  Via via = Via::Publish;
};

struct Released {
  std::string body;
  std::chrono::milliseconds delay{0};
};

struct HandedToBroker {
  std::string body;
  std::string why;
};

struct DeadLettered {
  std::string source_queue;
  std::string dead_letter_queue;
  std::string body;
};

/// The state, the recording and every operation. Use `TestTransport<Caps>`.
///
/// Thread-safety: every member function is thread-safe (one mutex).
class TestTransportCore : public Transport {
 public:
  explicit TestTransportCore(Behaviour behaviour) : behaviour_(behaviour) {}

  // ---- setup ----

  /// Enqueues a delivery on `queue` as the broker would hand it out.
  void enqueue(std::string_view queue, Delivery delivery) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      fifo_[std::string(queue)].push_back(Stored{std::move(delivery), 0});
    }
    cv_.notify_all();
  }
  /// Enqueues a plain body.
  void enqueue(std::string_view queue, std::string body) {
    Delivery d;
    d.body = std::move(body);
    enqueue(queue, std::move(d));
  }

  // ---- failure injection ----

  /// The next `times` publish-like writes (publish, publish_with_headers, republish) to `queue`
  /// fail with a TransportError (use a large number for "always").
  void fail_publish(std::string_view queue, int times) {
    std::lock_guard<std::mutex> lock(mu_);
    publish_failures_left_[std::string(queue)] = times;
  }
  /// The next `times` acks fail.
  void fail_ack(int times) {
    std::lock_guard<std::mutex> lock(mu_);
    ack_failures_left_ = times;
  }
  /// Every release returns `error` (e.g. ErrorCode::ReleaseUnsupported); nullopt = succeed.
  void set_release_error(std::optional<Error> error) {
    std::lock_guard<std::mutex> lock(mu_);
    release_error_ = std::move(error);
  }
  /// The next `times` pops fail with a transient TransportError, then pops deliver again.
  void fail_pop_transient(int times) {
    std::lock_guard<std::mutex> lock(mu_);
    pop_transient_failures_left_ = times;
  }
  /// Every pop fails with a ConfigError (non-transient).
  void fail_pop_config() {
    std::lock_guard<std::mutex> lock(mu_);
    pop_config_error_ = true;
  }
  /// The next `times` DeadLetterer writes fail.
  void fail_dead_letter(int times) {
    std::lock_guard<std::mutex> lock(mu_);
    dead_letter_failures_left_ = times;
  }
  /// The next `times` rewinds fail.
  void fail_rewind(int times) {
    std::lock_guard<std::mutex> lock(mu_);
    rewind_failures_left_ = times;
  }
  /// The next `times` hand-offs to the broker fail.
  void fail_hand_to_broker(int times) {
    std::lock_guard<std::mutex> lock(mu_);
    hand_to_broker_failures_left_ = times;
  }

  // ---- recorded calls (copies) ----

  [[nodiscard]] std::vector<Published> published() const { return locked_copy(published_); }
  /// Bodies of acknowledged deliveries, in ack order.
  [[nodiscard]] std::vector<std::string> acked() const { return locked_copy(acked_); }
  [[nodiscard]] std::vector<Released> released() const { return locked_copy(released_); }
  [[nodiscard]] std::vector<std::string> rewound() const { return locked_copy(rewound_); }
  [[nodiscard]] std::vector<HandedToBroker> handed_to_broker() const {
    return locked_copy(handed_to_broker_);
  }
  [[nodiscard]] std::vector<DeadLettered> dead_lettered() const {
    return locked_copy(dead_lettered_);
  }
  /// Every `dead_letter_name` call as (source queue, explicit suffix).
  [[nodiscard]] std::vector<std::pair<std::string, std::optional<std::string>>> naming_calls()
      const {
    return locked_copy(naming_calls_);
  }
  [[nodiscard]] int pop_calls() const { return locked_copy(pop_calls_); }
  [[nodiscard]] int failed_publishes() const { return locked_copy(failed_publishes_); }
  [[nodiscard]] int failed_acks() const { return locked_copy(failed_acks_); }
  /// Deliveries popped and neither acked, dead-lettered, released nor rewound (in place).
  [[nodiscard]] std::size_t reserved() const {
    std::lock_guard<std::mutex> lock(mu_);
    return reserved_.size();
  }
  /// The bodies waiting on `queue`, in FIFO order.
  [[nodiscard]] std::vector<std::string> bodies(std::string_view queue) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    const auto it = fifo_.find(std::string(queue));
    if (it == fifo_.end()) return out;
    for (const Stored& s : it->second)
      out.push_back(s.delivery.body);
    return out;
  }
  [[nodiscard]] std::size_t size(std::string_view queue) const { return bodies(queue).size(); }

  // ---- Transport ----

  Status publish(std::string_view queue, std::string body) override {
    return write(queue, std::move(body), {}, std::nullopt, Published::Via::Publish);
  }

  Result<std::optional<ReceivedMessage>> pop(std::string_view queue,
                                             std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++pop_calls_;
    if (closed_) return Error(ErrorCode::Closed, "test transport closed");
    if (pop_config_error_) return ConfigError("test transport: bad configuration");
    if (pop_transient_failures_left_ > 0) {
      --pop_transient_failures_left_;
      return TransportError("test transport: connection refused", true);
    }
    auto& q = fifo_[std::string(queue)];
    if (q.empty() && timeout.count() > 0) {
      cv_.wait_for(lock, timeout, [&] { return closed_ || !q.empty(); });
      if (closed_) return Error(ErrorCode::Closed, "test transport closed");
    }
    if (q.empty()) return std::optional<ReceivedMessage>();
    Stored stored = std::move(q.front());
    q.pop_front();
    ++stored.deliveries;
    const std::uint64_t id = next_id_++;
    ReceivedMessage m;
    m.body = stored.delivery.body;
    m.queue = std::string(queue);
    m.handle = id;
    m.headers = stored.delivery.headers;
    m.delivery_count =
        behaviour_.stamp_delivery_count ? stored.deliveries : stored.delivery.delivery_count;
    m.poison = stored.delivery.poison;
    m.poison_reason = stored.delivery.poison_reason;
    m.route = stored.delivery.route;
    m.key = stored.delivery.key;
    reserved_.emplace(id, std::move(stored));
    return std::optional<ReceivedMessage>(std::move(m));
  }

  Status ack(const ReceivedMessage& msg) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (ack_failures_left_ > 0) {
      --ack_failures_left_;
      ++failed_acks_;
      return TransportError("test transport: ack failed", true);
    }
    acked_.push_back(msg.body);
    reserved_.erase(id_of(msg));
    return {};
  }

  void close() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    cv_.notify_all();
  }

  // ---- capability implementations, exposed by TestTransport<Caps> ----

  Status do_publish_with_headers(std::string_view queue, std::string body, const Headers& headers) {
    return write(queue, std::move(body), headers, std::nullopt, Published::Via::PublishWithHeaders);
  }

  Status do_release(const ReceivedMessage& msg, std::chrono::milliseconds delay) {
    std::lock_guard<std::mutex> lock(mu_);
    if (release_error_) return *release_error_;
    released_.push_back(Released{msg.body, delay});
    if (behaviour_.release_requeues) requeue_locked(msg);
    return {};
  }

  Status do_rewind(const ReceivedMessage& msg) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      rewound_.push_back(msg.body);
      if (rewind_failures_left_ > 0) {
        --rewind_failures_left_;
        return TransportError("test transport: rewind failed", true);
      }
      if (behaviour_.rewind_requeues) requeue_locked(msg);
    }
    cv_.notify_all();
    return {};
  }

  Status do_republish(std::string_view queue, std::string body, const ReceivedMessage& source) {
    return write(queue, std::move(body), {}, source.key, Published::Via::Republish);
  }

  Status do_dead_letter(const ReceivedMessage& msg, std::string_view dlq, std::string body) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (dead_letter_failures_left_ > 0) {
        --dead_letter_failures_left_;
        return TransportError("test transport: dead-letter write failed", true);
      }
      dead_lettered_.push_back(DeadLettered{msg.queue, std::string(dlq), body});
      fifo_[std::string(dlq)].push_back(Stored{Delivery{std::move(body)}, 0});
      reserved_.erase(id_of(msg));
    }
    cv_.notify_all();
    return {};
  }

  Status do_hand_to_broker(const ReceivedMessage& msg, std::string_view why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (hand_to_broker_failures_left_ > 0) {
      --hand_to_broker_failures_left_;
      return TransportError("test transport: hand-off failed", true);
    }
    handed_to_broker_.push_back(HandedToBroker{msg.body, std::string(why)});
    return {};
  }

  /// SQS-like naming: `<q>-dlq`, or `<q><suffix>` with an explicit suffix.
  [[nodiscard]] std::string do_dead_letter_name(
      std::string_view source_queue, std::optional<std::string_view> explicit_suffix) const {
    std::lock_guard<std::mutex> lock(mu_);
    naming_calls_.emplace_back(
        std::string(source_queue),
        explicit_suffix ? std::optional<std::string>(*explicit_suffix) : std::nullopt);
    return std::string(source_queue) +
           (explicit_suffix ? std::string(*explicit_suffix) : std::string("-dlq"));
  }

 private:
  struct Stored {
    Delivery delivery;
    std::int64_t deliveries = 0;
  };

  template <class T>
  T locked_copy(const T& value) const {
    std::lock_guard<std::mutex> lock(mu_);
    return value;
  }

  static std::uint64_t id_of(const ReceivedMessage& msg) {
    const auto* id = std::any_cast<std::uint64_t>(&msg.handle);
    return id == nullptr ? 0 : *id;
  }

  Status write(std::string_view queue, std::string body, const Headers& headers,
               std::optional<std::string> key, Published::Via via) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return Error(ErrorCode::Closed, "test transport closed");
      const auto it = publish_failures_left_.find(std::string(queue));
      if (it != publish_failures_left_.end() && it->second > 0) {
        --it->second;
        ++failed_publishes_;
        return TransportError("test transport: publish to " + std::string(queue) + " failed", true);
      }
      published_.push_back(Published{std::string(queue), body, headers, key, via});
      Delivery d;
      d.body = std::move(body);
      d.headers = headers;
      d.key = std::move(key);
      fifo_[std::string(queue)].push_back(Stored{std::move(d), 0});
    }
    cv_.notify_all();
    return {};
  }

  // Puts the reserved delivery of `msg` back at the tail of its queue (mu_ held).
  void requeue_locked(const ReceivedMessage& msg) {
    const auto it = reserved_.find(id_of(msg));
    if (it == reserved_.end()) return;
    fifo_[msg.queue].push_back(std::move(it->second));
    reserved_.erase(it);
    cv_.notify_all();
  }

  const Behaviour behaviour_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::deque<Stored>> fifo_;
  std::map<std::uint64_t, Stored> reserved_;
  std::uint64_t next_id_ = 1;
  bool closed_ = false;

  std::map<std::string, int> publish_failures_left_;
  int ack_failures_left_ = 0;
  std::optional<Error> release_error_;
  int pop_transient_failures_left_ = 0;
  bool pop_config_error_ = false;
  int dead_letter_failures_left_ = 0;
  int rewind_failures_left_ = 0;
  int hand_to_broker_failures_left_ = 0;

  std::vector<Published> published_;
  std::vector<std::string> acked_;
  std::vector<Released> released_;
  std::vector<std::string> rewound_;
  std::vector<HandedToBroker> handed_to_broker_;
  std::vector<DeadLettered> dead_lettered_;
  mutable std::vector<std::pair<std::string, std::optional<std::string>>> naming_calls_;
  int pop_calls_ = 0;
  int failed_publishes_ = 0;
  int failed_acks_ = 0;
};

namespace detail {

// One mixin per capability: the `true` specialisation implements the interface by forwarding to
// the core, the `false` one is an empty (distinct) base.
template <bool On>
struct HeaderPublisherCap {
  explicit HeaderPublisherCap(TestTransportCore*) {}
};
template <>
struct HeaderPublisherCap<true> : HeaderPublisher {
  explicit HeaderPublisherCap(TestTransportCore* core) : core_(core) {}
  Status publish_with_headers(std::string_view queue, std::string body,
                              const Headers& headers) override {
    return core_->do_publish_with_headers(queue, std::move(body), headers);
  }
  TestTransportCore* core_;
};

template <bool On>
struct ReleaserCap {
  explicit ReleaserCap(TestTransportCore*) {}
};
template <>
struct ReleaserCap<true> : Releaser {
  explicit ReleaserCap(TestTransportCore* core) : core_(core) {}
  Status release(const ReceivedMessage& msg, std::chrono::milliseconds delay) override {
    return core_->do_release(msg, delay);
  }
  TestTransportCore* core_;
};

template <bool On>
struct RewinderCap {
  explicit RewinderCap(TestTransportCore*) {}
};
template <>
struct RewinderCap<true> : Rewinder {
  explicit RewinderCap(TestTransportCore* core) : core_(core) {}
  Status rewind(const ReceivedMessage& msg) override { return core_->do_rewind(msg); }
  TestTransportCore* core_;
};

template <bool On>
struct KeyedRepublisherCap {
  explicit KeyedRepublisherCap(TestTransportCore*) {}
};
template <>
struct KeyedRepublisherCap<true> : KeyedRepublisher {
  explicit KeyedRepublisherCap(TestTransportCore* core) : core_(core) {}
  Status republish(std::string_view queue, std::string body,
                   const ReceivedMessage& source) override {
    return core_->do_republish(queue, std::move(body), source);
  }
  TestTransportCore* core_;
};

template <bool On>
struct DeadLettererCap {
  explicit DeadLettererCap(TestTransportCore*) {}
};
template <>
struct DeadLettererCap<true> : DeadLetterer {
  explicit DeadLettererCap(TestTransportCore* core) : core_(core) {}
  Status dead_letter(const ReceivedMessage& msg, std::string_view dlq, std::string body) override {
    return core_->do_dead_letter(msg, dlq, std::move(body));
  }
  TestTransportCore* core_;
};

template <bool On>
struct BrokerDeadLetterCap {
  explicit BrokerDeadLetterCap(TestTransportCore*) {}
};
template <>
struct BrokerDeadLetterCap<true> : BrokerDeadLetter {
  explicit BrokerDeadLetterCap(TestTransportCore* core) : core_(core) {}
  Status hand_to_broker(const ReceivedMessage& msg, std::string_view why) override {
    return core_->do_hand_to_broker(msg, why);
  }
  TestTransportCore* core_;
};

template <bool On>
struct DeadLetterNamingCap {
  explicit DeadLetterNamingCap(TestTransportCore*) {}
};
template <>
struct DeadLetterNamingCap<true> : DeadLetterNaming {
  explicit DeadLetterNamingCap(TestTransportCore* core) : core_(core) {}
  [[nodiscard]] std::string dead_letter_name(
      std::string_view source_queue,
      std::optional<std::string_view> explicit_suffix) const override {
    return core_->do_dead_letter_name(source_queue, explicit_suffix);
  }
  TestTransportCore* core_;
};

}  // namespace detail

/// The test double with exactly the capabilities in `Caps` (a set of `Cap` flags).
///
/// Thread-safety: every member function is thread-safe.
template <unsigned Caps = 0>
class TestTransport final : public TestTransportCore,
                            public detail::HeaderPublisherCap<(Caps & kHeaderPublisher) != 0>,
                            public detail::ReleaserCap<(Caps & kReleaser) != 0>,
                            public detail::RewinderCap<(Caps & kRewinder) != 0>,
                            public detail::KeyedRepublisherCap<(Caps & kKeyedRepublisher) != 0>,
                            public detail::DeadLettererCap<(Caps & kDeadLetterer) != 0>,
                            public detail::BrokerDeadLetterCap<(Caps & kBrokerDeadLetter) != 0>,
                            public detail::DeadLetterNamingCap<(Caps & kDeadLetterNaming) != 0> {
 public:
  explicit TestTransport(Behaviour behaviour = {})
      : TestTransportCore(behaviour),
        detail::HeaderPublisherCap<(Caps & kHeaderPublisher) != 0>(
            static_cast<TestTransportCore*>(this)),
        detail::ReleaserCap<(Caps & kReleaser) != 0>(static_cast<TestTransportCore*>(this)),
        detail::RewinderCap<(Caps & kRewinder) != 0>(static_cast<TestTransportCore*>(this)),
        detail::KeyedRepublisherCap<(Caps & kKeyedRepublisher) != 0>(
            static_cast<TestTransportCore*>(this)),
        detail::DeadLettererCap<(Caps & kDeadLetterer) != 0>(static_cast<TestTransportCore*>(this)),
        detail::BrokerDeadLetterCap<(Caps & kBrokerDeadLetter) != 0>(
            static_cast<TestTransportCore*>(this)),
        detail::DeadLetterNamingCap<(Caps & kDeadLetterNaming) != 0>(
            static_cast<TestTransportCore*>(this)) {}
  // (The mixins get the core through an upcast of `this`, which is valid once TestTransportCore
  // is constructed; calling a member function here would not be, [class.base.init].)
};

}  // namespace babelqueue::test
