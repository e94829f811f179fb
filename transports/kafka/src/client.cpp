// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors

#include "client.hpp"

#include "options.hpp"

namespace babelqueue::kafka::detail {

bool is_permanent(RdKafka::ErrorCode code) noexcept {
  switch (code) {
    case RdKafka::ERR__FATAL:
    case RdKafka::ERR__AUTHENTICATION:
    case RdKafka::ERR__SSL:
    case RdKafka::ERR__INVALID_ARG:
    case RdKafka::ERR__UNSUPPORTED_FEATURE:
    case RdKafka::ERR_SASL_AUTHENTICATION_FAILED:
    case RdKafka::ERR_UNSUPPORTED_SASL_MECHANISM:
    case RdKafka::ERR_ILLEGAL_SASL_STATE:
    case RdKafka::ERR_TOPIC_AUTHORIZATION_FAILED:
    case RdKafka::ERR_GROUP_AUTHORIZATION_FAILED:
    case RdKafka::ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RdKafka::ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
    case RdKafka::ERR_INVALID_CONFIG:
    case RdKafka::ERR_INVALID_GROUP_ID:
    case RdKafka::ERR_TOPIC_EXCEPTION:
    case RdKafka::ERR_MSG_SIZE_TOO_LARGE:
      return true;
    default:
      return false;
  }
}

Error map_error(RdKafka::ErrorCode code, std::string_view what, std::string_view reason) {
  std::string text = "kafka: " + std::string(what) + ": " + RdKafka::err2str(code);
  if (!reason.empty() && reason != RdKafka::err2str(code)) {
    text += " (";
    text += reason;
    text += ")";
  }
  if (is_permanent(code)) return ConfigError(text);
  if (code == RdKafka::ERR__TIMED_OUT || code == RdKafka::ERR__MSG_TIMED_OUT ||
      code == RdKafka::ERR_REQUEST_TIMED_OUT) {
    return TimeoutError(text);
  }
  return TransportError(text);
}

void MessageDestroy::operator()(rd_kafka_message_t* message) const noexcept {
  rd_kafka_message_destroy(message);
}

WireHeaders::WireHeaders(rd_kafka_message_t& message) {
  // The C API detaches the list librdkafka parsed (no copy); the C++ Headers would copy each one.
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_detach_headers(&message, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR)
    list_.reset(headers);
}

std::optional<std::string_view> WireHeaders::first(const char* name) const noexcept {
  const void* value = nullptr;
  std::size_t size = 0;
  if (!list_ ||
      rd_kafka_header_get(list_.get(), 0, name, &value, &size) != RD_KAFKA_RESP_ERR_NO_ERROR ||
      value == nullptr) {
    return std::nullopt;
  }
  return std::string_view(static_cast<const char*>(value), size);
}

std::vector<HeaderView> WireHeaders::views() const {
  std::vector<HeaderView> out;
  if (!list_) return out;
  out.reserve(rd_kafka_header_cnt(list_.get()));
  const char* name = nullptr;
  const void* value = nullptr;
  std::size_t size = 0;
  for (std::size_t i = 0;
       rd_kafka_header_get_all(list_.get(), i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
       ++i) {
    HeaderView view{.name = name, .value = std::nullopt};
    if (value != nullptr) view.value.emplace(static_cast<const char*>(value), size);
    out.push_back(view);
  }
  return out;
}

void WireHeaders::Destroy::operator()(rd_kafka_headers_t* headers) const noexcept {
  rd_kafka_headers_destroy(headers);
}

std::string record_value(const rd_kafka_message_t& message) {
  if (message.payload == nullptr) return {};
  return {static_cast<const char*>(message.payload), message.len};
}

void EventLogger::log(LogLevel level, std::string_view text) const {
  log_to(logger_, level, scrub(text, secret_));
}

void EventLogger::event_cb(RdKafka::Event& event) {
  switch (event.type()) {
    case RdKafka::Event::EVENT_ERROR:
      log(event.fatal() ? LogLevel::Error : LogLevel::Warning,
          "kafka: " + RdKafka::err2str(event.err()) + ": " + event.str());
      break;
    case RdKafka::Event::EVENT_LOG: {
      const int severity = static_cast<int>(event.severity());
      const LogLevel level = severity <= RdKafka::Event::EVENT_SEVERITY_ERROR ? LogLevel::Error
                             : severity == RdKafka::Event::EVENT_SEVERITY_WARNING
                                 ? LogLevel::Warning
                             : severity == RdKafka::Event::EVENT_SEVERITY_DEBUG ? LogLevel::Debug
                                                                                : LogLevel::Info;
      log(level, "kafka: " + event.fac() + ": " + event.str());
      break;
    }
    default:
      break;
  }
}

}  // namespace babelqueue::kafka::detail
