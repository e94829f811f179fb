// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "message_codec.hpp"

#include <proton/annotation_key.hpp>
#include <proton/binary.hpp>
#include <proton/error.hpp>
#include <proton/message_id.hpp>
#include <proton/symbol.hpp>
#include <proton/timestamp.hpp>
#include <proton/type_id.hpp>
#include <proton/types.hpp>

#include <type_traits>

namespace babelqueue::amqp10::detail {
namespace {

std::string text_of(const proton::message_id& id) {
  return id.type() == proton::STRING ? proton::get<std::string>(id) : proton::to_string(id);
}

std::optional<std::string> non_empty(std::string s) {
  if (s.empty()) return std::nullopt;
  return s;
}

Value from_scalar(const proton::scalar& s) {
  switch (s.type()) {
    case proton::NULL_TYPE:
      return std::monostate{};
    case proton::BOOLEAN:
      return proton::get<bool>(s);
    case proton::BYTE:
      return proton::get<std::int8_t>(s);
    case proton::UBYTE:
      return proton::get<std::uint8_t>(s);
    case proton::SHORT:
      return proton::get<std::int16_t>(s);
    case proton::USHORT:
      return proton::get<std::uint16_t>(s);
    case proton::INT:
      return proton::get<std::int32_t>(s);
    case proton::LONG:
      return proton::get<std::int64_t>(s);
    case proton::UINT:
      return proton::get<std::uint32_t>(s);
    case proton::ULONG:
      return proton::get<std::uint64_t>(s);
    case proton::FLOAT:
      return proton::get<float>(s);
    case proton::DOUBLE:
      return proton::get<double>(s);
    case proton::STRING:
      return proton::get<std::string>(s);
    case proton::BINARY: {
      const auto b = proton::get<proton::binary>(s);
      return Binary{std::string(b.begin(), b.end())};
    }
    default:
      return Other{proton::type_name(s.type())};
  }
}

}  // namespace

proton::scalar to_scalar(const Value& v) {
  return std::visit(
      [](const auto& x) -> proton::scalar {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return proton::scalar();
        } else if constexpr (std::is_same_v<T, Binary>) {
          return proton::binary(x.bytes);
        } else if constexpr (std::is_same_v<T, Other>) {
          throw ConfigError("AMQP 1.0: a value of type " + x.type_name + " cannot be sent");
        } else {
          return x;
        }
      },
      v);
}

Value from_value(const proton::value& v) {
  try {
    return from_scalar(proton::get<proton::scalar>(v));
  } catch (const proton::conversion_error&) {
    return Other{proton::type_name(v.type())};  // a list, map or array
  }
}

proton::message to_proton(const Message& m) {
  proton::message out;
  switch (m.body_kind) {
    case BodyKind::Data:
      out.body(proton::binary(m.body));
      out.inferred(true);  // a binary body as one Data section
      break;
    case BodyKind::StringValue:
      out.body(m.body);
      break;
    case BodyKind::BinaryValue:
      out.body(proton::binary(m.body));
      out.inferred(false);
      break;
    case BodyKind::Unsupported:
      throw ConfigError("an AMQP 1.0 message body must be Data, a string or a binary value");
  }
  out.durable(m.durable);
  if (m.message_id) out.id(*m.message_id);
  if (m.correlation_id) out.correlation_id(*m.correlation_id);
  if (m.content_type) out.content_type(*m.content_type);
  if (m.subject) out.subject(*m.subject);
  if (m.creation_time_ms) out.creation_time(proton::timestamp(*m.creation_time_ms));
  for (const auto& [key, value] : m.annotations)
    out.message_annotations().put(proton::symbol(key), proton::value(to_scalar(value)));
  for (const auto& [key, value] : m.properties)
    out.properties().put(key, to_scalar(value));
  return out;
}

Message from_proton(const proton::message& m) {
  Message out;
  const proton::value& body = m.body();
  if (body.empty()) {
    out.body_kind = BodyKind::Data;
  } else if (body.type() == proton::BINARY) {
    const auto bytes = proton::get<proton::binary>(body);
    out.body.assign(bytes.begin(), bytes.end());
    out.body_kind = m.inferred() ? BodyKind::Data : BodyKind::BinaryValue;
  } else if (body.type() == proton::STRING) {
    out.body = proton::get<std::string>(body);
    out.body_kind = BodyKind::StringValue;
  } else {
    out.body = proton::to_string(body);
    out.body_kind = BodyKind::Unsupported;
  }
  out.durable = m.durable();
  out.delivery_count = m.delivery_count();
  if (!m.id().empty()) out.message_id = text_of(m.id());
  if (!m.correlation_id().empty()) out.correlation_id = text_of(m.correlation_id());
  out.content_type = non_empty(m.content_type());
  out.subject = non_empty(m.subject());
  if (m.creation_time().milliseconds() != 0)
    out.creation_time_ms = m.creation_time().milliseconds();
  std::map<proton::annotation_key, proton::value> annotations;
  if (!m.message_annotations().empty()) proton::get(m.message_annotations().value(), annotations);
  for (const auto& [key, value] : annotations) {
    std::string name = key.type() == proton::SYMBOL ? std::string(proton::get<proton::symbol>(key))
                                                    : proton::to_string(key);
    if (value.type() == proton::TIMESTAMP)
      out.annotation_times[name] = proton::get<proton::timestamp>(value).milliseconds();
    out.annotations[std::move(name)] = from_value(value);
  }
  std::map<std::string, proton::scalar> properties;
  if (!m.properties().empty()) proton::get(m.properties().value(), properties);
  for (const auto& [key, value] : properties)
    out.properties[key] = from_scalar(value);
  return out;
}

}  // namespace babelqueue::amqp10::detail
