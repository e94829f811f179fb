// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Field tables and basic.properties on rabbitmq-c's types: the publish projection (04
// AMQP-12..15, AMQP-T1, T2, T12) and header stringification on consume (AMQP-21), also through
// rabbitmq-c's own wire codec.

#include <babelqueue/binding/amqp.hpp>

#include <gtest/gtest.h>

#include <amqp.h>
#include <amqp_framing.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "binding/fixtures.hpp"
#include "fields.hpp"

namespace {

namespace amqp_binding = babelqueue::binding::amqp;
using babelqueue::Headers;
using babelqueue::amqp::detail::stringify_field;
using babelqueue::amqp::detail::stringify_headers;
using babelqueue::amqp::detail::WireProperties;
using binding_test::order_created;

amqp_bytes_t bytes_of(std::string_view s) {
  return {s.size(), const_cast<char*>(s.data())};  // NOLINT(cppcoreguidelines-pro-type-const-cast)
}

std::string text_of(amqp_bytes_t b) {
  return b.len == 0 ? std::string() : std::string(static_cast<const char*>(b.bytes), b.len);
}

amqp_field_value_t field(amqp_field_value_kind_t kind) {
  amqp_field_value_t f{};
  f.kind = static_cast<std::uint8_t>(kind);
  return f;
}

template <class Set>
std::optional<std::string> str(amqp_field_value_kind_t kind, Set set) {
  amqp_field_value_t f = field(kind);
  set(f.value);
  return stringify_field(f);
}

std::optional<std::string> f64(double v) {
  return str(AMQP_FIELD_KIND_F64, [v](auto& u) { u.f64 = v; });
}

std::optional<std::string> f32(float v) {
  return str(AMQP_FIELD_KIND_F32, [v](auto& u) { u.f32 = v; });
}

std::optional<std::string> decimal(std::uint32_t value, std::uint8_t scale) {
  return str(AMQP_FIELD_KIND_DECIMAL, [&](auto& u) {
    u.decimal.value = value;
    u.decimal.decimals = scale;
  });
}

std::uint32_t as_unsigned(std::int32_t v) {
  std::uint32_t out = 0;
  std::memcpy(&out, &v, sizeof out);
  return out;
}

TEST(AmqpFields, AMQP21_BooleanAndEveryIntegerKind) {
  EXPECT_EQ(str(AMQP_FIELD_KIND_BOOLEAN, [](auto& u) { u.boolean = 1; }), "true");
  EXPECT_EQ(str(AMQP_FIELD_KIND_BOOLEAN, [](auto& u) { u.boolean = 0; }), "false");
  EXPECT_EQ(str(AMQP_FIELD_KIND_I8, [](auto& u) { u.i8 = -128; }), "-128");
  EXPECT_EQ(str(AMQP_FIELD_KIND_I8, [](auto& u) { u.i8 = 3; }), "3");
  EXPECT_EQ(str(AMQP_FIELD_KIND_U8, [](auto& u) { u.u8 = 255; }), "255");
  EXPECT_EQ(str(AMQP_FIELD_KIND_I16, [](auto& u) { u.i16 = -32768; }), "-32768");
  EXPECT_EQ(str(AMQP_FIELD_KIND_U16, [](auto& u) { u.u16 = 65535; }), "65535");
  EXPECT_EQ(str(AMQP_FIELD_KIND_I32, [](auto& u) { u.i32 = std::numeric_limits<int32_t>::min(); }),
            "-2147483648");
  EXPECT_EQ(str(AMQP_FIELD_KIND_U32, [](auto& u) { u.u32 = 4294967295U; }), "4294967295");
  EXPECT_EQ(str(AMQP_FIELD_KIND_I64, [](auto& u) { u.i64 = std::numeric_limits<int64_t>::min(); }),
            "-9223372036854775808");
  EXPECT_EQ(str(AMQP_FIELD_KIND_U64, [](auto& u) { u.u64 = 18446744073709551615ULL; }),
            "18446744073709551615");
  EXPECT_EQ(str(AMQP_FIELD_KIND_TIMESTAMP, [](auto& u) { u.u64 = 1749132727; }), "1749132727");
}

TEST(AmqpFields, AMQP21_StringsAndBytesAreTheBytes) {
  const std::string binary("a\0\xff\x01z", 5);
  EXPECT_EQ(str(AMQP_FIELD_KIND_UTF8, [](auto& u) { u.bytes = bytes_of("héllo"); }), "héllo");
  EXPECT_EQ(str(AMQP_FIELD_KIND_BYTES, [&](auto& u) { u.bytes = bytes_of(binary); }), binary);
  EXPECT_EQ(str(AMQP_FIELD_KIND_UTF8, [](auto& u) { u.bytes = amqp_empty_bytes; }), std::nullopt);
  EXPECT_EQ(str(AMQP_FIELD_KIND_BYTES, [](auto& u) { u.bytes = bytes_of(""); }), std::nullopt);
}

TEST(AmqpFields, AMQP21_VoidArrayTableAndUnknownKindsAreSkipped) {
  amqp_field_value_t inner = field(AMQP_FIELD_KIND_I32);
  inner.value.i32 = 1;
  amqp_table_entry_t entry{bytes_of("k"), inner};
  EXPECT_EQ(stringify_field(field(AMQP_FIELD_KIND_VOID)), std::nullopt);
  EXPECT_EQ(str(AMQP_FIELD_KIND_ARRAY,
                [&](auto& u) {
                  u.array.num_entries = 1;
                  u.array.entries = &inner;
                }),
            std::nullopt);
  EXPECT_EQ(str(AMQP_FIELD_KIND_TABLE,
                [&](auto& u) {
                  u.table.num_entries = 1;
                  u.table.entries = &entry;
                }),
            std::nullopt);
  amqp_field_value_t unknown{};
  unknown.kind = 'Z';
  EXPECT_EQ(stringify_field(unknown), std::nullopt);
}

TEST(AmqpFields, AMQP21_FloatsAreTheShortestRoundTrip) {
  EXPECT_EQ(f64(0.1), "0.1");
  EXPECT_EQ(f64(1e300), "1e+300");
  EXPECT_EQ(f64(-0.0), "-0");
  EXPECT_EQ(f64(0.0), "0");
  EXPECT_EQ(f64(1.5), "1.5");
  EXPECT_EQ(f64(100.0), "100");
  EXPECT_EQ(f64(-2.5e-8), "-2.5e-08");
  EXPECT_EQ(f64(5e-324), "5e-324");
  EXPECT_EQ(f64(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(f32(0.1F), "0.1");  // the float's shortest form, not the double's 0.10000000149...
  EXPECT_EQ(f32(3.4028235e38F), "3.4028235e+38");
  EXPECT_EQ(f32(-1.25F), "-1.25");

  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> dist(-1e6, 1e6);
  for (int i = 0; i < 1000; ++i) {
    const double v = dist(rng) * std::pow(10.0, static_cast<double>(i % 40 - 20));
    const std::string s = f64(v).value();
    double back = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), back);
    ASSERT_EQ(r.ptr, s.data() + s.size()) << s;
    EXPECT_EQ(back, v) << s;
  }
}

TEST(AmqpFields, AMQP21_NanAndInfinities) {
  EXPECT_EQ(f64(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(f64(-std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(f64(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(f64(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(f32(std::numeric_limits<float>::quiet_NaN()), "NaN");
  EXPECT_EQ(f32(std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(f32(-std::numeric_limits<float>::infinity()), "-inf");
}

TEST(AmqpFields, AMQP21_DecimalsKeepTheirScale) {
  EXPECT_EQ(decimal(12345, 2), "123.45");
  EXPECT_EQ(decimal(7, 0), "7");
  EXPECT_EQ(decimal(150, 2), "1.50");
  EXPECT_EQ(decimal(5, 1), "0.5");
  EXPECT_EQ(decimal(0, 0), "0");
  EXPECT_EQ(decimal(0, 3), "0.000");
  EXPECT_EQ(decimal(1, 12), "0.000000000001");
  EXPECT_EQ(decimal(as_unsigned(-5), 2), "-0.05");
  EXPECT_EQ(decimal(as_unsigned(-12345), 2), "-123.45");
  EXPECT_EQ(decimal(as_unsigned(std::numeric_limits<int32_t>::min()), 0), "-2147483648");
  EXPECT_EQ(decimal(as_unsigned(std::numeric_limits<int32_t>::min()), 3), "-2147483.648");
  EXPECT_EQ(decimal(2147483647, 10), "0.2147483647");
  EXPECT_EQ(decimal(2147483647, 12), "0.002147483647");
  const std::string wide = decimal(1, 255).value();
  EXPECT_EQ(wide.size(), 257U);
  EXPECT_EQ(wide.substr(0, 3), "0.0");
  EXPECT_EQ(wide.back(), '1');
}

// A field-table entry for the hand-built tables below.
amqp_table_entry_t entry(std::string_view key, amqp_field_value_t value) {
  return {bytes_of(key), value};
}

template <class Set>
amqp_table_entry_t entry(std::string_view key, amqp_field_value_kind_t kind, Set set) {
  amqp_field_value_t f = field(kind);
  set(f.value);
  return entry(key, f);
}

TEST(AmqpFields, AMQP21_HeadersTable) {
  amqp_field_value_t nested = field(AMQP_FIELD_KIND_UTF8);
  nested.value.bytes = bytes_of("x");
  std::vector<amqp_table_entry_t> entries{
      entry("x-attempts", AMQP_FIELD_KIND_I8, [](auto& u) { u.i8 = 1; }),  // amqplib's 'b'
      entry("traceparent", AMQP_FIELD_KIND_UTF8, [](auto& u) { u.bytes = bytes_of("00-ab-01"); }),
      entry("x-delivery-count", AMQP_FIELD_KIND_I64, [](auto& u) { u.i64 = 2; }),
      entry("flag", AMQP_FIELD_KIND_BOOLEAN, [](auto& u) { u.boolean = 1; }),
      entry("void", field(AMQP_FIELD_KIND_VOID)),
      entry("empty", AMQP_FIELD_KIND_UTF8, [](auto& u) { u.bytes = amqp_empty_bytes; }),
      entry("list", AMQP_FIELD_KIND_ARRAY,
            [&](auto& u) {
              u.array.num_entries = 1;
              u.array.entries = &nested;
            }),
      entry("x-attempts", AMQP_FIELD_KIND_I32, [](auto& u) { u.i32 = 9; }),  // repeated key
  };
  const amqp_table_t table{static_cast<int>(entries.size()), entries.data()};
  const Headers expected{{"x-attempts", "1"},
                         {"traceparent", "00-ab-01"},
                         {"x-delivery-count", "2"},
                         {"flag", "true"}};
  EXPECT_EQ(stringify_headers(table), expected);
  EXPECT_TRUE(stringify_headers(amqp_empty_table).empty());
}

// rabbitmq-c's encoder and decoder of a content header's properties and of a field table, as the
// wire carries them. What it decodes points into the encoded bytes, which live as long as this.
class Codec {
 public:
  Codec() { init_amqp_pool(&pool_, 4096); }
  ~Codec() { empty_amqp_pool(&pool_); }
  Codec(const Codec&) = delete;
  Codec& operator=(const Codec&) = delete;

  const amqp_basic_properties_t& round_trip(const amqp_basic_properties_t& props) {
    std::vector<char>& buffer = buffers_.emplace_back(64 * 1024);
    amqp_basic_properties_t copy = props;
    const int size =
        amqp_encode_properties(AMQP_BASIC_CLASS, &copy, amqp_bytes_t{buffer.size(), buffer.data()});
    EXPECT_GT(size, 0);
    void* decoded = nullptr;
    const int rc = amqp_decode_properties(
        AMQP_BASIC_CLASS, &pool_, amqp_bytes_t{static_cast<std::size_t>(size), buffer.data()},
        &decoded);
    EXPECT_EQ(rc, 0);
    return *static_cast<const amqp_basic_properties_t*>(decoded);
  }

  amqp_table_t round_trip(amqp_table_t table) {
    std::vector<char>& buffer = buffers_.emplace_back(64 * 1024);
    std::size_t offset = 0;
    EXPECT_EQ(amqp_encode_table(amqp_bytes_t{buffer.size(), buffer.data()}, &table, &offset), 0);
    amqp_table_t out{};
    std::size_t read = 0;
    EXPECT_EQ(amqp_decode_table(amqp_bytes_t{offset, buffer.data()}, &pool_, &out, &read), 0);
    EXPECT_EQ(read, offset);
    return out;
  }

 private:
  amqp_pool_t pool_{};
  std::deque<std::vector<char>> buffers_;
};

TEST(AmqpFields, AMQP21_EveryKindThroughTheWireCodec) {
  const std::string binary("\0\x01", 2);
  amqp_field_value_t nested = field(AMQP_FIELD_KIND_I32);
  amqp_table_entry_t inner = entry("k", nested);
  std::vector<amqp_table_entry_t> entries{
      entry("t", AMQP_FIELD_KIND_BOOLEAN, [](auto& u) { u.boolean = 1; }),
      entry("b", AMQP_FIELD_KIND_I8, [](auto& u) { u.i8 = -1; }),
      entry("B", AMQP_FIELD_KIND_U8, [](auto& u) { u.u8 = 200; }),
      entry("s", AMQP_FIELD_KIND_I16, [](auto& u) { u.i16 = -300; }),
      entry("u", AMQP_FIELD_KIND_U16, [](auto& u) { u.u16 = 60000; }),
      entry("I", AMQP_FIELD_KIND_I32, [](auto& u) { u.i32 = -70000; }),
      entry("i", AMQP_FIELD_KIND_U32, [](auto& u) { u.u32 = 3000000000U; }),
      entry("l", AMQP_FIELD_KIND_I64, [](auto& u) { u.i64 = -5000000000; }),
      entry("L", AMQP_FIELD_KIND_U64, [](auto& u) { u.u64 = 10000000000000000000ULL; }),
      entry("f", AMQP_FIELD_KIND_F32, [](auto& u) { u.f32 = 0.1F; }),
      entry("d", AMQP_FIELD_KIND_F64, [](auto& u) { u.f64 = 0.1; }),
      entry("D", AMQP_FIELD_KIND_DECIMAL,
            [](auto& u) {
              u.decimal.value = as_unsigned(-5);
              u.decimal.decimals = 2;
            }),
      entry("S", AMQP_FIELD_KIND_UTF8, [](auto& u) { u.bytes = bytes_of("php"); }),
      entry("x", AMQP_FIELD_KIND_BYTES, [&](auto& u) { u.bytes = bytes_of(binary); }),
      entry("A", AMQP_FIELD_KIND_ARRAY,
            [&](auto& u) {
              u.array.num_entries = 1;
              u.array.entries = &nested;
            }),
      entry("T", AMQP_FIELD_KIND_TIMESTAMP, [](auto& u) { u.u64 = 1749132727; }),
      entry("F", AMQP_FIELD_KIND_TABLE,
            [&](auto& u) {
              u.table.num_entries = 1;
              u.table.entries = &inner;
            }),
      entry("V", field(AMQP_FIELD_KIND_VOID)),
  };
  Codec codec;
  const amqp_table_t decoded =
      codec.round_trip(amqp_table_t{static_cast<int>(entries.size()), entries.data()});
  ASSERT_EQ(decoded.num_entries, static_cast<int>(entries.size()));
  for (std::size_t i = 0; i < entries.size(); ++i) {
    // The key names the kind; the decoder gives each back with the kind it was written with.
    const amqp_table_entry_t& back = decoded.entries[i];
    EXPECT_EQ(text_of(back.key), std::string(1, static_cast<char>(entries[i].value.kind)));
    EXPECT_EQ(back.value.kind, entries[i].value.kind);
  }
  const Headers expected{
      {"t", "true"},       {"b", "-1"},          {"B", "200"},
      {"s", "-300"},       {"u", "60000"},       {"I", "-70000"},
      {"i", "3000000000"}, {"l", "-5000000000"}, {"L", "10000000000000000000"},
      {"f", "0.1"},        {"d", "0.1"},         {"D", "-0.05"},
      {"S", "php"},        {"x", binary},        {"T", "1749132727"},
  };
  EXPECT_EQ(stringify_headers(decoded), expected);
}

constexpr amqp_flags_t kConstantFlags = AMQP_BASIC_CONTENT_TYPE_FLAG |
                                        AMQP_BASIC_CONTENT_ENCODING_FLAG |
                                        AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_APP_ID_FLAG;

void expect_constants(const amqp_basic_properties_t& p) {
  EXPECT_EQ(text_of(p.content_type), "application/json");
  EXPECT_EQ(text_of(p.content_encoding), "utf-8");
  EXPECT_EQ(p.delivery_mode, 2);
  EXPECT_EQ(text_of(p.app_id), "babelqueue");
}

// Each header entry as "<key> <kind> <value>".
std::vector<std::string> header_entries(const amqp_table_t& table) {
  std::vector<std::string> out;
  for (int i = 0; i < table.num_entries; ++i) {
    const amqp_table_entry_t& e = table.entries[i];
    out.push_back(text_of(e.key) + " " + static_cast<char>(e.value.kind) + " " +
                  stringify_field(e.value).value_or("<skipped>"));
  }
  return out;
}

TEST(AmqpWireProperties, AMQPT1_OrderCreatedProjection) {
  const std::string body = order_created();
  const WireProperties wire(amqp_binding::projection(body));
  const amqp_basic_properties_t& p = *wire.get();
  EXPECT_EQ(p._flags, kConstantFlags | AMQP_BASIC_TYPE_FLAG | AMQP_BASIC_CORRELATION_ID_FLAG |
                          AMQP_BASIC_MESSAGE_ID_FLAG | AMQP_BASIC_HEADERS_FLAG);
  expect_constants(p);
  EXPECT_EQ(text_of(p.type), binding_test::kUrn);
  EXPECT_EQ(text_of(p.correlation_id), binding_test::kTrace);
  EXPECT_EQ(text_of(p.message_id), binding_test::kId);
  const std::vector<std::string> headers{"x-attempts I 0", "x-schema-version I 1",
                                         "x-source-lang S php"};
  EXPECT_EQ(header_entries(p.headers), headers);

  Codec codec;  // the same after rabbitmq-c encoded and decoded the content header
  const amqp_basic_properties_t& back = codec.round_trip(p);
  EXPECT_EQ(back._flags, p._flags);
  expect_constants(back);
  EXPECT_EQ(text_of(back.type), binding_test::kUrn);
  EXPECT_EQ(text_of(back.correlation_id), binding_test::kTrace);
  EXPECT_EQ(text_of(back.message_id), binding_test::kId);
  EXPECT_EQ(header_entries(back.headers), headers);
}

TEST(AmqpWireProperties, AMQP13_Int64HeaderIsAnL) {
  const WireProperties wire(amqp_binding::projection(
      binding_test::envelope("urn:x", R"({"schema_version":1})", "3000000000")));
  const std::vector<std::string> headers{"x-attempts l 3000000000", "x-schema-version I 1"};
  EXPECT_EQ(header_entries(wire.get()->headers), headers);
  Codec codec;
  EXPECT_EQ(header_entries(codec.round_trip(*wire.get()).headers), headers);
}

TEST(AmqpWireProperties, AMQPT2_RidersBesideTheContract) {
  const babelqueue::binding::Riders riders{
      {"traceparent", "00-4bf9-00f0-01"}, {"tracestate", "k=v"}, {"bq-replay-bypass", "1"},
      {"x-source-lang", "ATTACKER"},      {"", "blank"},         {"empty", ""}};
  const WireProperties wire(amqp_binding::projection(order_created(), riders));
  const std::vector<std::string> headers{"bq-replay-bypass S 1", "traceparent S 00-4bf9-00f0-01",
                                         "tracestate S k=v",     "x-attempts I 0",
                                         "x-schema-version I 1", "x-source-lang S php"};
  EXPECT_EQ(header_entries(wire.get()->headers), headers);
  Codec codec;
  EXPECT_EQ(header_entries(codec.round_trip(*wire.get()).headers), headers);
}

TEST(AmqpWireProperties, AMQPT12_LongUrnOmitsTheType) {
  const std::string urn = "urn:" + std::string(300, 'u');
  const babelqueue::binding::Riders riders{{std::string(256, 'k'), "v"}, {"ok", "v"}};
  const amqp_binding::Projection projection =
      amqp_binding::projection(binding_test::envelope(urn, R"({"id":"m-1"})", "0"), riders);
  const WireProperties wire(projection);
  const amqp_basic_properties_t& p = *wire.get();
  EXPECT_EQ(p._flags & AMQP_BASIC_TYPE_FLAG, 0U);
  EXPECT_NE(p._flags & AMQP_BASIC_MESSAGE_ID_FLAG, 0U);
  EXPECT_EQ(text_of(p.message_id), "m-1");
  EXPECT_EQ(text_of(p.correlation_id), "t-1");
  const std::vector<std::string> headers{"ok S v", "x-attempts I 0"};
  EXPECT_EQ(header_entries(p.headers), headers);
  Codec codec;
  const amqp_basic_properties_t& back = codec.round_trip(p);
  EXPECT_EQ(back._flags, p._flags);
  EXPECT_EQ(header_entries(back.headers), headers);
}

TEST(AmqpWireProperties, AMQP15_UndecodableBodyCarriesOnlyTheConstants) {
  for (const std::string& body : binding_test::undecodable_bodies) {
    const WireProperties wire(amqp_binding::projection(body));
    const amqp_basic_properties_t& p = *wire.get();
    EXPECT_EQ(p._flags, kConstantFlags) << body;
    expect_constants(p);
    EXPECT_EQ(p.headers.num_entries, 0);
    Codec codec;
    EXPECT_EQ(codec.round_trip(p)._flags, kConstantFlags);
  }
  const WireProperties with_riders(
      amqp_binding::projection("not json", {{"traceparent", "00-ab-01"}}));
  EXPECT_EQ(with_riders.get()->_flags, kConstantFlags | AMQP_BASIC_HEADERS_FLAG);
  EXPECT_EQ(header_entries(with_riders.get()->headers),
            std::vector<std::string>{"traceparent S 00-ab-01"});
}

TEST(AmqpWireProperties, AMQP12_PointersOutliveTheProjection) {
  std::optional<amqp_binding::Projection> projection =
      amqp_binding::projection(order_created(), {{"traceparent", std::string(200, 't')}});
  const WireProperties wire(*projection);
  projection.reset();  // the wire form owns its bytes
  EXPECT_EQ(text_of(wire.get()->type), binding_test::kUrn);
  EXPECT_EQ(header_entries(wire.get()->headers).front(), "traceparent S " + std::string(200, 't'));
}

// The transport projects each publish into a WireProperties it reuses: after any earlier body
// (more headers, other properties, an undecodable one), the wire form is that of a fresh one.
TEST(AmqpWireProperties, AMQP12_ReprojectingEqualsAFreshProjection) {
  const babelqueue::binding::Riders riders{{"traceparent", std::string(40, 't')}};
  const std::vector<std::pair<std::string, babelqueue::binding::Riders>> inputs = {
      {order_created(), riders},
      {"not json", {}},
      {binding_test::envelope("urn:x", R"({"schema_version":1})", "3000000000"), {}},
      {order_created(), {}},
      {"not json", riders},
      {order_created(), riders}};
  WireProperties reused;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    reused.project(inputs[i].first, inputs[i].second);
    const WireProperties fresh(amqp_binding::projection(inputs[i].first, inputs[i].second));
    const amqp_basic_properties_t& a = *reused.get();
    const amqp_basic_properties_t& b = *fresh.get();
    EXPECT_EQ(a._flags, b._flags) << i;
    EXPECT_EQ(text_of(a.content_type), text_of(b.content_type)) << i;
    EXPECT_EQ(text_of(a.app_id), text_of(b.app_id)) << i;
    EXPECT_EQ(a.delivery_mode, b.delivery_mode) << i;
    EXPECT_EQ(text_of(a.type), text_of(b.type)) << i;
    EXPECT_EQ(text_of(a.correlation_id), text_of(b.correlation_id)) << i;
    EXPECT_EQ(text_of(a.message_id), text_of(b.message_id)) << i;
    EXPECT_EQ(header_entries(a.headers), header_entries(b.headers)) << i;
    Codec codec;
    EXPECT_EQ(header_entries(codec.round_trip(a).headers), header_entries(b.headers)) << i;
  }
  EXPECT_EQ(reused.get()->_flags & AMQP_BASIC_TYPE_FLAG, AMQP_BASIC_TYPE_FLAG);
}

}  // namespace
