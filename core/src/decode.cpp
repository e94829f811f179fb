// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Strict envelope decode (ENV-16..28): one pass over the bytes, no DOM for the frame.

#include <babelqueue/codec.hpp>

#include <charconv>
#include <string>

#include "envelope_access.hpp"
#include "json_build.hpp"
#include "json_scan.hpp"

namespace babelqueue {
namespace {

using detail::Cursor;
using detail::RawNumber;
using detail::RawString;

const char* json_type_name(char first) {
  switch (first) {
    case '{': return "object";
    case '[': return "array";
    case '"': return "string";
    case 't':
    case 'f': return "boolean";
    case 'n': return "null";
    default: return "number";
  }
}

// The first member-type problem of the winning values (ENV-20); reported after the scan, because
// a later duplicate may replace a badly typed earlier one (ENV-19).
struct Problem {
  const char* field = nullptr;
  std::string detail;
};

// A string member: absent/null, a string, or a type problem.
struct StrField {
  bool present = false;
  RawString raw;
  const char* bad_type = nullptr;  // the JSON type seen instead of a string
};

struct IntField {
  bool present = false;
  std::int64_t value = 0;
  std::string bad;  // non-empty: why the value is not an ENV-20 (I) integer
};

// Forbidden members (ENV-28), one bit each.
enum Forbidden : unsigned {
  kTimestamp = 1U << 0,
  kMaxRetries = 1U << 1,
  kMetaAttempts = 1U << 2,
  kSource = 1U << 3,
  kTs = 1U << 4,
};

class Decoder {
 public:
  explicit Decoder(std::string_view body) : body_(body), c_(body) {}

  Result<Envelope, DecodeError> run(std::vector<std::string>* warnings);

 private:
  // Iterates the members of the object at c_.p ('{'); calls fn(name, first_char_of_value) with
  // the cursor at the value, and fn must consume it.
  template <class Fn>
  bool members(Fn&& fn);
  bool skip_value(int depth) {
    detail::NullHandler h;
    return detail::parse_value(c_, h, depth);
  }
  bool raw_value(int depth, std::string& out) {
    out.clear();
    detail::CompactHandler h{&out, {}};
    return detail::parse_value(c_, h, depth);
  }
  bool read_string(StrField& f, int depth);
  bool read_int(IntField& f, int depth);
  bool read_unknown(RawMembers& into, std::string_view name, int depth);
  bool read_meta();
  bool read_dead_letter();
  std::string_view key_text(const RawString& k) {
    if (!k.escaped) return k.raw;
    key_scratch_.clear();
    detail::unescape_append(key_scratch_, k.raw);
    return key_scratch_;
  }
  void note(const char* field, const StrField& f) {
    if (f.bad_type != nullptr && problem_.field == nullptr) {
      problem_.field = field;
      problem_.detail = std::string("expected string, got ") + f.bad_type;
    }
  }
  void note(const char* field, const IntField& f) {
    if (!f.bad.empty() && problem_.field == nullptr) {
      problem_.field = field;
      problem_.detail = f.bad;
    }
  }

  std::string_view body_;
  Cursor c_;
  std::string key_scratch_;
  Problem problem_;
  unsigned forbidden_ = 0;

  // Top level.
  StrField job_, urn_, trace_id_;
  bool has_data_ = false;
  const char* data_bad_ = nullptr;
  Json data_ = Json(JsonObject{});
  IntField attempts_;
  RawMembers unknown_;
  // meta
  bool has_meta_ = false;
  const char* meta_bad_ = nullptr;
  StrField meta_id_, meta_queue_, meta_lang_;
  IntField schema_version_, created_at_;
  RawMembers meta_unknown_;
  // dead_letter
  bool has_dl_ = false;
  const char* dl_bad_ = nullptr;
  StrField dl_reason_, dl_error_, dl_exception_, dl_original_queue_, dl_lang_;
  IntField dl_failed_at_, dl_attempts_;
  RawMembers dl_unknown_;
};

template <class Fn>
bool Decoder::members(Fn&& fn) {
  ++c_.p;  // '{'
  detail::skip_ws(c_);
  if (c_.p < c_.end && *c_.p == '}') {
    ++c_.p;
    return true;
  }
  for (;;) {
    if (c_.p >= c_.end || *c_.p != '"') return c_.fail("expected a member name");
    RawString k;
    if (!detail::scan_string(c_, k)) return false;
    detail::skip_ws(c_);
    if (c_.p >= c_.end || *c_.p != ':') return c_.fail("expected ':'");
    ++c_.p;
    detail::skip_ws(c_);
    if (c_.p >= c_.end) return c_.fail("unexpected end of input");
    if (!fn(key_text(k))) return false;
    detail::skip_ws(c_);
    if (c_.p >= c_.end) return c_.fail("unexpected end of input");
    if (*c_.p == ',') {
      ++c_.p;
      detail::skip_ws(c_);
      continue;
    }
    if (*c_.p == '}') {
      ++c_.p;
      return true;
    }
    return c_.fail("expected ',' or '}'");
  }
}

bool Decoder::read_string(StrField& f, int depth) {
  f = StrField{};
  const char first = *c_.p;
  if (first == '"') {
    f.present = true;
    return detail::scan_string(c_, f.raw);
  }
  if (first == 'n') return detail::scan_literal(c_, "null");
  f.bad_type = json_type_name(first);
  return skip_value(depth);
}

bool Decoder::read_int(IntField& f, int depth) {
  f = IntField{};
  const char first = *c_.p;
  if (first == 'n') return detail::scan_literal(c_, "null");
  if (first != '-' && !detail::is_digit(first)) {
    f.bad = std::string("expected integer, got ") + json_type_name(first);
    return skip_value(depth);
  }
  RawNumber n;
  if (!detail::scan_number(c_, n)) return false;
  if (!n.integer) {
    f.bad = "expected integer, got " + std::string(n.lexeme);
    return true;
  }
  auto r = std::from_chars(n.lexeme.data(), n.lexeme.data() + n.lexeme.size(), f.value);
  if (r.ec != std::errc()) {
    f.bad = "integer out of range: " + std::string(n.lexeme.substr(0, 40));
    return true;
  }
  f.present = true;
  return true;
}

bool Decoder::read_unknown(RawMembers& into, std::string_view name, int depth) {
  for (auto& m : into) {
    if (m.first == name) return raw_value(depth, m.second);  // last wins, first position
  }
  into.emplace_back(std::string(name), std::string());
  return raw_value(depth, into.back().second);
}

bool Decoder::read_meta() {
  has_meta_ = false;
  meta_bad_ = nullptr;
  meta_id_ = meta_queue_ = meta_lang_ = StrField{};
  schema_version_ = created_at_ = IntField{};
  meta_unknown_.clear();
  const char first = *c_.p;
  if (first == 'n') return detail::scan_literal(c_, "null");
  if (first != '{') {
    meta_bad_ = json_type_name(first);
    return skip_value(1);
  }
  has_meta_ = true;
  return members([this](std::string_view name) {
    if (name == "id") return read_string(meta_id_, 2);
    if (name == "queue") return read_string(meta_queue_, 2);
    if (name == "lang") return read_string(meta_lang_, 2);
    if (name == "schema_version") return read_int(schema_version_, 2);
    if (name == "created_at") return read_int(created_at_, 2);
    unsigned bit = 0;
    if (name == "max_retries") bit = kMaxRetries;
    if (name == "attempts") bit = kMetaAttempts;
    if (name == "source") bit = kSource;
    if (name == "ts") bit = kTs;
    if (bit != 0) {
      forbidden_ |= bit;
      return skip_value(2);
    }
    return read_unknown(meta_unknown_, name, 2);
  });
}

bool Decoder::read_dead_letter() {
  has_dl_ = false;
  dl_bad_ = nullptr;
  dl_reason_ = dl_error_ = dl_exception_ = dl_original_queue_ = dl_lang_ = StrField{};
  dl_failed_at_ = dl_attempts_ = IntField{};
  dl_unknown_.clear();
  const char first = *c_.p;
  if (first == 'n') return detail::scan_literal(c_, "null");
  if (first != '{') {
    dl_bad_ = json_type_name(first);
    return skip_value(1);
  }
  has_dl_ = true;
  return members([this](std::string_view name) {
    if (name == "reason") return read_string(dl_reason_, 2);
    if (name == "error") return read_string(dl_error_, 2);
    if (name == "exception") return read_string(dl_exception_, 2);
    if (name == "failed_at") return read_int(dl_failed_at_, 2);
    if (name == "original_queue") return read_string(dl_original_queue_, 2);
    if (name == "attempts") return read_int(dl_attempts_, 2);
    if (name == "lang") return read_string(dl_lang_, 2);
    return read_unknown(dl_unknown_, name, 2);
  });
}

constexpr const char* kForbiddenPointers[] = {"/timestamp", "/meta/max_retries", "/meta/attempts",
                                              "/meta/source", "/meta/ts"};

Result<Envelope, DecodeError> Decoder::run(std::vector<std::string>* warnings) {
  if (!detail::valid_utf8(body_)) return DecodeError("body is not valid UTF-8");
  detail::skip_ws(c_);
  if (c_.at_end()) return DecodeError("invalid JSON at offset 0: empty body");
  if (*c_.p != '{') {
    const char first = *c_.p;
    if (!skip_value(0)) return detail::syntax_error(c_);
    detail::skip_ws(c_);
    if (!c_.at_end()) {
      return DecodeError("trailing data at offset " + std::to_string(c_.offset()), c_.offset());
    }
    return DecodeError(std::string("expected a JSON object, got ") + json_type_name(first));
  }
  const bool ok = members([this](std::string_view name) {
    if (name == "job") return read_string(job_, 1);
    if (name == "urn") return read_string(urn_, 1);  // any other type: ignored (ENV-20)
    if (name == "trace_id") return read_string(trace_id_, 1);
    if (name == "data") {
      has_data_ = false;
      data_bad_ = nullptr;
      const char first = *c_.p;
      if (first == 'n') return detail::scan_literal(c_, "null");
      if (first != '{') {
        data_bad_ = json_type_name(first);
        return skip_value(1);
      }
      has_data_ = true;
      detail::BuildHandler h;
      if (!detail::parse_value(c_, h, 1)) return false;
      data_ = std::move(h.result);
      return true;
    }
    if (name == "meta") return read_meta();
    if (name == "attempts") return read_int(attempts_, 1);
    if (name == "dead_letter") return read_dead_letter();
    if (name == "timestamp") {
      forbidden_ |= kTimestamp;
      return skip_value(1);
    }
    return read_unknown(unknown_, name, 1);
  });
  if (!ok) return detail::syntax_error(c_);
  detail::skip_ws(c_);
  if (!c_.at_end()) {
    return DecodeError("trailing data at offset " + std::to_string(c_.offset()), c_.offset());
  }

  // Member types of the winning values (ENV-20).
  note("job", job_);
  note("trace_id", trace_id_);
  if (data_bad_ != nullptr && problem_.field == nullptr) {
    problem_.field = "data";
    problem_.detail = std::string("expected object, got ") + data_bad_;
  }
  if (meta_bad_ != nullptr && problem_.field == nullptr) {
    problem_.field = "meta";
    problem_.detail = std::string("expected object, got ") + meta_bad_;
  }
  note("meta.id", meta_id_);
  note("meta.queue", meta_queue_);
  note("meta.lang", meta_lang_);
  note("meta.schema_version", schema_version_);
  note("meta.created_at", created_at_);
  note("attempts", attempts_);
  if (dl_bad_ != nullptr && problem_.field == nullptr) {
    problem_.field = "dead_letter";
    problem_.detail = std::string("expected object, got ") + dl_bad_;
  }
  note("dead_letter.reason", dl_reason_);
  note("dead_letter.error", dl_error_);
  note("dead_letter.exception", dl_exception_);
  note("dead_letter.failed_at", dl_failed_at_);
  note("dead_letter.original_queue", dl_original_queue_);
  note("dead_letter.attempts", dl_attempts_);
  note("dead_letter.lang", dl_lang_);
  if (problem_.field != nullptr) {
    return DecodeError(std::string(problem_.field) + ": " + problem_.detail);
  }

  if (warnings != nullptr) {
    for (unsigned i = 0; i < 5; ++i) {
      if ((forbidden_ & (1U << i)) != 0) {
        warnings->push_back(std::string("babelqueue: dropped forbidden non-canonical envelope key ") +
                            kForbiddenPointers[i] + " (message-envelope.md §10)");
      }
    }
  }

  // Build the envelope: strings with escapes are decoded into scratch storage first.
  std::string scratch[6];
  auto text = [&scratch](const StrField& f, int slot) -> std::string_view {
    if (!f.present) return {};
    if (!f.raw.escaped) return f.raw.raw;
    detail::unescape_append(scratch[slot], f.raw.raw);
    return scratch[slot];
  };
  std::string_view urn = trim_w(text(job_, 0));
  if (urn.empty() && urn_.present) urn = trim_w(text(urn_, 1));
  Envelope env;
  detail_access::set_strings(env, {urn, text(trace_id_, 2), text(meta_id_, 3),
                                   text(meta_queue_, 4), text(meta_lang_, 5)});
  detail_access::set_has_data(env, has_data_);
  if (has_data_) detail_access::data(env) = std::move(data_);
  detail_access::set_meta(env, has_meta_, schema_version_.present, schema_version_.value,
                          created_at_.value);
  detail_access::set_attempts(env, attempts_.present, attempts_.value);
  detail_access::unknown(env) = std::move(unknown_);
  detail_access::meta_unknown(env) = std::move(meta_unknown_);
  if (has_dl_) {
    DeadLetter dl;
    dl.reason = unescape(dl_reason_.raw);
    if (dl_error_.present) dl.error = unescape(dl_error_.raw);
    if (dl_exception_.present) dl.exception = unescape(dl_exception_.raw);
    dl.failed_at = dl_failed_at_.value;
    dl.original_queue = unescape(dl_original_queue_.raw);
    dl.attempts = dl_attempts_.value;
    dl.lang = unescape(dl_lang_.raw);
    dl.unknown = std::move(dl_unknown_);
    detail_access::dead_letter(env) = std::move(dl);
  }
  return env;
}

}  // namespace

Result<Envelope, DecodeError> try_decode(std::string_view body,
                                         std::vector<std::string>* warnings) {
  try {
    return Decoder(body).run(warnings);
  } catch (const std::bad_alloc&) {
    return DecodeError("out of memory while decoding");
  }
}

Envelope decode(std::string_view body, std::vector<std::string>* warnings) {
  return try_decode(body, warnings).value();
}

}  // namespace babelqueue
