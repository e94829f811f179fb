// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/kafka/transport.hpp>

#include <librdkafka/rdkafkacpp.h>

#include <string>
#include <vector>

#include "client.hpp"

namespace babelqueue::kafka::detail {

/// Creates `topics` with Options::partitions and replication_factor through the admin API on
/// `client` (an existing topic is fine), bounded by publish_timeout.
Status create_topics(RdKafka::Handle& client, const std::vector<std::string>& topics,
                     const Options& options);

/// Inspector::stats of `topic` and its dead-letter topic `dlq` for Options::group_id.
Result<QueueStats> topic_stats(const Options& options, EventLogger& logger,
                               const std::string& topic, const std::string& dlq);

/// Inspector::peek: up to `max` (0 = all) records of `topic`, read from each partition's start
/// by a consumer outside every group, committing nothing.
Result<std::vector<PeekedMessage>> peek_topic(const Options& options, EventLogger& logger,
                                              const std::string& topic, std::size_t max);

}  // namespace babelqueue::kafka::detail
