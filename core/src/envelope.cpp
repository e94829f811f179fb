// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// make (ENV-10), accepts (ENV-29), annotate (ENV-39) and the small helpers around them.

#include <cxxabi.h>

#include <babelqueue/codec.hpp>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <typeinfo>

#include "envelope_access.hpp"
#include "random.hpp"

namespace babelqueue {

namespace {

// Length of the W whitespace character (ENV-10) starting at s[i], or 0.
std::size_t w_prefix(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 == 0x20 || (b0 >= 0x09 && b0 <= 0x0D)) return 1;
  const std::size_t left = s.size() - i;
  if (b0 == 0xC2 && left >= 2) {
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    return (b1 == 0x85 || b1 == 0xA0) ? 2 : 0;
  }
  if (left < 3) return 0;
  const auto b1 = static_cast<unsigned char>(s[i + 1]);
  const auto b2 = static_cast<unsigned char>(s[i + 2]);
  if (b0 == 0xE1) return (b1 == 0x9A && b2 == 0x80) ? 3 : 0;                           // U+1680
  if (b0 == 0xE2 && b1 == 0x80) {
    return ((b2 >= 0x80 && b2 <= 0x8A) || b2 == 0xA8 || b2 == 0xA9 || b2 == 0xAF) ? 3 : 0;
  }
  if (b0 == 0xE2) return (b1 == 0x81 && b2 == 0x9F) ? 3 : 0;  // U+205F
  if (b0 == 0xE3) return (b1 == 0x80 && b2 == 0x80) ? 3 : 0;  // U+3000
  return 0;
}

// Length of a W character that ends exactly at s[end) , or 0.
std::size_t w_suffix(std::string_view s, std::size_t end) {
  for (std::size_t len : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
    if (end >= len && w_prefix(s, end - len) == len) return len;
  }
  return 0;
}

std::string demangle(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return (status == 0 && out) ? std::string(out.get()) : std::string(mangled);
}

}  // namespace

std::string_view trim_w(std::string_view s) noexcept {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e) {
    const std::size_t n = w_prefix(s.substr(0, e), b);
    if (n == 0) break;
    b += n;
  }
  while (e > b) {
    const std::size_t n = w_suffix(s.substr(0, e), e);
    if (n == 0 || e - n < b) break;
    e -= n;
  }
  return s.substr(b, e - b);
}

std::int64_t now_ms() noexcept {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string uuid_v4() {
  std::string out(36, '\0');
  detail::uuid_v4_into(out.data());
  return out;
}

Envelope make(std::string_view urn, Json data, const MakeOptions& options) {
  const std::string_view u = trim_w(urn);
  if (u.empty()) throw Error(ErrorCode::EmptyUrn, "make: the URN is empty");
  if (data.is_null()) data = Json(JsonObject{});
  if (!data.is_object()) throw Error(ErrorCode::Usage, "make: data must be a JSON object");
  char ids[72];
  std::string_view trace = trim_w(options.trace_id);
  if (trace.empty()) {
    detail::uuid_v4_into(ids);
    trace = std::string_view(ids, 36);
  }
  detail::uuid_v4_into(ids + 36);
  const std::string_view queue =
      trim_w(options.queue).empty() ? std::string_view("default") : options.queue;
  Envelope env;
  detail_access::set_strings(env, {u, trace, std::string_view(ids + 36, 36), queue, SOURCE_LANG});
  detail_access::data(env) = std::move(data);
  detail_access::set_has_data(env, true);
  detail_access::set_meta(env, true, true, SCHEMA_VERSION, now_ms());
  detail_access::set_attempts(env, true, 0);
  return env;
}

bool accepts(const Envelope& env) noexcept {
  return !env.urn().empty() && env.has_meta() && env.meta().schema_version == SCHEMA_VERSION &&
         env.has_data() && !trim_w(env.trace_id()).empty() && env.has_attempts();
}

FailureCause cause_of(const std::exception& e) {
  return FailureCause{e.what(), demangle(typeid(e).name())};
}

FailureCause cause_of(const std::exception_ptr& e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return cause_of(ex);
  } catch (...) {
  }
  return FailureCause{"unknown exception", "unknown"};
}

Envelope annotate(const Envelope& env, std::string_view reason, std::string_view original_queue,
                  std::int64_t attempts, const std::optional<FailureCause>& cause,
                  std::optional<std::int64_t> failed_at_ms) {
  Envelope out = env;
  DeadLetter dl;
  dl.reason = std::string(reason);
  if (cause) {
    dl.error = cause->message;
    dl.exception = cause->type;
  }
  dl.failed_at = failed_at_ms ? *failed_at_ms : now_ms();
  dl.original_queue = std::string(original_queue);
  dl.attempts = attempts;
  dl.lang = std::string(SOURCE_LANG);
  out.set_dead_letter(std::move(dl));
  return out;
}

void Envelope::set_data(Json data) {
  if (data.is_null()) data = Json(JsonObject{});
  if (!data.is_object()) throw Error(ErrorCode::Usage, "set_data: data must be a JSON object");
  data_ = std::move(data);
  has_data_ = true;
}

bool operator==(const Envelope& a, const Envelope& b) noexcept {
  return a.urn() == b.urn() && a.trace_id() == b.trace_id() && a.data_ == b.data_ &&
         a.meta().id == b.meta().id &&
         a.meta().queue == b.meta().queue && a.meta().lang == b.meta().lang &&
         a.schema_version_ == b.schema_version_ && a.created_at_ == b.created_at_ &&
         a.attempts_ == b.attempts_ && a.has_data_ == b.has_data_ && a.has_meta_ == b.has_meta_ &&
         a.has_schema_version_ == b.has_schema_version_ && a.has_attempts_ == b.has_attempts_ &&
         a.dead_letter_ == b.dead_letter_ && a.unknown_ == b.unknown_ &&
         a.meta_unknown_ == b.meta_unknown_;
}

}  // namespace babelqueue
