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

std::vector<HeaderView> views(const RecordHeaders& headers) {
  std::vector<HeaderView> out;
  out.reserve(headers.size());
  for (const RecordHeader& h : headers) {
    out.push_back({h.name, h.value ? std::optional<std::string_view>(*h.value) : std::nullopt});
  }
  return out;
}

RecordHeaders copy(HeaderViews headers) {
  RecordHeaders out;
  out.reserve(headers.size());
  for (const HeaderView& h : headers) {
    out.push_back(
        {std::string(h.name), h.value ? std::optional<std::string>(*h.value) : std::nullopt});
  }
  return out;
}

std::optional<std::string_view> first_header(HeaderViews headers, std::string_view name) {
  for (const HeaderView& h : headers) {
    if (h.name == name) return h.value;
  }
  return std::nullopt;
}

Headers text_headers(HeaderViews headers) {
  Headers out;
  for (const HeaderView& h : headers) {
    if (h.value) out.try_emplace(std::string(h.name), *h.value);
  }
  return out;
}

Incoming incoming(std::string value, HeaderViews headers) {
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
