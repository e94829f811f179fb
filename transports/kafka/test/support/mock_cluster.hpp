// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct rd_kafka_s;
struct rd_kafka_mock_cluster_s;

namespace babelqueue::kafka::testing {

/// librdkafka's in-process mock cluster (rdkafka_mock.h) for tests: brokers on 127.0.0.1 ports
/// it picks, alive as long as this object.
///
/// Thread-safety: the mock's own calls are thread-safe; construct and destroy on one thread.
class MockCluster {
 public:
  /// Starts `brokers` mock brokers (ids 1..brokers). @throws std::runtime_error.
  explicit MockCluster(int brokers = 1);
  ~MockCluster();
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  /// `host:port,...` for bootstrap.servers.
  [[nodiscard]] std::string bootstrap_servers() const;
  /// `kafka://<bootstrap servers>` followed by `query` (e.g. "?group_id=g").
  [[nodiscard]] std::string url(const std::string& query = {}) const;
  /// Creates `topic` with `partitions` partitions (replication factor 1).
  void create_topic(const std::string& topic, int partitions);
  /// The next requests of Kafka API `api_key` (0 = Produce, 8 = OffsetCommit, ...) fail with
  /// `errors`, one each, in order.
  void push_request_errors(std::int16_t api_key, const std::vector<int>& errors);
  /// Drops the errors still queued for `api_key`.
  void clear_request_errors(std::int16_t api_key);
  void set_broker_down(std::int32_t broker);
  void set_broker_up(std::int32_t broker);
  void set_partition_leader(const std::string& topic, std::int32_t partition, std::int32_t broker);

 private:
  rd_kafka_s* handle_ = nullptr;
  rd_kafka_mock_cluster_s* cluster_ = nullptr;
};

}  // namespace babelqueue::kafka::testing
