// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Records in and out: the binding's projection and gate applied to header lists as the wire
// has them (order kept, duplicates and null values possible).

#include "records.hpp"

#include <babelqueue/binding/common.hpp>
#include <babelqueue/binding/kafka.hpp>

#include <utility>

namespace babelqueue::kafka::detail {

OutgoingRecord outgoing(std::string topic, std::string body, const Headers& riders) {
  binding::kafka::Projection p = binding::kafka::projection(body, riders);
  OutgoingRecord r;
  r.topic = std::move(topic);
  r.headers.reserve(p.headers.size());
  for (auto& [name, value] : p.headers)
    r.headers.push_back({std::move(name), std::move(value)});
  r.timestamp_ms = p.timestamp_ms;
  r.value = std::move(body);
  return r;
}

std::optional<std::string_view> first_header(const RecordHeaders& headers, std::string_view name) {
  for (const RecordHeader& h : headers) {
    if (h.name != name) continue;
    if (!h.value) return std::nullopt;
    return std::string_view(*h.value);
  }
  return std::nullopt;
}

Headers text_headers(const RecordHeaders& headers) {
  Headers out;
  for (const RecordHeader& h : headers) {
    if (h.value) out.emplace(h.name, *h.value);
  }
  return out;
}

Incoming incoming(std::string value, const RecordHeaders& headers) {
  Incoming in;
  in.headers = text_headers(headers);
  binding::GateDecision gate =
      binding::schema_version_gate(first_header(headers, "bq-schema-version"));
  if (gate.reject) {
    in.route = std::move(gate.route);
    in.rejected_version = std::move(gate.version);
    in.body = std::move(value);
    return in;
  }
  std::optional<std::int64_t> attempts;
  if (const auto text = first_header(headers, "bq-attempts")) {
    attempts = binding::parse_attempts_header(*text);
  }
  binding::kafka::Reconciliation reconciled = binding::kafka::reconcile(value, attempts);
  if (reconciled.body) {
    in.body = std::move(*reconciled.body);
    in.original_value = std::move(value);
  } else {
    in.body = std::move(value);
    in.decoded = std::move(reconciled.decoded);
  }
  return in;
}

}  // namespace babelqueue::kafka::detail
