// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The conformance `rabbitmq.property_projection` block (AMQP-30, AMQP-T1) through the real
// client's encoded frames: the fixture bytes published by AmqpTransport to the shared RabbitMQ
// node, read back by a RawClient, carry exactly the properties and headers the manifest lists,
// with their AMQP field types (AMQP-13: integers `I`, or `l` beyond 32 bits; strings `S`),
// persistent delivery (AMQP-12), and the body byte for byte (AMQP-11). The expected values come
// from the manifest, read in place (binding/fixtures.hpp of the core tests:
// BABELQUEUE_CONFORMANCE_DIR overrides the configured path).

#include <babelqueue/json.hpp>
#include <babelqueue/testing/publish_paths.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "binding/fixtures.hpp"
#include "shared_node_test.hpp"

namespace babelqueue::amqp::test {
namespace {

using babelqueue::testing::publish_paths;
using babelqueue::testing::PublishPath;
using babelqueue::testing::PublishPathName;

// The field a manifest value is written as (AMQP-13).
std::optional<RawField> wire_field(const Json& value) {
  if (value.is_string()) return RawField::long_string(value.as_string());
  const std::optional<std::int64_t> n = value.as_int64();
  if (!n) return std::nullopt;
  if (*n >= std::numeric_limits<std::int32_t>::min() &&
      *n <= std::numeric_limits<std::int32_t>::max()) {
    return RawField::int32(static_cast<std::int32_t>(*n));
  }
  return RawField::int64(*n);
}

// The string-valued basic.properties by their manifest names.
const std::map<std::string, std::optional<std::string> RawProperties::*>& string_properties() {
  static const std::map<std::string, std::optional<std::string> RawProperties::*> names = {
      {"content_type", &RawProperties::content_type},
      {"content_encoding", &RawProperties::content_encoding},
      {"correlation_id", &RawProperties::correlation_id},
      {"reply_to", &RawProperties::reply_to},
      {"expiration", &RawProperties::expiration},
      {"message_id", &RawProperties::message_id},
      {"type", &RawProperties::type},
      {"user_id", &RawProperties::user_id},
      {"app_id", &RawProperties::app_id},
      {"cluster_id", &RawProperties::cluster_id},
  };
  return names;
}

class ConformanceWire : public SharedNodeTest, public ::testing::WithParamInterface<PublishPath> {};

TEST_P(ConformanceWire, AMQP_T1_ThePropertyProjectionIsOnTheWire) {
  const Json& block = binding_test::manifest_block("rabbitmq", "property_projection");
  const Json* file = block.find("envelope_file");
  const Json* properties = block.find("properties");
  const Json* headers = block.find("headers");
  ASSERT_TRUE(file != nullptr && properties != nullptr && headers != nullptr) << block.dump();
  const std::string body = binding_test::read_conformance(file->as_string());
  ASSERT_FALSE(body.empty());

  auto t = transport();
  ASSERT_TRUE(GetParam().publish(*t, queue(), body).ok());
  const auto m = raw_get(queue());
  ASSERT_TRUE(m.has_value()) << "the publish never arrived";
  EXPECT_EQ(m->body, body) << "the body was re-encoded";

  for (const auto& [name, value] : properties->as_object()) {
    SCOPED_TRACE("property " + name);
    const auto member = string_properties().find(name);
    ASSERT_NE(member, string_properties().end()) << "a property this test cannot read";
    EXPECT_EQ(m->properties.*(member->second), value.as_string());
  }
  EXPECT_EQ(m->properties.delivery_mode, 2) << "not persistent (AMQP-12)";
  // AMQP-12: of what the manifest leaves out, only content_encoding is set.
  for (const auto& [name, member] : string_properties()) {
    if (properties->find(name) != nullptr) continue;
    EXPECT_EQ(m->properties.*member,
              name == "content_encoding" ? std::optional<std::string>("utf-8") : std::nullopt)
        << "property " << name;
  }
  EXPECT_EQ(m->properties.timestamp, std::nullopt);
  EXPECT_EQ(m->properties.priority, std::nullopt);

  ASSERT_TRUE(m->properties.headers.has_value()) << "no headers table";
  const RawTable& table = *m->properties.headers;
  EXPECT_EQ(table.size(), headers->as_object().size())
      << "extra or repeated headers: " << to_string(table);
  for (const auto& [name, value] : headers->as_object()) {
    SCOPED_TRACE("header " + name);
    const std::optional<RawField> expected = wire_field(value);
    ASSERT_TRUE(expected.has_value()) << "the manifest value is neither a string nor an integer";
    const RawField* got = raw_header(*m, name);
    ASSERT_NE(got, nullptr) << "missing from " << to_string(table);
    EXPECT_EQ(*got, *expected);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryPublishPath, ConformanceWire, ::testing::ValuesIn(publish_paths()),
                         PublishPathName());

}  // namespace
}  // namespace babelqueue::amqp::test
