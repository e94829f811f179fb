// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// make (ENV-10), accepts (ENV-29), annotate (ENV-39) and the small helpers around them.

#include <cxxabi.h>

#include <babelqueue/codec.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <typeinfo>
#include <utility>

#include "envelope_access.hpp"
#include "json_build.hpp"
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
  if (b0 == 0xE1) return (b1 == 0x9A && b2 == 0x80) ? 3 : 0;  // U+1680
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

// A printable ASCII byte: never part of a W character.
bool plain(char ch) {
  const auto u = static_cast<unsigned char>(ch);
  return u > 0x20 && u < 0x80;
}

}  // namespace

std::string_view trim_w(std::string_view s) noexcept {
  if (s.empty() || (plain(s.front()) && plain(s.back()))) return s;  // the common case
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
  Envelope env =
      detail_access::with_strings({u, trace, std::string_view(ids + 36, 36), queue, SOURCE_LANG});
  detail_access::set_data(env, std::move(data));
  detail_access::set_meta(env, true, true, SCHEMA_VERSION, now_ms());
  detail_access::set_attempts(env, true, 0);
  return env;
}

bool accepts(const Envelope& env) noexcept {
  const std::string_view trace = env.trace_id();
  // A trace id that starts with a plain byte cannot trim to empty: no trim_w call.
  return !env.urn().empty() && env.has_meta() && env.meta().schema_version == SCHEMA_VERSION &&
         env.has_data() && !trace.empty() && (plain(trace.front()) || !trim_w(trace).empty()) &&
         env.has_attempts();
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

constinit const Envelope::Extras Envelope::kNoExtras{};

Envelope::Extras& Envelope::mutable_extras() {
  if (!extras_) extras_ = std::make_unique<Extras>();
  return *extras_;
}

void Envelope::set_dead_letter(std::optional<DeadLetter> block) {
  if (block || extras_) mutable_extras().dead_letter = std::move(block);
}

void Envelope::set_data(Json data) {
  if (data.is_null()) data = Json(JsonObject{});
  if (!data.is_object()) throw Error(ErrorCode::Usage, "set_data: data must be a JSON object");
  data_ = std::move(data);
  data_state_.store(kDataReady, std::memory_order_release);
  f_.data_raw_canonical = false;
  f_.has_data = true;
}

const Json& Envelope::parse_data() const {
  static const Json kNoData{JsonObject{}};
  for (;;) {
    int state = data_state_.load(std::memory_order_acquire);
    if (state == kDataReady) return data_ ? *data_ : kNoData;
    if (state == kDataParsing) {
      data_state_.wait(kDataParsing, std::memory_order_acquire);
      continue;
    }
    if (!data_state_.compare_exchange_weak(state, kDataParsing, std::memory_order_acquire)) {
      continue;
    }
    try {
      // The text was validated by decode, so only std::bad_alloc can come out of here.
      data_ = detail::parse_json(view(f_.data_raw), false).value();
    } catch (...) {
      data_state_.store(kDataPending, std::memory_order_release);
      data_state_.notify_all();
      throw;
    }
    data_state_.store(kDataReady, std::memory_order_release);
    data_state_.notify_all();
    return *data_;
  }
}

void Envelope::copy_data_from(const Envelope& other) {
  if (other.data_state_.load(std::memory_order_acquire) == kDataReady) {
    data_ = other.data_;
    data_state_.store(kDataReady, std::memory_order_relaxed);
  } else {
    data_.reset();
    data_state_.store(kDataPending, std::memory_order_relaxed);
  }
}

Envelope::Envelope(const Envelope& other)
    : text_(other.text_size() != 0 ? std::make_unique_for_overwrite<char[]>(other.text_size())
                                   : nullptr),
      f_(other.f_),
      extras_(other.extras_ ? std::make_unique<Extras>(*other.extras_) : nullptr) {
  if (text_size() != 0) std::memcpy(text_.get(), other.text_.get(), text_size());
  copy_data_from(other);
}

void Envelope::clear_fields() noexcept {
  // Copied from a constant: GCC clears a 128-byte object with `rep stos`, slow to start up.
  static constexpr Fields kNone{};
  f_ = kNone;
}

// The state for an envelope that takes this one's payload; this one is left without one. A
// pending payload is still text (data_ is empty), so only a parsed one moves as a Json.
int Envelope::take_data_state() noexcept {
  const int state =
      data_state_.load(std::memory_order_acquire) == kDataReady ? kDataReady : kDataPending;
  data_state_.store(kDataReady, std::memory_order_relaxed);
  return state;
}

Envelope::Envelope(Envelope&& other) noexcept
    : text_(std::move(other.text_)),
      f_(other.f_),
      data_(std::exchange(other.data_, std::nullopt)),
      data_state_(other.take_data_state()),
      extras_(std::move(other.extras_)) {
  other.clear_fields();
}

Envelope& Envelope::operator=(const Envelope& other) {
  if (this != &other) *this = Envelope(other);
  return *this;
}

Envelope& Envelope::operator=(Envelope&& other) noexcept {
  if (this != &other) {
    text_ = std::move(other.text_);
    f_ = other.f_;
    other.clear_fields();
    data_ = std::exchange(other.data_, std::nullopt);
    data_state_.store(other.take_data_state(), std::memory_order_relaxed);
    extras_ = std::move(other.extras_);
  }
  return *this;
}

bool operator==(const Envelope& a, const Envelope& b) noexcept {
  try {
    return a.urn() == b.urn() && a.trace_id() == b.trace_id() && a.meta().id == b.meta().id &&
           a.meta().queue == b.meta().queue && a.meta().lang == b.meta().lang &&
           a.f_.schema_version == b.f_.schema_version && a.f_.created_at == b.f_.created_at &&
           a.f_.attempts == b.f_.attempts && a.f_.has_data == b.f_.has_data &&
           a.f_.has_meta == b.f_.has_meta && a.f_.has_schema_version == b.f_.has_schema_version &&
           a.f_.has_attempts == b.f_.has_attempts && a.dead_letter() == b.dead_letter() &&
           a.unknown() == b.unknown() && a.meta_unknown() == b.meta_unknown() &&
           a.data() == b.data();
  } catch (...) {  // std::bad_alloc while parsing data
    return false;
  }
}

}  // namespace babelqueue
