// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/export.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

/// @file
/// AMQP 1.0 application-property values as the Azure Service Bus and Artemis bindings read and
/// write them (`azureservicebus.hpp`, `artemis.hpp`), and their OB-4 header text. Pure code.
///
/// Every function here is stateless and thread-safe; every type is a plain value type.

namespace babelqueue::binding::amqp10 {

/// An AMQP 1.0 `binary` value.
///
/// Thread-safety: a value type.
struct Binary {
  std::string bytes;
  friend bool operator==(const Binary&, const Binary&) = default;
};

/// Any other AMQP 1.0 type (symbol, char, timestamp, uuid, decimal, list, map, array, ...),
/// named by its AMQP type name.
///
/// Thread-safety: a value type.
struct Other {
  std::string type_name;
  friend bool operator==(const Other&, const Other&) = default;
};

/// An AMQP 1.0 application-property value: null (`std::monostate`), boolean, the eight integral
/// types, float, double, string, binary, or another type.
using Value = std::variant<std::monostate, bool, std::int8_t, std::uint8_t, std::int16_t,
                           std::uint16_t, std::int32_t, std::uint32_t, std::int64_t, std::uint64_t,
                           float, double, std::string, Binary, Other>;

/// The OB-4 text of an application-property value for `ReceivedMessage::headers`: strings as-is,
/// integers in decimal, booleans `true`/`false`, floats in shortest round-trip form; nullopt (skip
/// the entry) for null, binary and any other type.
BABELQUEUE_EXPORT std::optional<std::string> header_text(const Value& value);

}  // namespace babelqueue::binding::amqp10
