// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Field tables and basic.properties on rabbitmq-c's types (AMQP-12..15, AMQP-21).

#include "fields.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

namespace babelqueue::amqp::detail {
namespace {

std::string to_string(amqp_bytes_t bytes) {
  if (bytes.len == 0) return {};
  return {static_cast<const char*>(bytes.bytes), bytes.len};
}

// Integers in decimal; floating point in the shortest form that reads back to the same value.
template <class T>
std::string decimal(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  }
  std::array<char, 64> buffer{};
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  (void)ec;  // 64 bytes hold every integer and every shortest float or double
  return {buffer.data(), end};
}

// value / 10^scale, every digit of the scale written: 12345 scale 2 is "123.45", -5 scale 2 is
// "-0.05".
std::string scaled(std::int32_t value, std::uint8_t scale) {
  const std::int64_t wide = value;
  const std::size_t places = scale;
  std::string digits = decimal(wide < 0 ? -wide : wide);
  if (places > 0) {
    if (digits.size() <= places) digits.insert(0, places + 1 - digits.size(), '0');
    digits.insert(digits.size() - places, 1, '.');
  }
  return wide < 0 ? "-" + digits : digits;
}

}  // namespace

std::optional<std::string> stringify_field(const amqp_field_value_t& field) {
  const auto& v = field.value;
  switch (field.kind) {
    case AMQP_FIELD_KIND_BOOLEAN:
      return v.boolean != 0 ? "true" : "false";
    case AMQP_FIELD_KIND_I8:
      return decimal(v.i8);
    case AMQP_FIELD_KIND_U8:
      return decimal(v.u8);
    case AMQP_FIELD_KIND_I16:
      return decimal(v.i16);
    case AMQP_FIELD_KIND_U16:
      return decimal(v.u16);
    case AMQP_FIELD_KIND_I32:
      return decimal(v.i32);
    case AMQP_FIELD_KIND_U32:
      return decimal(v.u32);
    case AMQP_FIELD_KIND_I64:
      return decimal(v.i64);
    case AMQP_FIELD_KIND_U64:
    case AMQP_FIELD_KIND_TIMESTAMP:
      return decimal(v.u64);
    case AMQP_FIELD_KIND_F32:
      return decimal(v.f32);
    case AMQP_FIELD_KIND_F64:
      return decimal(v.f64);
    case AMQP_FIELD_KIND_DECIMAL:
      return scaled(static_cast<std::int32_t>(v.decimal.value), v.decimal.decimals);
    case AMQP_FIELD_KIND_UTF8:
    case AMQP_FIELD_KIND_BYTES:
      if (v.bytes.len == 0) return std::nullopt;
      return to_string(v.bytes);
    default:  // V, A, F
      return std::nullopt;
  }
}

Headers stringify_headers(const amqp_table_t& table) {
  Headers out;
  for (int i = 0; i < table.num_entries; ++i) {
    const amqp_table_entry_t& entry = table.entries[i];
    if (auto text = stringify_field(entry.value)) {
      out.emplace(to_string(entry.key), std::move(*text));  // a repeated key keeps its first value
    }
  }
  return out;
}

WireProperties::WireProperties(binding::amqp::Projection projection)
    : projection_(std::move(projection)) {
  point();
}

void WireProperties::project(std::string_view body, const binding::Riders& riders) {
  binding::amqp::projection_into(body, riders, projection_);
  point();
}

void WireProperties::point() {
  const binding::amqp::Properties& p = projection_.properties;
  props_ = amqp_basic_properties_t{};
  props_._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_CONTENT_ENCODING_FLAG |
                  AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_APP_ID_FLAG;
  props_.content_type = bytes_of(p.content_type);
  props_.content_encoding = bytes_of(p.content_encoding);
  props_.delivery_mode = p.delivery_mode;
  props_.app_id = bytes_of(p.app_id);
  const auto set_if = [this](const std::optional<std::string>& value, amqp_bytes_t& field,
                             amqp_flags_t flag) {
    if (!value) return;
    field = bytes_of(*value);
    props_._flags |= flag;
  };
  set_if(p.type, props_.type, AMQP_BASIC_TYPE_FLAG);
  set_if(p.correlation_id, props_.correlation_id, AMQP_BASIC_CORRELATION_ID_FLAG);
  set_if(p.message_id, props_.message_id, AMQP_BASIC_MESSAGE_ID_FLAG);

  entries_.clear();
  if (projection_.headers.empty()) return;
  for (const auto& [key, value] : projection_.headers) {
    amqp_table_entry_t& entry = entries_.emplace_back();
    entry.key = bytes_of(key);
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::int32_t>) {
            entry.value.kind = AMQP_FIELD_KIND_I32;
            entry.value.value.i32 = v;
          } else if constexpr (std::is_same_v<T, std::int64_t>) {
            entry.value.kind = AMQP_FIELD_KIND_I64;
            entry.value.value.i64 = v;
          } else {
            entry.value.kind = AMQP_FIELD_KIND_UTF8;
            entry.value.value.bytes = bytes_of(v);
          }
        },
        value);
  }
  props_.headers.num_entries = static_cast<int>(entries_.size());
  props_.headers.entries = entries_.data();
  props_._flags |= AMQP_BASIC_HEADERS_FLAG;
}

}  // namespace babelqueue::amqp::detail
