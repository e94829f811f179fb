// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// The bounds of the transport options (SQS-2, D-11), shared by parse_url and the check the
// transport constructor runs on the Options it is given. Defined in url.cpp.

#include <babelqueue/sqs/transport.hpp>

#include <cstdint>
#include <string>

namespace babelqueue::sqs::detail {

inline constexpr int kMaxWaitSeconds = 20;
inline constexpr int kMaxVisibilitySeconds = 43'200;
inline constexpr int kMaxBatch = 10;
inline constexpr int kMaxDelaySeconds = 900;
inline constexpr std::int64_t kMaxMilliseconds = 86'400'000;

/// The signing region: `options.region`, else AWS_REGION, else AWS_DEFAULT_REGION.
/// @throws ConfigError naming the three places when none has one.
[[nodiscard]] std::string resolve_region(const Options& options);

/// `options` with the region and the endpoint filled in, checked: wait_time_seconds (0..20),
/// visibility_timeout (0..43200), prefetch and ack_batch (1..10), the durations (>= 0,
/// request_timeout > 0), endpoint and queue_url_prefix (http(s) URLs), the group id.
/// @throws ConfigError starting "sqs options: " naming the first bad member; never a secret.
[[nodiscard]] Options validated(Options options);

/// True for a valid SQS queue name (SQS-14): 1..80 of [A-Za-z0-9_-], the ".fifo" ending
/// included when present.
[[nodiscard]] bool valid_queue_name(std::string_view name) noexcept;

}  // namespace babelqueue::sqs::detail
