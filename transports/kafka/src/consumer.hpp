// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/kafka/transport.hpp>
#include <babelqueue/spi/ack_batcher.hpp>

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "client.hpp"
#include "offsets.hpp"
#include "records.hpp"

namespace babelqueue::kafka::detail {

class Consumer;

/// What a ReceivedMessage of this transport carries as its handle (KFK-8).
struct Handle {
  /// Takes `message`'s header list.
  explicit Handle(rd_kafka_message_t& message) : headers(message) {}

  std::weak_ptr<Consumer> consumer;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::uint64_t epoch = 0;
  /// The value bytes when `body` is a KFK-10 rewrite of them.
  std::optional<std::string> original_value;
  WireHeaders headers;
  std::int64_t timestamp_ms = 0;
  /// The HandleRefs to it.
  mutable std::atomic<std::uint32_t> refs{1};
};

/// What a ReceivedMessage's `handle` holds: a counted reference to its Handle, one pointer wide,
/// so std::any keeps it in place (a shared_ptr would take an allocation more per record).
///
/// Thread-safety: copies may be made and destroyed from any thread.
class HandleRef {
 public:
  /// Takes `handle`, whose `refs` is 1.
  explicit HandleRef(std::unique_ptr<Handle> handle) noexcept : handle_(handle.release()) {}
  HandleRef(const HandleRef& other) noexcept : handle_(other.handle_) {
    if (handle_ != nullptr) handle_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  HandleRef(HandleRef&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  HandleRef& operator=(HandleRef other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  ~HandleRef() {
    if (handle_ != nullptr && handle_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete handle_;
    }
  }
  [[nodiscard]] const Handle* get() const noexcept { return handle_; }

 private:
  const Handle* handle_;
};

/// The Kafka handle of `msg`, or nullptr when it has none.
[[nodiscard]] const Handle* handle_of(const ReceivedMessage& msg) noexcept;

/// One consumer-group member for one queue (KFK-6..KFK-12): pops records, tracks what it handed
/// out, commits the settled prefixes, and drives eager rebalances.
///
/// Thread-safety: `pop` from one thread at a time; `ack`, `rewind`, `flush` and `close` from any
/// thread (the rebalance callback runs on the pop thread and waits for acks of the others).
class Consumer final : public RdKafka::RebalanceCb,
                       public RdKafka::OffsetCommitCb,
                       public std::enable_shared_from_this<Consumer> {
 public:
  /// Creates the client and subscribes to `topic`. @throws ConfigError when librdkafka refuses
  /// the client or the subscription.
  Consumer(const Options& options, std::string queue, std::string topic, EventLogger& logger);
  ~Consumer() override;
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;

  /// Waits up to `wait` in slices, so that close() ends it within one slice; `between_slices`
  /// runs after each empty slice, the last one included (the transport serves its other
  /// consumers there: an App polling with a 100 ms timeout makes one slice per pop).
  Result<std::optional<ReceivedMessage>> pop(std::chrono::milliseconds wait,
                                             const std::function<void()>& between_slices);
  /// From another queue's pop, while this one is not popped: serves this member's group
  /// protocol (a rebalance needs every member to poll, else it waits until the member's session
  /// ends). A record that comes with it is kept for the next pop and fetching is paused until
  /// then. Returns at once when a pop of this consumer is running.
  void serve();
  /// Records handed out and not yet settled (ack, revoke, rewind).
  [[nodiscard]] std::size_t outstanding();
  Status ack(const Handle& handle);
  Status rewind(const Handle& handle);
  /// Commits the settled positions synchronously; the first commit error since the last flush.
  Status flush();
  /// Commits what was acked and leaves the group. Idempotent.
  void close();

  void rebalance_cb(RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode err,
                    std::vector<RdKafka::TopicPartition*>& partitions) override;
  void offset_commit_cb(RdKafka::ErrorCode err,
                        std::vector<RdKafka::TopicPartition*>& offsets) override;

 private:
  /// The next event or record within `timeout_ms`; null when none came.
  MessagePtr poll(int timeout_ms);
  /// A pop's outcome for what `poll` returned.
  Result<std::optional<ReceivedMessage>> take(MessagePtr message);
  /// take() of a record (no error): the message, or none when its partition is not assigned.
  Result<std::optional<ReceivedMessage>> take_record(rd_kafka_message_t& message);
  void set_paused(bool paused);
  Status commit(bool sync);
  void note_commit_error(const Error& error);
  void revoke(const std::vector<RdKafka::TopicPartition*>& partitions);
  /// close() has begun.
  bool closed();
  /// Fills `msg` (built in place by the caller: it is not moved on its way out); its OB-4
  /// headers are built on first use (`build_headers()`).
  void received(ReceivedMessage& msg, rd_kafka_message_t& message, std::uint64_t epoch);

  const Options& options_;
  std::string queue_;
  std::string topic_;
  EventLogger& logger_;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer_;

  // Held by pop and serve (the KafkaConsumer's consume side, one thread at a time); guards
  // stashed_.
  std::mutex pop_mu_;
  std::deque<MessagePtr> stashed_;

  std::mutex mu_;
  std::condition_variable settled_;
  OffsetTracker tracker_;
  // Set once by close(), holding mu_ (the revoke's wait reads it); read without it by every pop.
  std::atomic<bool> closing_{false};
  // The last commit sent was asynchronous (a synchronous one after it confirms it).
  bool async_unconfirmed_ = false;

  std::mutex commit_mu_;
  spi::AckBatcher<std::int64_t> acks_;
  std::mutex error_mu_;
  std::optional<Error> commit_error_;
  bool unknown_topic_logged_ = false;
};

}  // namespace babelqueue::kafka::detail
