// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// What the per-broker binding tests share: the order-created fixture's contract values, the
// shared conformance suite read in place, and small body builders.

#include <babelqueue/binding/amqp10.hpp>
#include <babelqueue/binding/common.hpp>
#include <babelqueue/json.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace binding_test {

namespace bb = babelqueue::binding;
using babelqueue::Json;
using AmqpValue = bb::amqp10::Value;

inline constexpr std::string_view kUrn = "urn:babel:orders:created";
inline constexpr std::string_view kTrace = "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b";
inline constexpr std::string_view kId = "f1e2d3c4-b5a6-4789-90ab-cdef01234567";
inline constexpr std::int64_t kCreatedAt = 1749132727000;

inline std::string conformance_dir() {
  if (const char* env = std::getenv("BABELQUEUE_CONFORMANCE_DIR"); env != nullptr && *env != 0) {
    return env;
  }
  return BABELQUEUE_DEFAULT_CONFORMANCE_DIR;
}

// The bytes of a shared conformance file; empty (plus a test failure) when it cannot be read.
inline std::string read_conformance(const std::string& relative) {
  const std::string path = conformance_dir() + "/" + relative;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return {};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string order_created() {
  return read_conformance("fixtures/order-created.json");
}

// The order-created fixture with its `"attempts": 0` replaced by `attempts` (the wire tests of
// attempts reconciliation publish it as a peer would).
inline std::string order_created_with_attempts(std::int64_t attempts) {
  std::string body = order_created();
  const std::string from = "\"attempts\": 0";
  const std::size_t at = body.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "the fixture has no " << from;
    return body;
  }
  body.replace(at, from.size(), "\"attempts\": " + std::to_string(attempts));
  return body;
}

inline const Json& manifest() {
  static const Json m = Json::parse(read_conformance("manifest.json"));
  return m;
}

// The manifest's `broker.section` table; an empty object (plus a test failure) when absent.
inline const Json& manifest_block(std::string_view broker, std::string_view section) {
  const Json* b = manifest().find(broker);
  if (b == nullptr || b->find(section) == nullptr) {
    ADD_FAILURE() << "manifest has no " << broker << "." << section;
    static const Json empty = Json::object();
    return empty;
  }
  return *b->find(section);
}

inline std::map<std::string, std::string> string_table(const Json& object) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : object.as_object())
    out.emplace(name, value.as_string());
  return out;
}

template <class T>
AmqpValue av(T v) {
  return AmqpValue(std::in_place_type<T>, std::move(v));
}

// A compact envelope with the given meta/attempts members, for omission and width tests.
inline std::string envelope(std::string_view job, std::string_view meta,
                            std::string_view attempts) {
  std::string s = R"({"job":")";
  s += job;
  s += R"(","trace_id":"t-1","data":{},"meta":)";
  s += meta;
  s += R"(,"attempts":)";
  s += attempts;
  s += "}";
  return s;
}

inline std::string route(std::string_view escaped) {
  return std::string(bb::UNSUPPORTED_ROUTE_PREFIX) + std::string(escaped);
}

inline const std::vector<std::string> undecodable_bodies = {
    "not json", R"({"job":"urn:x","data":[1]})", "",
    "[1,2]",    std::string("\xFF\xFE\x41"),     R"({"job":"urn:x","attempts":1.5})"};

}  // namespace binding_test
