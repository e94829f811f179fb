// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
// WORK IN PROGRESS skeleton (replaced before merge).
#include "fields.hpp"

namespace babelqueue::amqp::detail {
std::optional<std::string> stringify_field(const amqp_field_value_t&) {
  return std::nullopt;
}
Headers stringify_headers(const amqp_table_t&) {
  return {};
}
WireProperties::WireProperties(const binding::amqp::Projection&) {}
}  // namespace babelqueue::amqp::detail
