// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Locking: mu_ guards the tracker and is never held across a librdkafka call; commit_mu_
// serialises commits so that a later position never reaches the broker before an earlier one.
// The rebalance callback runs inside consume() on the pop thread and waits on `settled_` for the
// workers' acks of the revoked partitions.

#include "consumer.hpp"

#include <babelqueue/spi/unshared.hpp>

#include <babelqueue/spi/text.hpp>

#include <algorithm>
#include <chrono>
#include <new>
#include <utility>

#include "options.hpp"

namespace babelqueue::kafka::detail {
namespace {

constexpr int kSeekTimeoutMs = 10'000;
// A pop waits in slices of this at most, so that close() ends it promptly.
constexpr std::chrono::milliseconds kPopSlice{100};
// Records serve() keeps for the next pop at most (then it stops serving).
constexpr std::size_t kMaxStashed = 1000;

using Partitions = std::vector<RdKafka::TopicPartition*>;

struct OwnedPartitions {
  Partitions list;
  OwnedPartitions() = default;
  OwnedPartitions(const OwnedPartitions&) = delete;
  OwnedPartitions& operator=(const OwnedPartitions&) = delete;
  ~OwnedPartitions() { RdKafka::TopicPartition::destroy(list); }
};

}  // namespace

const Handle* handle_of(const ReceivedMessage& msg) noexcept {
  const auto* handle = std::any_cast<HandleRef>(&msg.handle);
  return handle == nullptr ? nullptr : handle->get();
}

namespace {

// The headers_builder of a deferred pop: OB-4 from the header list the handle keeps.
void build_text_headers(const ReceivedMessage& msg, Headers& out) noexcept {
  const Handle* handle = handle_of(msg);
  if (handle == nullptr) return;
  try {
    out = text_headers(handle->headers.views());
  } catch (const std::bad_alloc&) {
    out.clear();
  }
}

}  // namespace

Consumer::Consumer(const Options& options, std::string queue, std::string topic,
                   EventLogger& logger)
    : options_(options),
      queue_(std::move(queue)),
      topic_(std::move(topic)),
      logger_(logger),
      acks_(options.commit_batch) {
  const std::unique_ptr<RdKafka::Conf> conf = consumer_conf(
      options, options.group_id, Callbacks{.event = &logger, .rebalance = this, .commit = this});
  std::string err;
  consumer_.reset(RdKafka::KafkaConsumer::create(conf.get(), err));
  if (!consumer_) {
    throw ConfigError("kafka: cannot create the consumer of " + spi::quoted(topic_) + ": " +
                      scrub(err, options.sasl_password));
  }
  const RdKafka::ErrorCode code = consumer_->subscribe({topic_});
  if (code != RdKafka::ERR_NO_ERROR) {
    const Error e = map_error(code, "subscribe to " + topic_);
    consumer_->close();
    throw ConfigError(e.what());
  }
}

Consumer::~Consumer() {
  close();
}

void Consumer::received(ReceivedMessage& msg, rd_kafka_message_t& message, std::uint64_t epoch) {
  auto handle = std::make_unique<Handle>(message);
  handle->consumer = weak_from_this();
  handle->partition = message.partition;
  handle->offset = message.offset;
  handle->epoch = epoch;
  handle->timestamp_ms = rd_kafka_message_timestamp(&message, nullptr);

  Incoming in = incoming(msg, record_value(message), handle->headers.judged());
  msg.headers_builder = &build_text_headers;
  handle->original_value = std::move(in.original_value);

  msg.queue = queue_;
  if (message.key != nullptr)
    msg.key.emplace(static_cast<const char*>(message.key), message.key_len);
  if (!msg.route.empty() && options_.on_schema_version_rejected) {
    try {
      options_.on_schema_version_rejected(in.rejected_version, queue_);
    } catch (const std::exception& e) {
      logger_.log(LogLevel::Warning,
                  std::string("kafka: on_schema_version_rejected threw: ") + e.what());
    } catch (...) {
      logger_.log(LogLevel::Warning, "kafka: on_schema_version_rejected threw");
    }
  }
  msg.handle = HandleRef(std::move(handle));
}

MessagePtr Consumer::poll(int timeout_ms) {
  return MessagePtr(rd_kafka_consumer_poll(consumer_->c_ptr(), timeout_ms));
}

Result<std::optional<ReceivedMessage>> Consumer::pop(std::chrono::milliseconds wait,
                                                     const std::function<void()>& between_slices) {
  std::lock_guard<std::mutex> pop(pop_mu_);
  if (closed()) return ClosedError("kafka: pop of " + spi::quoted(queue_) + ": closed");
  if (!stashed_.empty()) {
    MessagePtr message = std::move(stashed_.front());
    stashed_.pop_front();
    if (stashed_.empty()) set_paused(false);
    return take(std::move(message));
  }
  // A record fetched already is taken without reading the clock or arming a timed wait (the
  // common case while a backlog drains).
  if (MessagePtr message = poll(0)) return take(std::move(message));
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    if (closed()) return ClosedError("kafka: pop of " + spi::quoted(queue_) + ": closed");
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const auto slice = std::clamp(left, std::chrono::milliseconds::zero(), kPopSlice);
    MessagePtr message = poll(static_cast<int>(slice.count()));
    if (!message) {
      between_slices();
      if (slice < left) continue;
    }
    return take(std::move(message));
  }
}

void Consumer::serve() {
  std::unique_lock<std::mutex> pop(pop_mu_, std::try_to_lock);
  if (!pop.owns_lock() || stashed_.size() >= kMaxStashed || closed()) return;
  MessagePtr message = poll(0);
  if (!message || message->err != RD_KAFKA_RESP_ERR_NO_ERROR) return;  // errors come again
  stashed_.push_back(std::move(message));
  set_paused(true);
}

void Consumer::set_paused(bool paused) {
  std::vector<RdKafka::TopicPartition*> parts;
  if (consumer_->assignment(parts) == RdKafka::ERR_NO_ERROR && !parts.empty()) {
    if (paused) {
      consumer_->pause(parts);
    } else {
      consumer_->resume(parts);
    }
  }
  RdKafka::TopicPartition::destroy(parts);
}

std::size_t Consumer::outstanding() {
  std::lock_guard<std::mutex> lock(mu_);
  return tracker_.outstanding_total();
}

Result<std::optional<ReceivedMessage>> Consumer::take(MessagePtr message) {
  const RdKafka::ErrorCode err =
      message ? static_cast<RdKafka::ErrorCode>(message->err) : RdKafka::ERR__TIMED_OUT;
  switch (err) {
    case RdKafka::ERR_NO_ERROR:
      return take_record(*message);
    case RdKafka::ERR__TIMED_OUT:
    case RdKafka::ERR__PARTITION_EOF: {
      const Status committed = commit(false);
      if (!committed.ok()) note_commit_error(committed.error());
      return std::optional<ReceivedMessage>();
    }
    case RdKafka::ERR_UNKNOWN_TOPIC_OR_PART:
    case RdKafka::ERR__UNKNOWN_TOPIC:
      if (!unknown_topic_logged_) {
        unknown_topic_logged_ = true;
        logger_.log(LogLevel::Warning,
                    "kafka: topic " + spi::quoted(topic_) +
                        " does not exist (yet): " + rd_kafka_message_errstr(message.get()));
      }
      return std::optional<ReceivedMessage>();
    default: {
      std::string reason;
      RdKafka::ErrorCode code = err;
      if (code == RdKafka::ERR__FATAL) code = consumer_->fatal_error(reason);
      Error e = map_error(code, "consume " + topic_,
                          scrub(rd_kafka_message_errstr(message.get()), options_.sasl_password));
      if (err == RdKafka::ERR__FATAL) return ConfigError(e.what());
      return e;
    }
  }
}

Result<std::optional<ReceivedMessage>> Consumer::take_record(rd_kafka_message_t& message) {
  // One named result on every path, so it is built in the caller's place (NRVO): the message
  // is not moved on its way out.
  Result<std::optional<ReceivedMessage>> out(std::optional<ReceivedMessage>{});
  std::optional<std::uint64_t> epoch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    epoch = tracker_.hand_out(message.partition, message.offset);
  }
  if (epoch) received(out->emplace(), message, *epoch);
  return out;
}

Status Consumer::ack(const Handle& handle) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!tracker_.settle(handle.partition, handle.offset, handle.epoch)) {
      return Error(ErrorCode::StaleDelivery,
                   "kafka: ack of " + topic_ + "[" + std::to_string(handle.partition) + "]@" +
                       std::to_string(handle.offset) +
                       ": the partition was revoked or rewound since; it is delivered again");
    }
  }
  settled_.notify_all();
  if (acks_.add(handle.offset)) return commit(false);
  return {};
}

Status Consumer::rewind(const Handle& handle) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!tracker_.rewind(handle.partition, handle.offset)) return {};
  }
  settled_.notify_all();
  const std::unique_ptr<RdKafka::TopicPartition> position(
      RdKafka::TopicPartition::create(topic_, handle.partition, handle.offset));
  const RdKafka::ErrorCode code = consumer_->seek(*position, kSeekTimeoutMs);
  if (code == RdKafka::ERR_NO_ERROR || code == RdKafka::ERR__STATE) return {};
  return map_error(code, "rewind " + topic_ + "[" + std::to_string(handle.partition) + "]");
}

Status Consumer::commit(bool sync) {
  std::lock_guard<std::mutex> serial(commit_mu_);
  (void)acks_.take();
  std::vector<std::pair<std::int32_t, std::int64_t>> positions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    positions = tracker_.uncommitted();
    for (const auto& [partition, position] : positions)
      tracker_.committed(partition, position);
    // A synchronous commit with nothing new re-sends the last positions when an asynchronous
    // commit may still be on its way: the coordinator handles one connection's requests in
    // order, so when this one returns, the earlier ones are stored too (flush() and stats()
    // after it see them).
    if (sync && positions.empty() && async_unconfirmed_) positions = tracker_.last_commits();
  }
  if (positions.empty()) return {};
  OwnedPartitions offsets;
  for (const auto& [partition, position] : positions) {
    offsets.list.push_back(RdKafka::TopicPartition::create(topic_, partition, position));
  }
  RdKafka::ErrorCode code =
      sync ? consumer_->commitSync(offsets.list) : consumer_->commitAsync(offsets.list);
  if (sync && code == RdKafka::ERR_NO_ERROR) {
    for (const RdKafka::TopicPartition* tp : offsets.list) {
      if (tp->err() != RdKafka::ERR_NO_ERROR) code = tp->err();
    }
  }
  if (code == RdKafka::ERR_NO_ERROR) {
    std::lock_guard<std::mutex> lock(mu_);
    async_unconfirmed_ = !sync;
    return {};
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [partition, position] : positions)
      tracker_.uncommit(partition);
  }
  return map_error(code, "commit " + topic_);
}

void Consumer::note_commit_error(const Error& error) {
  logger_.log(LogLevel::Warning, error.what());
  std::lock_guard<std::mutex> lock(error_mu_);
  if (!commit_error_) commit_error_ = spi::unshared(error);
}

void Consumer::offset_commit_cb(RdKafka::ErrorCode err, Partitions& offsets) {
  if (err == RdKafka::ERR_NO_ERROR || err == RdKafka::ERR__NO_OFFSET ||
      err == RdKafka::ERR__DESTROY) {
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const RdKafka::TopicPartition* tp : offsets)
      tracker_.uncommit(tp->partition());
  }
  note_commit_error(map_error(err, "commit " + topic_));
}

Status Consumer::flush() {
  Status status = commit(true);
  std::lock_guard<std::mutex> lock(error_mu_);
  if (status.ok() && commit_error_) status = spi::unshared(*commit_error_);
  commit_error_.reset();
  return status;
}

void Consumer::revoke(const Partitions& partitions) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    const auto outstanding = [&] {
      std::size_t n = 0;
      for (const RdKafka::TopicPartition* tp : partitions)
        n += tracker_.outstanding(tp->partition());
      return n;
    };
    // close() wakes this wait: the records still held are redelivered to the next owner.
    settled_.wait_for(lock, options_.revoke_grace, [&] { return closing_ || outstanding() == 0; });
  }
  const Status committed = commit(true);
  if (!committed.ok()) note_commit_error(committed.error());
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const RdKafka::TopicPartition* tp : partitions)
      tracker_.revoke(tp->partition());
  }
  consumer_->unassign();
}

void Consumer::rebalance_cb(RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode err,
                            Partitions& partitions) {
  if (err == RdKafka::ERR__ASSIGN_PARTITIONS) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const RdKafka::TopicPartition* tp : partitions)
        tracker_.assign(tp->partition());
    }
    consumer->assign(partitions);
    return;
  }
  if (err != RdKafka::ERR__REVOKE_PARTITIONS) {
    logger_.log(LogLevel::Warning, "kafka: rebalance of " + topic_ + ": " + RdKafka::err2str(err));
  }
  revoke(partitions);
}

void Consumer::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_) return;
    closing_ = true;
  }
  settled_.notify_all();  // a revoke waiting for acks inside a pop's consume()
  // A pop (or serve) in consume() returns within one slice; the client is closed after it, and
  // pops that come later see closing_ and fail.
  std::lock_guard<std::mutex> pop(pop_mu_);
  const Status committed = commit(true);
  if (!committed.ok()) note_commit_error(committed.error());
  consumer_->close();
}

bool Consumer::closed() {
  return closing_.load(std::memory_order_acquire);
}

}  // namespace babelqueue::kafka::detail
