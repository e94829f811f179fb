// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "message_codec.hpp"

#include <proton/codec.h>
#include <proton/annotation_key.hpp>
#include <proton/binary.hpp>
#include <proton/codec/decoder.hpp>
#include <proton/codec/encoder.hpp>
#include <proton/error.hpp>
#include <proton/message_id.hpp>
#include <proton/symbol.hpp>
#include <proton/timestamp.hpp>
#include <proton/type_id.hpp>
#include <proton/types.hpp>

#include <string>
#include <type_traits>
#include <variant>

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

// The pn_data_t under a proton::value (its decoder's, which Proton C++ keeps protected).
struct EncodedData : proton::codec::decoder {
  explicit EncodedData(const proton::value& v) : decoder(v) {}
  [[nodiscard]] pn_data_t* pn() const { return pn_object(); }
};

// The pn_data_t under a message's body value, to write it in place (its encoder's).
struct BodyData : proton::codec::encoder {
  explicit BodyData(proton::value& v) : encoder(v) {}
  [[nodiscard]] pn_data_t* pn() const { return pn_object(); }
};

std::string bytes_of(pn_bytes_t b) {
  return {b.start, b.size};
}

// The value under the cursor of `d` as a Value: the scalars Value holds, anything else (a
// symbol, a timestamp, a uuid, a list, a map, a described value) as Other named by its type.
Value value_at(pn_data_t* d) {
  const pn_type_t type = pn_data_type(d);
  switch (type) {
    case PN_NULL:
      return std::monostate{};
    case PN_BOOL:
      return pn_data_get_bool(d);
    case PN_BYTE:
      return pn_data_get_byte(d);
    case PN_UBYTE:
      return pn_data_get_ubyte(d);
    case PN_SHORT:
      return pn_data_get_short(d);
    case PN_USHORT:
      return pn_data_get_ushort(d);
    case PN_INT:
      return pn_data_get_int(d);
    case PN_UINT:
      return pn_data_get_uint(d);
    case PN_LONG:
      return pn_data_get_long(d);
    case PN_ULONG:
      return pn_data_get_ulong(d);
    case PN_FLOAT:
      return pn_data_get_float(d);
    case PN_DOUBLE:
      return pn_data_get_double(d);
    case PN_STRING:
      return bytes_of(pn_data_get_string(d));
    case PN_BINARY:
      return Binary{bytes_of(pn_data_get_binary(d))};
    default:
      // Proton C++'s type_id values are the C core's pn_type_t values.
      return Other{proton::type_name(static_cast<proton::type_id>(type))};
  }
}

// The entries of an encoded AMQP map (message annotations, application properties) into `out`,
// read in one pass with the C core's cursor: Proton C++'s own route (proton::map, then
// proton::get into a std::map of proton::value) makes a pn_data_t per value and decodes the map
// up to three times, most of the layer's cost of a received message. Keys: strings and symbols
// as they are, others rendered.
// Reads the map `encoded` into `out`; with `times`, also the milliseconds of its timestamp values
// (which `out` holds as Other).
void read_map(const proton::value& encoded, std::map<std::string, Value>& out,
              std::map<std::string, std::int64_t>* times = nullptr) {
  if (encoded.empty()) return;
  const EncodedData data(encoded);
  pn_data_t* d = data.pn();
  pn_data_rewind(d);
  if (!pn_data_next(d) || pn_data_type(d) != PN_MAP) return;
  const std::size_t n = pn_data_get_map(d);
  pn_data_enter(d);
  for (std::size_t i = 0; i + 1 < n; i += 2) {
    if (!pn_data_next(d)) break;
    std::string name;
    switch (pn_data_type(d)) {
      case PN_SYMBOL:
        name = bytes_of(pn_data_get_symbol(d));
        break;
      case PN_STRING:
        name = bytes_of(pn_data_get_string(d));
        break;
      default:
        name = std::visit(
            [](const auto& v) -> std::string {
              using T = std::decay_t<decltype(v)>;
              if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
                return std::to_string(v);
              } else if constexpr (std::is_same_v<T, Other>) {
                return v.type_name;
              } else {
                return "?";
              }
            },
            value_at(d));
    }
    if (!pn_data_next(d)) break;
    if (times != nullptr && pn_data_type(d) == PN_TIMESTAMP)
      times->insert_or_assign(name, pn_data_get_timestamp(d));
    out.insert_or_assign(std::move(name), value_at(d));
  }
  pn_data_exit(d);
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

void to_proton(const Message& m, proton::message& out) {
  out.clear();
  // The body written in place (proton::message::body(value) builds a value of its own and copies
  // it; a proton::binary copies the bytes once more).
  const pn_bytes_t bytes = pn_bytes(m.body.size(), m.body.data());
  switch (m.body_kind) {
    case BodyKind::Data:
      pn_data_put_binary(BodyData(out.body()).pn(), bytes);
      out.inferred(true);  // a binary body as one Data section
      break;
    case BodyKind::StringValue:
      pn_data_put_string(BodyData(out.body()).pn(), bytes);
      break;
    case BodyKind::BinaryValue:
      pn_data_put_binary(BodyData(out.body()).pn(), bytes);
      out.inferred(false);
      break;
    case BodyKind::Unsupported:
      throw ConfigError("an AMQP 1.0 message body must be Data, a string or a binary value");
  }
  out.durable(m.durable);
  if (m.message_id) out.id(*m.message_id);
  if (m.correlation_id) out.correlation_id(*m.correlation_id);
  if (m.reply_to) out.reply_to(*m.reply_to);
  if (m.content_type) out.content_type(*m.content_type);
  if (m.subject) out.subject(*m.subject);
  if (m.creation_time_ms) out.creation_time(proton::timestamp(*m.creation_time_ms));
  for (const auto& [key, value] : m.annotations)
    out.message_annotations().put(proton::symbol(key), proton::value(to_scalar(value)));
  for (const auto& [key, value] : m.properties)
    out.properties().put(key, to_scalar(value));
}

proton::message to_proton(const Message& m) {
  proton::message out;
  to_proton(m, out);
  return out;
}

Message from_proton(const proton::message& m) {
  Message out;
  const proton::value& body = m.body();
  if (body.empty()) {
    out.body_kind = BodyKind::Data;
  } else {
    // The body's one value read in place with the C core's cursor (Proton C++'s type() and get
    // each make a decoder of their own).
    const EncodedData data(body);
    pn_data_t* d = data.pn();
    pn_data_rewind(d);
    const pn_type_t type = pn_data_next(d) ? pn_data_type(d) : PN_NULL;
    if (type == PN_BINARY) {
      out.body = bytes_of(pn_data_get_binary(d));
      out.body_kind = m.inferred() ? BodyKind::Data : BodyKind::BinaryValue;
    } else if (type == PN_STRING) {
      out.body = bytes_of(pn_data_get_string(d));
      out.body_kind = BodyKind::StringValue;
    } else {
      out.body = proton::to_string(body);
      out.body_kind = BodyKind::Unsupported;
    }
  }
  out.durable = m.durable();
  out.delivery_count = m.delivery_count();
  if (const proton::message_id id = m.id(); !id.empty()) out.message_id = text_of(id);
  if (const proton::message_id id = m.correlation_id(); !id.empty())
    out.correlation_id = text_of(id);
  out.reply_to = non_empty(m.reply_to());
  out.content_type = non_empty(m.content_type());
  out.subject = non_empty(m.subject());
  if (m.creation_time().milliseconds() != 0)
    out.creation_time_ms = m.creation_time().milliseconds();
  // The maps' encoded values (proton::map::empty() would decode a map, value() encode it again).
  read_map(m.message_annotations().value(), out.annotations, &out.annotation_times);
  read_map(m.properties().value(), out.properties);
  return out;
}

}  // namespace babelqueue::amqp10::detail
