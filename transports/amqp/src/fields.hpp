// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// AMQP 0-9-1 field tables and basic.properties on rabbitmq-c's types: the publish side writes
// the binding's projection (AMQP-12..15) with native field types, the consume side turns a
// received `headers` table into the string map the App sees (AMQP-21). Pure code, no I/O.

#include <babelqueue/binding/amqp.hpp>
#include <babelqueue/transport.hpp>

#include <amqp.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::amqp::detail {

// One received field value as the App sees it (AMQP-21): `S`/`x` the bytes; integers decimal;
// `t` "true"/"false"; `f`/`d` the shortest decimal that reads back to the same float or double
// (std::to_chars, fixed or scientific, whichever is shorter: "0.1", "1e+300", "-0"), NaN as
// "NaN", infinities as "inf" and "-inf"; `D` the decimal with every digit of its scale ("123.45"
// for value 12345 scale 2, "1.50" for 150 scale 2), its value read as signed 32-bit as pika and
// amqp091-go write it ("-0.05" for -5 scale 2; rabbitmq-c's member is uint32_t); `T` decimal
// seconds; nullopt (skipped) for `V`, `A`, `F`, empty strings and kinds rabbitmq-c does not know.
std::optional<std::string> stringify_field(const amqp_field_value_t& value);

// Every entry of a received `headers` table that stringify_field keeps. A key that repeats keeps
// its first value.
Headers stringify_headers(const amqp_table_t& table);

// rabbitmq-c's view of `text`, which it only reads (amqp_bytes_t has no const variant).
inline amqp_bytes_t bytes_of(std::string_view text) noexcept {
  return {text.size(),
          const_cast<char*>(text.data())};  // NOLINT(cppcoreguidelines-pro-type-const-cast)
}

// The rabbitmq-c form of a projection: basic.properties with its flags and the `headers` table,
// pointing into the projection it keeps (no byte is copied). A publisher projects one body after
// another into the same object (project()), which then reuses its strings and entries: a warm
// one allocates nothing. Not copyable or movable (the pointers point into it).
class WireProperties {
 public:
  WireProperties() { point(); }
  explicit WireProperties(binding::amqp::Projection projection);
  WireProperties(const WireProperties&) = delete;
  WireProperties& operator=(const WireProperties&) = delete;

  // Replaces the properties with the projection of `body` and `riders` (AMQP-12..15).
  void project(std::string_view body, const binding::Riders& riders);
  // What the last projection left out (AMQP-12, AMQP-14).
  [[nodiscard]] const std::vector<binding::amqp::Omitted>& omitted() const noexcept {
    return projection_.omitted;
  }
  // Valid while this object lives and until the next project().
  [[nodiscard]] const amqp_basic_properties_t* get() const noexcept { return &props_; }

 private:
  // Points props_ and entries_ at projection_.
  void point();

  binding::amqp::Projection projection_;  // the strings the properties point to
  std::vector<amqp_table_entry_t> entries_;
  amqp_basic_properties_t props_{};
};

}  // namespace babelqueue::amqp::detail
