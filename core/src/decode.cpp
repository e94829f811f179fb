// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Strict envelope decode (ENV-16..28): one pass over the bytes, no DOM for the frame.

#include <babelqueue/codec.hpp>

#include <charconv>
#include <optional>
#include <string>

#include "decode_internal.hpp"
#include "decode_parts.hpp"

namespace babelqueue {
namespace {

using detail::assemble;
using detail::Cursor;
using detail::json_type_name;
using detail::Parts;
using detail::RawNumber;
using detail::RawString;
using detail::read_data_object;
using detail::read_short_int;
using detail::Token;
using detail::token_at;

// The first member-type problem of the winning values (ENV-20); reported after the scan, because
// a later duplicate may replace a badly typed earlier one (ENV-19).
struct Problem {
  const char* field = nullptr;
  std::string detail;
};

// A string member: absent/null, a string, or a type problem. Trivial on purpose: the decoder
// leaves fields it has not met uninitialized and tracks them in a bit set instead of zeroing a
// large object per decode.
struct StrField {
  RawString raw;
  bool present;
  char bad_first;  // first byte of a value of another JSON type (0: none)
};

struct IntField {
  bool present;
  std::int64_t value;
  const char* bad;          // why the value is not an ENV-20 (I) integer
  std::string_view lexeme;  // the offending number, for the message
};

constexpr StrField kNoString{{}, false, 0};
constexpr IntField kNoInt{false, 0, nullptr, {}};

// Which of the always-present fields have been written.
enum Seen : unsigned {
  SeenJob = 1U << 0,
  SeenUrn = 1U << 1,
  SeenTraceId = 1U << 2,
  SeenAttempts = 1U << 3,
  SeenMeta = 1U << 4,  // all five meta fields
};

// Forbidden members (ENV-28), one bit each.
enum Forbidden : unsigned {
  ForbiddenTimestamp = 1U << 0,
  ForbiddenMaxRetries = 1U << 1,
  ForbiddenMetaAttempts = 1U << 2,
  ForbiddenSource = 1U << 3,
  ForbiddenTs = 1U << 4,
};

// Parses an integer lexeme (already grammar-checked) into int64; false when out of range.
bool parse_int64(std::string_view lex, std::int64_t& out) {
  const bool neg = lex.front() == '-';
  const std::string_view digits = neg ? lex.substr(1) : lex;
  if (digits.size() <= 18) {  // cannot overflow
    std::int64_t v = 0;
    for (char ch : digits)
      v = v * 10 + (ch - '0');
    out = neg ? -v : v;
    return true;
  }
  auto r = std::from_chars(lex.data(), lex.data() + lex.size(), out);
  return r.ec == std::errc();
}

// A member name and its compact token, `"name":`.
struct KeyToken {
  std::string_view name;
  Token token;
};

template <std::size_t N>
consteval KeyToken key_token(const char (&name)[N]) {
  char text[N + 2] = {'"'};
  for (std::size_t i = 0; i + 1 < N; ++i)
    text[i + 1] = name[i];
  text[N] = '"';
  text[N + 1] = ':';
  return KeyToken{std::string_view(name, N - 1), detail::token(std::string_view(text, N + 2))};
}

// Member names in the ENV-12 order, which every SDK-encoded body follows.
constexpr KeyToken kTopOrder[] = {key_token("job"), key_token("trace_id"), key_token("data"),
                                  key_token("meta"), key_token("attempts")};
constexpr KeyToken kMetaOrder[] = {key_token("id"), key_token("queue"), key_token("lang"),
                                   key_token("schema_version"), key_token("created_at")};
constexpr KeyToken kDeadLetterOrder[] = {
    key_token("reason"),    key_token("error"),          key_token("exception"),
    key_token("failed_at"), key_token("original_queue"), key_token("attempts"),
    key_token("lang")};

enum class Top { Job, Urn, TraceId, Data, Meta, Attempts, DeadLetter, Timestamp, Unknown };

// Dispatch on length first: one comparison for each known name.
Top top_level_member(std::string_view n) {
  switch (n.size()) {
    case 3:
      if (n == "job") return Top::Job;
      if (n == "urn") return Top::Urn;
      break;
    case 4:
      if (n == "data") return Top::Data;
      if (n == "meta") return Top::Meta;
      break;
    case 8:
      if (n == "trace_id") return Top::TraceId;
      if (n == "attempts") return Top::Attempts;
      break;
    case 9:
      if (n == "timestamp") return Top::Timestamp;
      break;
    case 11:
      if (n == "dead_letter") return Top::DeadLetter;
      break;
    default:
      break;
  }
  return Top::Unknown;
}

class Decoder {
 public:
  explicit Decoder(std::string_view body) : body_(body), c_(body) {}

  Result<Envelope, DecodeError> run(std::vector<std::string>* warnings);

 private:
  // Iterates the members of the object at c_.p ('{'); calls fn(name, known) with the cursor at
  // the value, and fn must consume it. `known` is the index in `expected` of a member found where
  // the canonical order predicts it, and then `name` is left empty; otherwise it is -1.
  template <std::size_t N, class Fn>
  bool members(const KeyToken (&expected)[N], Fn&& fn);
  bool skip_value(int depth) {
    detail::NullHandler h;
    return detail::parse_value(c_, h, depth);
  }
  bool raw_value(int depth, std::string& out) {
    out.clear();
    detail::CompactHandler h{&out, {}};
    return detail::parse_value(c_, h, depth);
  }
  bool read_string(StrField& f, int depth) {
    f.bad_first = 0;
    if (*c_.p == '"') {
      f.present = true;
      return detail::scan_string(c_, f.raw);
    }
    f.present = false;
    return read_other_string(f, depth);
  }
  bool read_other_string(StrField& f, int depth);
  bool read_int(IntField& f, int depth) {
    f.bad = nullptr;
    if (read_short_int(c_.p, c_.end, f.value)) {
      f.present = true;
      return true;
    }
    return read_other_int(f, depth);
  }
  bool read_other_int(IntField& f, int depth);
  bool read_unknown(RawMembers& into, std::string_view name, int depth);
  bool read_data();
  bool read_meta();
  bool read_dead_letter();
  Result<Envelope, DecodeError> finish(std::vector<std::string>* warnings);
  // Invalid UTF-8 outranks every other error, so each error path checks the whole body first.
  static DecodeError not_utf8() { return DecodeError("body is not valid UTF-8"); }
  DecodeError trailing_data() const {
    return DecodeError("trailing data at offset " + std::to_string(c_.offset()), c_.offset());
  }
  std::string_view key_text(const RawString& k) {
    if (!k.escaped) return k.raw;
    key_scratch_.clear();
    detail::unescape_append(key_scratch_, k.raw);
    return key_scratch_;
  }
  void note(const char* field, const StrField& f) {
    if (f.bad_first != 0 && problem_.field == nullptr) {
      problem_.field = field;
      problem_.detail = std::string("expected string, got ") + json_type_name(f.bad_first);
    }
  }
  void note(const char* field, const IntField& f) {
    if (f.bad != nullptr && problem_.field == nullptr) {
      problem_.field = field;
      problem_.detail = std::string(f.bad);
      if (!f.lexeme.empty()) problem_.detail.append(f.lexeme.substr(0, 40));
    }
  }

  std::string_view body_;
  Cursor c_;
  std::string key_scratch_;
  Problem problem_;
  unsigned forbidden_ = 0;       // top level
  unsigned meta_forbidden_ = 0;  // of the winning meta only (ENV-19)
  unsigned seen_ = 0;
  bool any_bad_ = false;  // some member had a wrong type (it may have been replaced since)
  void settle();          // gives every field that was never met its absent value

  // Top level.
  StrField job_, urn_, trace_id_;
  bool has_data_ = false;
  const char* data_bad_ = nullptr;
  std::string_view data_raw_;
  bool data_canonical_ = false;
  IntField attempts_;
  RawMembers unknown_;
  // meta
  bool has_meta_ = false;
  const char* meta_bad_ = nullptr;
  StrField meta_id_, meta_queue_, meta_lang_;
  IntField schema_version_, created_at_;
  RawMembers meta_unknown_;
  // dead_letter
  // dead_letter: rare, so its fields only exist when the member does.
  struct DeadLetterFields {
    StrField reason, error, exception, original_queue, lang;
    IntField failed_at, attempts;
    RawMembers unknown;
  };
  const char* dl_bad_ = nullptr;
  std::optional<DeadLetterFields> dl_;
};

void Decoder::settle() {
  if ((seen_ & SeenJob) == 0) job_ = kNoString;
  if ((seen_ & SeenUrn) == 0) urn_ = kNoString;
  if ((seen_ & SeenTraceId) == 0) trace_id_ = kNoString;
  if ((seen_ & SeenAttempts) == 0) attempts_ = kNoInt;
  if ((seen_ & SeenMeta) == 0) {
    meta_id_ = kNoString;
    meta_queue_ = kNoString;
    meta_lang_ = kNoString;
    schema_version_ = kNoInt;
    created_at_ = kNoInt;
  }
}

template <std::size_t N, class Fn>
bool Decoder::members(const KeyToken (&expected)[N], Fn&& fn) {
  ++c_.p;  // '{'
  detail::skip_ws(c_);
  if (c_.p < c_.end && *c_.p == '}') {
    ++c_.p;
    return true;
  }
  std::size_t next = 0;  // index of the member name we expect next in canonical order
  for (;;) {
    std::string_view name;
    int known = -1;
    // Fast path: the canonical order, written compactly (`"job":`). A match is exact, because
    // a raw name cannot hold an unescaped quote.
    if (next < N && token_at(c_.p, static_cast<std::size_t>(c_.end - c_.p), expected[next].token)) {
      known = static_cast<int>(next);
      c_.p += expected[next].token.len;
      ++next;
    } else if (c_.p < c_.end && detail::is_ws(*c_.p)) {
      detail::skip_ws(c_);  // predict again after the whitespace
      continue;
    } else {
      next = N;  // off the canonical track: stop predicting
      if (c_.p >= c_.end || *c_.p != '"') return c_.fail("expected a member name");
      RawString k;
      if (!detail::scan_string(c_, k)) return false;
      detail::skip_ws(c_);
      if (c_.p >= c_.end || *c_.p != ':') return c_.fail("expected ':'");
      ++c_.p;
      name = key_text(k);
    }
    detail::skip_ws(c_);
    if (c_.p >= c_.end) return c_.fail("unexpected end of input");
    if (!fn(name, known)) return false;
    // A compact separator goes straight to the next prediction, which checks what follows.
    if (c_.p < c_.end && *c_.p == ',') {
      ++c_.p;
      continue;
    }
    detail::skip_ws(c_);
    if (c_.p >= c_.end) return c_.fail("unexpected end of input");
    if (*c_.p == ',') {
      ++c_.p;
      continue;
    }
    if (*c_.p == '}') {
      ++c_.p;
      return true;
    }
    return c_.fail("expected ',' or '}'");
  }
}

bool Decoder::read_other_string(StrField& f, int depth) {
  const char first = *c_.p;
  if (first == 'n') return detail::scan_literal(c_, "null");
  f.bad_first = first;
  any_bad_ = true;
  return skip_value(depth);
}

bool Decoder::read_other_int(IntField& f, int depth) {
  f = kNoInt;
  const char first = *c_.p;
  if (first == 'n') return detail::scan_literal(c_, "null");
  if (first != '-' && !detail::is_digit(first)) {
    any_bad_ = true;
    f.bad = first == '"'   ? "expected integer, got string"
            : first == '{' ? "expected integer, got object"
            : first == '[' ? "expected integer, got array"
                           : "expected integer, got boolean";
    return skip_value(depth);
  }
  RawNumber n;
  if (!detail::scan_number(c_, n)) return false;
  if (!n.integer) {
    any_bad_ = true;
    f.bad = "expected integer, got ";
    f.lexeme = n.lexeme;
    return true;
  }
  if (!parse_int64(n.lexeme, f.value)) {
    any_bad_ = true;
    f.bad = "integer out of range: ";
    f.lexeme = n.lexeme;
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
  // One constant per field, not a chained assignment: a chain reloads what it just stored.
  meta_id_ = kNoString;
  meta_queue_ = kNoString;
  meta_lang_ = kNoString;
  schema_version_ = kNoInt;
  created_at_ = kNoInt;
  seen_ |= SeenMeta;
  meta_forbidden_ = 0;
  meta_unknown_.clear();
  const char first = *c_.p;
  if (first == 'n') return detail::scan_literal(c_, "null");
  if (first != '{') {
    meta_bad_ = json_type_name(first);
    any_bad_ = true;
    return skip_value(1);
  }
  has_meta_ = true;
  return members(kMetaOrder, [this](std::string_view name, int known) {
    switch (known) {
      case 0:
        return read_string(meta_id_, 2);
      case 1:
        return read_string(meta_queue_, 2);
      case 2:
        return read_string(meta_lang_, 2);
      case 3:
        return read_int(schema_version_, 2);
      case 4:
        return read_int(created_at_, 2);
      default:
        break;
    }
    if (name == "id") return read_string(meta_id_, 2);
    if (name == "queue") return read_string(meta_queue_, 2);
    if (name == "lang") return read_string(meta_lang_, 2);
    if (name == "schema_version") return read_int(schema_version_, 2);
    if (name == "created_at") return read_int(created_at_, 2);
    unsigned bit = 0;
    if (name == "max_retries") bit = ForbiddenMaxRetries;
    if (name == "attempts") bit = ForbiddenMetaAttempts;
    if (name == "source") bit = ForbiddenSource;
    if (name == "ts") bit = ForbiddenTs;
    if (bit != 0) {
      meta_forbidden_ |= bit;
      return skip_value(2);
    }
    return read_unknown(meta_unknown_, name, 2);
  });
}

bool Decoder::read_dead_letter() {
  dl_bad_ = nullptr;
  dl_.reset();
  const char first = *c_.p;
  if (first == 'n') return detail::scan_literal(c_, "null");
  if (first != '{') {
    dl_bad_ = json_type_name(first);
    any_bad_ = true;
    return skip_value(1);
  }
  DeadLetterFields& d = dl_.emplace();
  return members(kDeadLetterOrder, [this, &d](std::string_view name, int known) {
    if (known >= 0) name = kDeadLetterOrder[known].name;
    if (name == "reason") return read_string(d.reason, 2);
    if (name == "error") return read_string(d.error, 2);
    if (name == "exception") return read_string(d.exception, 2);
    if (name == "failed_at") return read_int(d.failed_at, 2);
    if (name == "original_queue") return read_string(d.original_queue, 2);
    if (name == "attempts") return read_int(d.attempts, 2);
    if (name == "lang") return read_string(d.lang, 2);
    return read_unknown(d.unknown, name, 2);
  });
}

constexpr const char* kForbiddenPointers[] = {"/timestamp", "/meta/max_retries", "/meta/attempts",
                                              "/meta/source", "/meta/ts"};

Result<Envelope, DecodeError> Decoder::run(std::vector<std::string>* warnings) {
  detail::skip_ws(c_);
  if (c_.at_end()) return DecodeError("invalid JSON at offset 0: empty body");
  if (*c_.p != '{') {
    if (!detail::valid_utf8(body_)) return not_utf8();
    const char first = *c_.p;
    if (!skip_value(0)) return detail::syntax_error(c_);
    detail::skip_ws(c_);
    if (!c_.at_end()) return trailing_data();
    return DecodeError(std::string("expected a JSON object, got ") + json_type_name(first));
  }
  static constexpr Top kKnown[] = {Top::Job, Top::TraceId, Top::Data, Top::Meta, Top::Attempts};
  const bool ok = members(kTopOrder, [this](std::string_view name, int known) {
    switch (known >= 0 ? kKnown[known] : top_level_member(name)) {
      case Top::Job:
        seen_ |= SeenJob;
        return read_string(job_, 1);
      case Top::Urn:
        seen_ |= SeenUrn;
        return read_string(urn_, 1);  // other types ignored
      case Top::TraceId:
        seen_ |= SeenTraceId;
        return read_string(trace_id_, 1);
      case Top::Data:
        return read_data();
      case Top::Meta:
        return read_meta();
      case Top::Attempts:
        seen_ |= SeenAttempts;
        return read_int(attempts_, 1);
      case Top::DeadLetter:
        return read_dead_letter();
      case Top::Timestamp:
        forbidden_ |= ForbiddenTimestamp;
        return skip_value(1);
      case Top::Unknown:
        break;
    }
    return read_unknown(unknown_, name, 1);
  });
  if (!ok) {
    if (!detail::valid_utf8(body_)) return not_utf8();
    return detail::syntax_error(c_);
  }
  return finish(warnings);
}

bool Decoder::read_data() {
  has_data_ = false;
  data_bad_ = nullptr;
  const char first = *c_.p;
  if (first == 'n') return detail::scan_literal(c_, "null");
  if (first != '{') {
    data_bad_ = json_type_name(first);
    any_bad_ = true;
    return skip_value(1);
  }
  // Validate now, build the Json on first access (Envelope::data()).
  has_data_ = true;
  return read_data_object(c_, data_raw_, data_canonical_);
}

Result<Envelope, DecodeError> Decoder::finish(std::vector<std::string>* warnings) {
  detail::skip_ws(c_);
  const bool trailing = !c_.at_end();
  // A body scanned to its end holds bytes >= 0x80 only in strings, which the scanner flags.
  if ((trailing || c_.non_ascii) && !detail::valid_utf8(body_)) return not_utf8();
  if (trailing) return trailing_data();

  settle();
  if (any_bad_) {
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
    if (dl_) {
      note("dead_letter.reason", dl_->reason);
      note("dead_letter.error", dl_->error);
      note("dead_letter.exception", dl_->exception);
      note("dead_letter.failed_at", dl_->failed_at);
      note("dead_letter.original_queue", dl_->original_queue);
      note("dead_letter.attempts", dl_->attempts);
      note("dead_letter.lang", dl_->lang);
    }
  }
  if (problem_.field != nullptr) {
    return DecodeError(std::string(problem_.field) + ": " + problem_.detail);
  }

  if (warnings != nullptr) {
    for (unsigned i = 0; i < 5; ++i) {
      if (((forbidden_ | meta_forbidden_) & (1U << i)) != 0) {
        warnings->push_back(
            std::string("babelqueue: dropped forbidden non-canonical envelope key ") +
            kForbiddenPointers[i] + " (message-envelope.md §10)");
      }
    }
  }

  // Build the envelope: strings with escapes are decoded into one scratch buffer first, reserved
  // up front so the views into it stay valid (an unescaped string is never longer than its raw).
  std::string scratch;
  std::size_t escaped_size = 0;
  for (const StrField* f : {&job_, &urn_, &trace_id_, &meta_id_, &meta_queue_, &meta_lang_}) {
    if (f->present && f->raw.escaped) escaped_size += f->raw.raw.size();
  }
  if (escaped_size != 0) scratch.reserve(escaped_size);
  auto text = [&scratch](const StrField& f) -> std::string_view {
    if (!f.present) return {};
    if (!f.raw.escaped) return f.raw.raw;
    const std::size_t at = scratch.size();
    detail::unescape_append(scratch, f.raw.raw);
    return std::string_view(scratch).substr(at);
  };
  std::string_view urn = trim_w(text(job_));
  if (urn.empty() && urn_.present) urn = trim_w(text(urn_));
  Envelope env = assemble(Parts{{urn, text(trace_id_), text(meta_id_), text(meta_queue_),
                                 text(meta_lang_), has_data_ ? data_raw_ : std::string_view()},
                                has_data_,
                                data_canonical_,
                                has_meta_,
                                schema_version_.present,
                                attempts_.present,
                                schema_version_.value,
                                created_at_.value,
                                attempts_.value});
  if (!unknown_.empty() || !meta_unknown_.empty() || dl_) {
    auto& extras = detail_access::extras(env);
    extras.unknown = std::move(unknown_);
    extras.meta_unknown = std::move(meta_unknown_);
  }
  if (dl_) {
    DeadLetter dl;
    dl.reason = detail::unescape(dl_->reason.raw);
    if (dl_->error.present) dl.error = detail::unescape(dl_->error.raw);
    if (dl_->exception.present) dl.exception = detail::unescape(dl_->exception.raw);
    dl.failed_at = dl_->failed_at.value;
    dl.original_queue = detail::unescape(dl_->original_queue.raw);
    dl.attempts = dl_->attempts.value;
    dl.lang = detail::unescape(dl_->lang.raw);
    dl.unknown = std::move(dl_->unknown);
    detail_access::extras(env).dead_letter = std::move(dl);
  }
  return env;
}

}  // namespace

namespace detail {

Result<Envelope, DecodeError> try_decode_general(std::string_view body,
                                                 std::vector<std::string>* warnings) {
  try {
    return Decoder(body).run(warnings);
  } catch (const std::bad_alloc&) {
    return out_of_memory();
  }
}

}  // namespace detail

Envelope decode(std::string_view body, std::vector<std::string>* warnings) {
  return try_decode(body, warnings).value();
}

}  // namespace babelqueue
