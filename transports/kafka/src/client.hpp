// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/log.hpp>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafkacpp.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records.hpp"

namespace babelqueue::kafka::detail {

/// KFK-19 / OB-10: the error for librdkafka's `code` while doing `what`; `reason` is
/// librdkafka's text (scrubbed of the password by the caller).
[[nodiscard]] Error map_error(RdKafka::ErrorCode code, std::string_view what,
                              std::string_view reason = {});

/// True for the codes that mean the configuration or the credentials cannot work (ConfigError).
[[nodiscard]] bool is_permanent(RdKafka::ErrorCode code) noexcept;

/// Destroys a message the C API's consumer poll returned.
struct MessageDestroy {
  void operator()(rd_kafka_message_t* message) const noexcept;
};
/// A consumed message, through the C API: the C++ `consume()` allocates a wrapper per record.
using MessagePtr = std::unique_ptr<rd_kafka_message_t, MessageDestroy>;

/// The header list of a consumed record as on the wire (order, duplicates and null values),
/// taken from the message (so it outlives it: a restore writes it back) and read in place.
///
/// Thread-safety: const members from any thread.
class WireHeaders {
 public:
  WireHeaders() = default;
  /// Takes `message`'s headers (librdkafka parses them on first access); none when it has none.
  explicit WireHeaders(rd_kafka_message_t& message);
  /// Takes `list` (may be null: none).
  explicit WireHeaders(rd_kafka_headers_t* list) noexcept : list_(list) {}

  /// The value of the first header named `name` (NUL-terminated); nullopt when absent or null.
  /// Walks the list: the pop reads two headers this way (KFK-9, KFK-10) without building views.
  [[nodiscard]] std::optional<std::string_view> first(const char* name) const noexcept;
  /// The two headers a consumed record is judged by, read with `first`.
  [[nodiscard]] JudgedHeaders judged() const noexcept {
    return {.schema_version = first("bq-schema-version"), .attempts = first("bq-attempts")};
  }
  /// Every header, in order, read in place (valid while this list lives).
  [[nodiscard]] std::vector<HeaderView> views() const;

 private:
  struct Destroy {
    void operator()(rd_kafka_headers_t* headers) const noexcept;
  };
  std::unique_ptr<rd_kafka_headers_t, Destroy> list_;
};
/// The value bytes of a consumed record (a null value is empty).
[[nodiscard]] std::string record_value(const rd_kafka_message_t& message);

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
