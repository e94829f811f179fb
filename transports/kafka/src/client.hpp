// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/log.hpp>

#include <librdkafka/rdkafkacpp.h>

#include <string>
#include <string_view>

#include "records.hpp"

namespace babelqueue::kafka::detail {

/// KFK-19 / OB-10: the error for librdkafka's `code` while doing `what`; `reason` is
/// librdkafka's text (scrubbed of the password by the caller).
[[nodiscard]] Error map_error(RdKafka::ErrorCode code, std::string_view what,
                              std::string_view reason = {});

/// True for the codes that mean the configuration or the credentials cannot work (ConfigError).
[[nodiscard]] bool is_permanent(RdKafka::ErrorCode code) noexcept;

/// The header list of a consumed record as on the wire.
[[nodiscard]] RecordHeaders record_headers(RdKafka::Message& message);
/// The value bytes of a consumed record (a null value is empty).
[[nodiscard]] std::string record_value(const RdKafka::Message& message);

/// Routes librdkafka's log lines and error events to a Logger (levels by syslog severity),
/// without the password.
///
/// Thread-safety: called by librdkafka's threads; holds only immutable state.
class EventLogger final : public RdKafka::EventCb {
 public:
  EventLogger(Logger logger, std::string secret)
      : logger_(std::move(logger)), secret_(std::move(secret)) {}
  void event_cb(RdKafka::Event& event) override;
  void log(LogLevel level, std::string_view text) const;

 private:
  Logger logger_;
  std::string secret_;
};

}  // namespace babelqueue::kafka::detail
