// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/kafka/transport.hpp>

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "client.hpp"
#include "records.hpp"

namespace babelqueue::kafka::detail {

/// The transport's one producer (KFK-3, KFK-4): every send waits for the delivery reports of
/// its own records, which one background thread serves.
///
/// Thread-safety: `send` is safe from any thread; the destructor flushes (bounded by
/// publish_timeout), purges what is left and joins the thread.
class Producer final : public RdKafka::DeliveryReportCb {
 public:
  /// @throws ConfigError when librdkafka refuses to create the client.
  Producer(const Options& options, EventLogger& logger);
  ~Producer() override;
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  /// Produces every record, then waits for all their reports; the first error.
  Status send(std::vector<OutgoingRecord> records);
  void dr_cb(RdKafka::Message& message) override;
  [[nodiscard]] RdKafka::Producer& handle() noexcept { return *producer_; }

 private:
  struct Batch;
  Status produce(const OutgoingRecord& record, const std::shared_ptr<Batch>& batch,
                 std::chrono::steady_clock::time_point deadline);

  std::chrono::milliseconds timeout_;
  std::string secret_;
  std::unique_ptr<RdKafka::Producer> producer_;
  std::atomic<bool> stop_{false};
  std::thread poller_;
};

}  // namespace babelqueue::kafka::detail
