// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Records in and out: the binding's projection and gate applied to header lists as the wire
// has them (order kept, duplicates and null values possible).

#include "records.hpp"

#include <babelqueue/binding/common.hpp>
#include <babelqueue/binding/kafka.hpp>

#include <array>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

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

RecordHeaders copy(HeaderViews headers) {
  RecordHeaders out;
  out.reserve(headers.size());
  for (const HeaderView& h : headers) {
    out.push_back(
        {std::string(h.name), h.value ? std::optional<std::string>(*h.value) : std::nullopt});
  }
  return out;
}

namespace {

// Writes to `out` (room for every header) the headers of `headers` that have a value, by name, in
// their order among equal names (a stable insertion sort: a record has few headers); returns
// their number.
std::size_t sort_by_name(HeaderViews headers, std::span<const HeaderView*> out) {
  std::size_t n = 0;
  for (const HeaderView& h : headers) {
    if (!h.value) continue;
    std::size_t at = n++;
    for (; at > 0 && h.name < out[at - 1]->name; --at)
      out[at] = out[at - 1];
    out[at] = &h;
  }
  return n;
}

}  // namespace

Headers text_headers(HeaderViews headers) {
  // By name first, so that each entry is appended to the flat map, none inserted in between.
  constexpr std::size_t kFew = 16;
  std::array<const HeaderView*, kFew> few{};
  std::vector<const HeaderView*> many(headers.size() > kFew ? headers.size() : 0);
  const std::span<const HeaderView*> sorted =
      many.empty() ? std::span<const HeaderView*>(few) : std::span<const HeaderView*>(many);
  const std::size_t n = sort_by_name(headers, sorted);
  Headers out;
  out.reserve(n);
  for (const HeaderView* h : sorted.first(n))
    out.try_emplace(h->name, *h->value);  // the first of equal names wins
  return out;
}

Incoming incoming(ReceivedMessage& msg, std::string value, const JudgedHeaders& headers) {
  Incoming in;
  binding::GateDecision gate = binding::schema_version_gate(headers.schema_version);
  if (gate.reject) {
    msg.route = std::move(gate.route);
    in.rejected_version = std::move(gate.version);
    msg.body = std::move(value);
    return in;
  }
  std::optional<std::int64_t> attempts;
  if (headers.attempts) attempts = binding::parse_attempts_header(*headers.attempts);
  if (std::optional<std::string> rewritten =
          binding::kafka::reconcile(value, attempts, msg.decoded)) {
    msg.body = std::move(*rewritten);
    in.original_value = std::move(value);
  } else {
    msg.body = std::move(value);
  }
  return in;
}

}  // namespace babelqueue::kafka::detail
