// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Each record carries a heap-held reference to its send's Batch as its opaque, released by its
// delivery report, so a send that timed out leaves nothing dangling. message.timeout.ms equals
// publish_timeout, and the destructor purges, so every record gets its report.

#include "producer.hpp"

#include <condition_variable>
#include <mutex>
#include <optional>

#include "options.hpp"

namespace babelqueue::kafka::detail {

struct Producer::Batch {
  std::mutex mu;
  std::condition_variable done;
  std::size_t remaining = 0;
  std::optional<Error> error;

  void report(std::optional<Error> e) {
    std::lock_guard<std::mutex> lock(mu);
    if (e && !error) error = std::move(e);
    --remaining;
    if (remaining == 0) done.notify_all();
  }
};

namespace {
constexpr int kPollMs = 50;
constexpr std::chrono::milliseconds kQueueFullWait{5};
}  // namespace

Producer::Producer(const Options& options, EventLogger& logger)
    : timeout_(options.publish_timeout), secret_(options.sasl_password) {
  const std::unique_ptr<RdKafka::Conf> conf =
      producer_conf(options, Callbacks{.event = &logger, .delivery = this});
  std::string err;
  producer_.reset(RdKafka::Producer::create(conf.get(), err));
  if (!producer_) throw ConfigError("kafka: cannot create the producer: " + scrub(err, secret_));
  poller_ = std::thread([this] {
    while (!stop_.load(std::memory_order_acquire))
      producer_->poll(kPollMs);
  });
}

Producer::~Producer() {
  producer_->flush(static_cast<int>(timeout_.count()));
  producer_->purge(RdKafka::Producer::PURGE_QUEUE | RdKafka::Producer::PURGE_INFLIGHT);
  stop_.store(true, std::memory_order_release);
  poller_.join();
  producer_->poll(0);
}

void Producer::dr_cb(RdKafka::Message& message) {
  const std::unique_ptr<std::shared_ptr<Batch>> batch(
      static_cast<std::shared_ptr<Batch>*>(message.msg_opaque()));
  if (!batch) return;
  std::optional<Error> error;
  if (message.err() != RdKafka::ERR_NO_ERROR) {
    error = map_error(message.err(), "publish to " + message.topic_name(),
                      scrub(message.errstr(), secret_));
  }
  (*batch)->report(std::move(error));
}

Status Producer::produce(const OutgoingRecord& record, const std::shared_ptr<Batch>& batch,
                         std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    RdKafka::Headers* headers = RdKafka::Headers::create();
    for (const RecordHeader& h : record.headers) {
      headers->add(h.name, h.value ? h.value->data() : nullptr, h.value ? h.value->size() : 0);
    }
    auto opaque = std::make_unique<std::shared_ptr<Batch>>(batch);
    // The key's pointer is what tells null (nullptr) from empty (a non-null pointer, length 0).
    const void* key = record.key ? static_cast<const void*>(record.key->data()) : nullptr;
    const RdKafka::ErrorCode code = producer_->produce(
        record.topic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
        const_cast<char*>(record.value.data()), record.value.size(), key,
        record.key ? record.key->size() : 0, record.timestamp_ms, headers, opaque.get());
    if (code == RdKafka::ERR_NO_ERROR) {
      opaque.release();
      return {};
    }
    delete headers;
    if (code != RdKafka::ERR__QUEUE_FULL || std::chrono::steady_clock::now() >= deadline) {
      return map_error(code, "publish to " + record.topic);
    }
    producer_->poll(static_cast<int>(kQueueFullWait.count()));
  }
}

Status Producer::send(std::vector<OutgoingRecord> records) {
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  const auto batch = std::make_shared<Batch>();
  batch->remaining = records.size();
  Status status;
  std::size_t produced = 0;
  for (const OutgoingRecord& record : records) {
    status = produce(record, batch, deadline);
    if (!status.ok()) break;
    ++produced;
  }
  std::unique_lock<std::mutex> lock(batch->mu);
  batch->remaining -= records.size() - produced;
  if (!batch->done.wait_until(lock, deadline, [&] { return batch->remaining == 0; })) {
    if (!status.ok()) return status;
    return TimeoutError("kafka: publish: no delivery report within publish_timeout (" +
                        std::to_string(timeout_.count()) + " ms)");
  }
  if (!status.ok()) return status;
  if (batch->error) return *batch->error;
  return {};
}

}  // namespace babelqueue::kafka::detail
