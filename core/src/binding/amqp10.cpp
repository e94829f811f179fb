// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/binding/amqp10.hpp>

#include "binding/detail.hpp"

#include <array>
#include <charconv>
#include <string_view>
#include <type_traits>

namespace babelqueue::binding {

namespace {

using detail::is_amqp_integral_v;

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

// The text a typed value contributes to a route and to the rejection hook.
std::string typed_text(const amqp10::Value& value) {
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
        } else if constexpr (std::is_same_v<T, amqp10::Binary>) {
          return lower_hex(v.bytes);
        } else {
          static_assert(std::is_same_v<T, amqp10::Other>);
          return "<" + v.type_name + ">";
        }
      },
      value);
}

}  // namespace

GateDecision detail::reject_typed(const amqp10::Value& value) {
  return reject_version(typed_text(value));
}

std::optional<std::string> amqp10::header_text(const Value& value) {
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

}  // namespace babelqueue::binding
