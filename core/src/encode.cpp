// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Canonical compact encode (ENV-11..15, ENV-34..36) in the ENV-12 member order.

#include <babelqueue/codec.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <string>

#include "envelope_access.hpp"

namespace babelqueue {
namespace {

void append_int(std::string& out, std::int64_t v) {
  std::array<char, 24> buf{};
  auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  out.append(buf.data(), r.ptr);
}

void member(std::string& out, std::string_view name_with_quotes_colon, std::string_view value) {
  out.append(name_with_quotes_colon);
  append_json_string(out, value);
}

// Unknown members after the known ones, sorted by name in byte order (ENV-12).
void append_unknown(std::string& out, const RawMembers& members) {
  auto emit = [&out](const std::pair<std::string, std::string>& m) {
    out.push_back(',');
    append_json_string(out, m.first);
    out.push_back(':');
    out.append(m.second);
  };
  if (members.size() == 1) {
    emit(members.front());
    return;
  }
  std::vector<const std::pair<std::string, std::string>*> sorted;
  sorted.reserve(members.size());
  for (const auto& m : members)
    sorted.push_back(&m);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (const auto* m : sorted)
    emit(*m);
}

void append_optional_string(std::string& out, const std::optional<std::string>& s) {
  if (s) {
    append_json_string(out, *s);
  } else {
    out.append("null");
  }
}

}  // namespace

namespace {

void append_envelope(const Envelope& env, std::string& out) {
  const Meta meta = env.meta();
  const auto raw_data = detail_access::canonical_raw_data(env);
  out.reserve(out.size() + 160 + env.urn().size() + env.trace_id().size() + meta.id.size() +
              meta.queue.size() + meta.lang.size() +
              (raw_data ? raw_data->size() : 16 * env.data().size()));
  member(out, "{\"job\":", env.urn());
  member(out, ",\"trace_id\":", env.trace_id());
  out.append(",\"data\":");
  if (raw_data) {
    out.append(*raw_data);  // validated and already canonical: no need to build the Json
  } else {
    env.data().dump_to(out);
  }
  member(out, ",\"meta\":{\"id\":", meta.id);
  member(out, ",\"queue\":", meta.queue);
  member(out, ",\"lang\":", meta.lang);
  out.append(",\"schema_version\":");
  append_int(out, meta.schema_version);
  out.append(",\"created_at\":");
  append_int(out, meta.created_at);
  if (!env.meta_unknown().empty()) append_unknown(out, env.meta_unknown());
  out.append("},\"attempts\":");
  append_int(out, env.attempts());
  if (const auto& dl = env.dead_letter()) {
    member(out, ",\"dead_letter\":{\"reason\":", dl->reason);
    out.append(",\"error\":");
    append_optional_string(out, dl->error);
    out.append(",\"exception\":");
    append_optional_string(out, dl->exception);
    out.append(",\"failed_at\":");
    append_int(out, dl->failed_at);
    member(out, ",\"original_queue\":", dl->original_queue);
    out.append(",\"attempts\":");
    append_int(out, dl->attempts);
    member(out, ",\"lang\":", dl->lang);
    if (!dl->unknown.empty()) append_unknown(out, dl->unknown);
    out.push_back('}');
  }
  if (!env.unknown().empty()) append_unknown(out, env.unknown());
  out.push_back('}');
}

}  // namespace

void encode_to(const Envelope& env, std::string& out) {
  const std::size_t mark = out.size();
  try {
    append_envelope(env, out);
  } catch (...) {
    out.resize(mark);  // nothing half-written is left behind
    throw;
  }
}

std::string encode(const Envelope& env) {
  std::string out;
  encode_to(env, out);
  return out;
}

}  // namespace babelqueue
