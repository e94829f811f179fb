// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/binding.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/errors.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <limits>
#include <system_error>
#include <type_traits>

namespace babelqueue::binding {

namespace {

constexpr bool is_ascii_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool usable_rider(const std::string& key, const std::string& value) noexcept {
  return !key.empty() && !value.empty();
}

Contract contract_from(const Envelope& env) {
  const Meta meta = env.meta();
  Contract c;
  c.urn = std::string(env.urn());
  c.trace_id = std::string(env.trace_id());
  c.message_id = std::string(meta.id);
  c.source_lang = std::string(meta.lang);
  c.schema_version = meta.schema_version;
  c.created_at = meta.created_at;
  c.attempts = env.attempts();
  return c;
}

RabbitmqFieldValue integer_field(std::int64_t n) {
  if (n >= std::numeric_limits<std::int32_t>::min() &&
      n <= std::numeric_limits<std::int32_t>::max()) {
    return RabbitmqFieldValue(std::in_place_type<std::int32_t>, static_cast<std::int32_t>(n));
  }
  return RabbitmqFieldValue(std::in_place_type<std::int64_t>, n);
}

template <class Float>
std::string shortest(Float f) {
  std::array<char, 64> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), f);
  return std::string(buf.data(), res.ptr);
}

// Route text of a float: shortest round-trip form with at least one fractional digit (ASB-9).
template <class Float>
std::string float_route_text(Float f) {
  std::string s = shortest(f);
  if (s.find_first_of(".na") != std::string::npos) return s;  // has a fraction, or inf / nan
  const auto e = s.find('e');
  s.insert(e == std::string::npos ? s.size() : e, ".0");
  return s;
}

std::string lower_hex(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char ch : bytes) {
    const auto b = static_cast<unsigned char>(ch);
    out.push_back(digits[b >> 4U]);
    out.push_back(digits[b & 0x0FU]);
  }
  return out;
}

template <class T>
constexpr bool is_amqp_integral_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The text a typed value contributes to a route and to the rejection hook.
std::string typed_text(const AmqpValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "<null>";
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (is_amqp_integral_v<T> && std::is_signed_v<T>) {
          return std::to_string(static_cast<std::int64_t>(v));
        } else if constexpr (is_amqp_integral_v<T>) {
          return std::to_string(static_cast<std::uint64_t>(v));
        } else if constexpr (std::is_floating_point_v<T>) {
          return float_route_text(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<T, AmqpBinary>) {
          return lower_hex(v.bytes);
        } else {
          static_assert(std::is_same_v<T, AmqpOther>);
          return "<" + v.type_name + ">";
        }
      },
      value);
}

GateDecision reject(std::string version) {
  GateDecision d;
  d.reject = true;
  d.route = unsupported_route(version);
  d.version = std::move(version);
  return d;
}

// Strict UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool valid_utf8(std::string_view s) noexcept {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80U) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80U;
    unsigned char hi = 0xBFU;
    if (b0 >= 0xC2U && b0 <= 0xDFU) {
      len = 2;
    } else if (b0 >= 0xE0U && b0 <= 0xEFU) {
      len = 3;
      if (b0 == 0xE0U) lo = 0xA0U;
      if (b0 == 0xEDU) hi = 0x9FU;
    } else if (b0 >= 0xF0U && b0 <= 0xF4U) {
      len = 4;
      if (b0 == 0xF0U) lo = 0x90U;
      if (b0 == 0xF4U) hi = 0x8FU;
    } else {
      return false;
    }
    if (n - i < len) return false;
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    if (b1 < lo || b1 > hi) return false;
    for (std::size_t k = 2; k < len; ++k) {
      const auto bk = static_cast<unsigned char>(s[i + k]);
      if (bk < 0x80U || bk > 0xBFU) return false;
    }
    i += len;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Contract values
// ---------------------------------------------------------------------------------------------

std::optional<Contract> contract_of(std::string_view body) {
  auto decoded = try_decode(body);
  if (!decoded.has_value()) return std::nullopt;
  return contract_from(decoded.value());
}

// ---------------------------------------------------------------------------------------------
// RabbitMQ
// ---------------------------------------------------------------------------------------------

char field_tag(const RabbitmqFieldValue& value) noexcept {
  switch (value.index()) {
    case 0:
      return 'I';
    case 1:
      return 'l';
    default:
      return 'S';
  }
}

RabbitmqProjection rabbitmq_projection(std::string_view body, const Riders& riders) {
  RabbitmqProjection out;
  for (const auto& [key, value] : riders) {
    if (!usable_rider(key, value)) continue;
    if (key.size() > RABBITMQ_SHORT_STRING_MAX) {
      out.omitted.push_back(Omitted{key, key.size()});
      continue;
    }
    out.headers.insert_or_assign(key, RabbitmqFieldValue(std::in_place_type<std::string>, value));
  }

  const std::optional<Contract> c = contract_of(body);
  if (!c) return out;

  const auto short_property = [&out](std::optional<std::string>& slot, std::string_view name,
                                     const std::string& value) {
    if (value.empty()) return;
    if (value.size() > RABBITMQ_SHORT_STRING_MAX) {
      out.omitted.push_back(Omitted{std::string(name), value.size()});
      return;
    }
    slot = value;
  };
  short_property(out.properties.type, "type", c->urn);
  short_property(out.properties.correlation_id, "correlation_id", c->trace_id);
  short_property(out.properties.message_id, "message_id", c->message_id);

  out.headers.insert_or_assign("x-attempts", integer_field(c->attempts));
  if (c->schema_version != 0) {
    out.headers.insert_or_assign("x-schema-version", integer_field(c->schema_version));
  }
  if (!c->source_lang.empty()) {
    out.headers.insert_or_assign(
        "x-source-lang", RabbitmqFieldValue(std::in_place_type<std::string>, c->source_lang));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// SQS
// ---------------------------------------------------------------------------------------------

SqsProjection sqs_projection(std::string_view body, const Riders& riders) {
  SqsProjection out;
  auto& attrs = out.attributes;
  if (const std::optional<Contract> c = contract_of(body)) {
    const auto add = [&attrs](std::string name, std::string type, std::string value) {
      attrs.push_back(SqsAttribute{std::move(name), std::move(type), std::move(value)});
    };
    if (!c->urn.empty()) add("bq-job", "String", c->urn);
    if (!c->trace_id.empty()) add("bq-trace-id", "String", c->trace_id);
    if (!c->message_id.empty()) add("bq-message-id", "String", c->message_id);
    if (c->schema_version != 0) {
      add("bq-schema-version", "Number", std::to_string(c->schema_version));
    }
    if (!c->source_lang.empty()) add("bq-source-lang", "String", c->source_lang);
    if (c->created_at != 0) add("bq-created-at", "Number", std::to_string(c->created_at));
  }
  for (const auto& [key, value] : riders) {  // std::map: sorted key order
    if (!usable_rider(key, value)) continue;
    const std::string& name = key;  // clang 14 cannot capture a structured binding
    const bool present = std::any_of(attrs.begin(), attrs.end(),
                                     [&name](const SqsAttribute& a) { return a.name == name; });
    if (present) continue;
    if (attrs.size() >= SQS_MAX_ATTRIBUTES) {
      out.dropped_riders.push_back(key);
      continue;
    }
    attrs.push_back(SqsAttribute{key, "String", value});
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// AMQP 1.0 values
// ---------------------------------------------------------------------------------------------

std::optional<std::string> header_text(const AmqpValue& value) {
  return std::visit(
      [](const auto& v) -> std::optional<std::string> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return std::string(v ? "true" : "false");
        } else if constexpr (is_amqp_integral_v<T> && std::is_signed_v<T>) {
          return std::to_string(static_cast<std::int64_t>(v));
        } else if constexpr (is_amqp_integral_v<T>) {
          return std::to_string(static_cast<std::uint64_t>(v));
        } else if constexpr (std::is_floating_point_v<T>) {
          return shortest(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else {
          return std::nullopt;  // null, binary, other types
        }
      },
      value);
}

// ---------------------------------------------------------------------------------------------
// Azure Service Bus
// ---------------------------------------------------------------------------------------------

AsbProjection asb_projection(std::string_view body, const Riders& riders) {
  AsbProjection out;
  auto& props = out.application_properties;
  if (const std::optional<Contract> c = contract_of(body)) {
    if (!c->message_id.empty()) out.message_id = c->message_id;
    if (!c->trace_id.empty()) out.correlation_id = c->trace_id;
    if (!c->urn.empty()) out.subject = c->urn;
    if (c->schema_version != 0) {
      props.insert_or_assign("bq-schema-version",
                             AmqpValue(std::in_place_type<std::int64_t>, c->schema_version));
    }
    if (!c->source_lang.empty()) {
      props.insert_or_assign("bq-source-lang",
                             AmqpValue(std::in_place_type<std::string>, c->source_lang));
    }
    if (c->created_at != 0) {
      props.insert_or_assign("bq-created-at",
                             AmqpValue(std::in_place_type<std::int64_t>, c->created_at));
    }
  }
  for (const auto& [key, value] : riders) {
    if (!usable_rider(key, value)) continue;
    props.try_emplace(key, std::in_place_type<std::string>, value);  // contract wins
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Pulsar
// ---------------------------------------------------------------------------------------------

std::map<std::string, std::string> pulsar_properties(std::string_view body, const Riders& riders) {
  std::map<std::string, std::string> out;
  if (const std::optional<Contract> c = contract_of(body)) {
    if (!c->urn.empty()) out.insert_or_assign("bq-job", c->urn);
    if (!c->trace_id.empty()) out.insert_or_assign("bq-trace-id", c->trace_id);
    if (!c->message_id.empty()) out.insert_or_assign("bq-message-id", c->message_id);
    if (c->schema_version != 0) {
      out.insert_or_assign("bq-schema-version", std::to_string(c->schema_version));
    }
    if (!c->source_lang.empty()) out.insert_or_assign("bq-source-lang", c->source_lang);
    out.insert_or_assign("bq-attempts", std::to_string(c->attempts));
  }
  for (const auto& [key, value] : riders) {
    if (!usable_rider(key, value)) continue;
    out.try_emplace(key, value);  // contract wins
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Kafka
// ---------------------------------------------------------------------------------------------

KafkaProjection kafka_projection(std::string_view body, const Riders& riders) {
  KafkaProjection out;
  auto& headers = out.headers;
  if (const std::optional<Contract> c = contract_of(body)) {
    if (!c->urn.empty()) headers.emplace_back("bq-job", c->urn);
    if (!c->trace_id.empty()) headers.emplace_back("bq-trace-id", c->trace_id);
    if (!c->message_id.empty()) headers.emplace_back("bq-message-id", c->message_id);
    if (c->schema_version != 0) {
      headers.emplace_back("bq-schema-version", std::to_string(c->schema_version));
    }
    if (!c->source_lang.empty()) headers.emplace_back("bq-source-lang", c->source_lang);
    headers.emplace_back("bq-attempts", std::to_string(c->attempts));
    out.timestamp_ms = c->created_at > 0 ? c->created_at : 0;
  }
  const std::size_t contract_count = headers.size();
  for (const auto& [key, value] : riders) {
    if (!usable_rider(key, value)) continue;
    const auto end = headers.begin() + static_cast<std::ptrdiff_t>(contract_count);
    const std::string& name = key;  // clang 14 cannot capture a structured binding
    const bool present =
        std::any_of(headers.begin(), end, [&name](const auto& h) { return h.first == name; });
    if (!present) headers.emplace_back(key, value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Artemis
// ---------------------------------------------------------------------------------------------

ArtemisProjection artemis_projection(std::string_view body, const Riders& riders) {
  ArtemisProjection out;
  auto& props = out.properties;
  if (const std::optional<Contract> c = contract_of(body)) {
    if (!c->urn.empty()) out.jms_type = c->urn;
    if (!c->trace_id.empty()) out.correlation_id = c->trace_id;
    if (c->created_at != 0) out.creation_time = c->created_at;
    if (c->schema_version != 0) {
      props.insert_or_assign("bq_schema_version", std::to_string(c->schema_version));
    }
    if (!c->source_lang.empty()) props.insert_or_assign("bq_source_lang", c->source_lang);
    props.insert_or_assign("bq_attempts", std::to_string(c->attempts));
    props.insert_or_assign("bq_app_id", "babelqueue");
  }
  for (const auto& [key, value] : riders) {
    if (!usable_rider(key, value)) continue;
    props.try_emplace(key, value);  // contract wins
  }
  out.text_body = valid_utf8(body);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Attempts reconciliation
// ---------------------------------------------------------------------------------------------

std::int64_t reconcile_attempts(std::int64_t body_attempts, std::int64_t delivery_count) noexcept {
  if (delivery_count <= 0) return body_attempts;
  return std::max(body_attempts, delivery_count - 1);
}

std::int64_t sqs_delivery_count(
    std::optional<std::string_view> approximate_receive_count) noexcept {
  if (!approximate_receive_count) return 0;
  // parse_attempts_header never yields a negative value, so "0" and garbage both give 0.
  return parse_attempts_header(*approximate_receive_count).value_or(0);
}

std::int64_t asb_delivery_count(std::uint32_t header_delivery_count) noexcept {
  return static_cast<std::int64_t>(header_delivery_count) + 1;
}

std::int64_t pulsar_delivery_count(std::optional<std::int64_t> redelivery_count) noexcept {
  if (!redelivery_count || *redelivery_count < 0) return 1;
  if (*redelivery_count == std::numeric_limits<std::int64_t>::max()) return *redelivery_count;
  return *redelivery_count + 1;
}

std::int64_t artemis_delivery_count(std::uint32_t header_delivery_count) noexcept {
  return static_cast<std::int64_t>(header_delivery_count) + 1;
}

std::optional<std::int64_t> parse_attempts_header(std::string_view value) noexcept {
  while (!value.empty() && is_ascii_space(value.front()))
    value.remove_prefix(1);
  while (!value.empty() && is_ascii_space(value.back()))
    value.remove_suffix(1);
  if (!value.empty() && value.front() == '+') value.remove_prefix(1);
  if (value.empty()) return std::nullopt;
  std::int64_t n = 0;
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  for (const char ch : value) {
    if (ch < '0' || ch > '9') return std::nullopt;
    const std::int64_t digit = ch - '0';
    if (n > (max - digit) / 10) return std::nullopt;
    n = n * 10 + digit;
  }
  return n;
}

std::int64_t kafka_attempts(std::int64_t body_attempts,
                            std::optional<std::int64_t> header_attempts) noexcept {
  return header_attempts ? *header_attempts : body_attempts;
}

std::optional<std::string> kafka_reconcile_body(std::string_view body,
                                                std::optional<std::int64_t> header_attempts) {
  if (!header_attempts) return std::nullopt;
  auto decoded = try_decode(body);
  if (!decoded.has_value()) return std::nullopt;
  Envelope& env = decoded.value();
  if (env.attempts() == *header_attempts) return std::nullopt;
  env.set_attempts(*header_attempts);
  try {
    return encode(env);
  } catch (const Error&) {
    return std::nullopt;  // cannot happen for a decoded body; keep the original bytes
  }
}

// ---------------------------------------------------------------------------------------------
// Schema-version gate and route
// ---------------------------------------------------------------------------------------------

std::string query_escape(std::string_view s) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto b = static_cast<unsigned char>(ch);
    if ((b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '-' ||
        b == '_' || b == '.' || b == '~') {
      out.push_back(ch);
    } else if (b == ' ') {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(digits[b >> 4U]);
      out.push_back(digits[b & 0x0FU]);
    }
  }
  return out;
}

std::string unsupported_route(std::string_view version) {
  std::string escaped = query_escape(version);  // ASCII only: characters == bytes
  if (escaped.size() > UNSUPPORTED_ROUTE_VERSION_MAX) {
    escaped.resize(UNSUPPORTED_ROUTE_VERSION_MAX);
    escaped += "...";
  }
  std::string route(UNSUPPORTED_ROUTE_PREFIX);
  route += escaped;
  return route;
}

bool is_unsupported_route(std::string_view route) noexcept {
  return route.starts_with(UNSUPPORTED_ROUTE_PREFIX);
}

bool is_ascii_blank(std::string_view s) noexcept {
  return std::all_of(s.begin(), s.end(), is_ascii_space);
}

GateDecision schema_version_gate(std::optional<std::string_view> value) {
  if (!value || is_ascii_blank(*value) || *value == "1") return GateDecision{};
  return reject(std::string(*value));
}

GateDecision asb_schema_version_gate(const AmqpValue& value) {
  return std::visit(
      [&value](const auto& v) -> GateDecision {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return GateDecision{};
        } else if constexpr (std::is_same_v<T, std::string>) {
          return schema_version_gate(std::string_view(v));
        } else if constexpr (is_amqp_integral_v<T>) {
          if (v == T{1}) return GateDecision{};
          return reject(typed_text(value));
        } else {
          return reject(typed_text(value));  // bool, float, double, binary, other
        }
      },
      value);
}

GateDecision artemis_schema_version_gate(const AmqpValue& value) {
  if (std::holds_alternative<std::monostate>(value)) return GateDecision{};
  if (const auto* s = std::get_if<std::string>(&value)) return schema_version_gate(*s);
  return reject(typed_text(value));
}

}  // namespace babelqueue::binding
