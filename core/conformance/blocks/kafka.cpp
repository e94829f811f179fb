// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The `kafka` block: the Kafka header projection (05 KFK-5), the authoritative bq-attempts
// header with its body rewrite (KFK-10) and the string gate on bq-schema-version (RT-40).

#include "blocks/blocks.hpp"
#include "blocks/broker.hpp"

#include <babelqueue/binding/common.hpp>
#include <babelqueue/binding/kafka.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace babelqueue::conformance::detail {

namespace {

void run_projection(Runner& r, const std::string& block, const Json& proj) {
  run_string_map_projection(r, block, proj, "headers", [](const std::string& body) {
    return binding::kafka::projection(body).headers;
  });
}

std::int64_t reconcile(const Json& c, std::int64_t body, std::int64_t want, Problems& p) {
  known_members(c,
                {"name", "description", "body_attempts", "header_attempts", "expected_attempts"});
  const auto header_value = nullable_int_member(c, "header_attempts");
  std::optional<std::int64_t> header;
  if (header_value) {
    header = binding::parse_attempts_header(std::to_string(*header_value));
    p.check(header == header_value,
            "parse_attempts_header(" + quote(std::to_string(*header_value)) + ") failed");
  }
  // The body rewrite must carry the same value (and only when the header differs).
  Envelope env =
      make("urn:babel:conformance:kafka", Json::object(), {.queue = "conformance", .trace_id = {}});
  env.set_attempts(body);
  const std::string bytes = encode(env);
  const auto rewritten = binding::kafka::reconcile_body(bytes, header);
  if (header && *header != body) {
    p.check(rewritten.has_value() && decode(*rewritten).attempts() == want,
            "kafka::reconcile_body did not rewrite attempts to " + std::to_string(want));
  } else {
    p.check(!rewritten.has_value(), "kafka::reconcile_body rewrote a body that needs none");
  }
  return binding::kafka::attempts(body, header);
}

}  // namespace

void register_kafka_block(Registry& registry) {
  register_broker(
      registry, "kafka",
      {.projection = run_projection, .reconcile = reconcile, .gate_property = "bq-schema-version"});
}

}  // namespace babelqueue::conformance::detail
