// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/kafka/transport.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace RdKafka {
class Conf;
class EventCb;
class DeliveryReportCb;
class RebalanceCb;
class OffsetCommitCb;
}  // namespace RdKafka

namespace babelqueue::kafka::detail {

inline constexpr std::int64_t kMaxMilliseconds = 86'400'000;
inline constexpr std::int64_t kMaxCommitBatch = 100'000;
inline constexpr std::int64_t kMaxPartitions = 100'000;
inline constexpr std::int64_t kMaxReplicationFactor = 100;

/// @throws ConfigError starting "kafka options: ".
void validate(const Options& options);

[[nodiscard]] std::string_view assignor_name(Assignor assignor) noexcept;

/// `text` with every occurrence of `secret` replaced by `***` (nothing when `secret` is empty).
[[nodiscard]] std::string scrub(std::string_view text, std::string_view secret);

/// The callbacks a client configuration carries; null ones are left unset.
struct Callbacks {
  RdKafka::EventCb* event = nullptr;
  RdKafka::DeliveryReportCb* delivery = nullptr;
  RdKafka::RebalanceCb* rebalance = nullptr;
  RdKafka::OffsetCommitCb* commit = nullptr;
};

/// The producer's configuration (KFK-3): transport defaults, then `properties`, then
/// `producer_properties`. @throws ConfigError naming a property librdkafka refuses.
std::unique_ptr<RdKafka::Conf> producer_conf(const Options& options, const Callbacks& callbacks);

/// A consumer's configuration (KFK-6) for `group_id`: defaults, `properties`,
/// `consumer_properties`, then the commit protocol's fixed settings. @throws ConfigError.
std::unique_ptr<RdKafka::Conf> consumer_conf(const Options& options, const std::string& group_id,
                                             const Callbacks& callbacks);

}  // namespace babelqueue::kafka::detail
