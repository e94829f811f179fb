// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace babelqueue::kafka::test {

// A record header: a name and a value that may be null (Kafka allows both null and empty).
using RawHeader = std::pair<std::string, std::optional<std::string>>;

// One record as the broker stores it.
struct RawRecord {
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::optional<std::string> key;
  std::string value;
  std::vector<RawHeader> headers;
  std::int64_t timestamp_ms = 0;
};

// A plain librdkafka client for tests, independent of babelqueue::kafka: it writes and reads
// records, topics and committed offsets directly, to set up a test and check what a transport
// left on the broker. One idempotent producer (acks=all) is created with the object; every other
// call makes a short-lived client of its own. Every call throws std::runtime_error on an error
// or at its deadline.
//
// Thread-safety: not thread-safe; use one object from one thread.
class RawKafka {
 public:
  // Throws std::runtime_error when the producer cannot be created (no connection is made yet).
  explicit RawKafka(std::string bootstrap);
  ~RawKafka();
  RawKafka(const RawKafka&) = delete;
  RawKafka& operator=(const RawKafka&) = delete;
  RawKafka(RawKafka&&) = delete;
  RawKafka& operator=(RawKafka&&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }

  // Creates `topic` with `partitions` partitions (replication factor 1) through the admin API
  // and waits until its metadata shows them; an existing topic is fine (left as it is).
  void create_topic(const std::string& topic, int partitions);
  // Produces one record (partition -1: the partitioner picks one) and waits for its delivery
  // report.
  void produce(const std::string& topic, std::optional<std::string> key, std::string value,
               std::vector<RawHeader> headers = {}, std::int32_t partition = -1);
  // Every record of every partition of `topic`, from the start up to the end offsets read at
  // the call (assigned, no consumer group), in partition then offset order. Throws when they are
  // not all read within `timeout`.
  std::vector<RawRecord> read_all(const std::string& topic, std::chrono::milliseconds timeout);
  // The offset `group` committed for the partition, -1 when none. Waits up to `timeout` for
  // the group coordinator.
  std::int64_t committed(const std::string& group, const std::string& topic, std::int32_t partition,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // The partition's high watermark: the offset the next record gets.
  std::int64_t end_offset(const std::string& topic, std::int32_t partition);
  // The number of partitions of `topic` in the broker's metadata, 0 when it does not exist.
  int partition_count(const std::string& topic);
  // The cluster id the broker reports (a metadata request).
  std::string cluster_id(std::chrono::milliseconds timeout);

 private:
  struct Producer;

  std::string bootstrap_;
  std::unique_ptr<Producer> producer_;
};

}  // namespace babelqueue::kafka::test
