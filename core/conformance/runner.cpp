// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "runner.hpp"

#include <babelqueue/binding/amqp.hpp>
#include <babelqueue/binding/amqp10.hpp>
#include <babelqueue/binding/artemis.hpp>
#include <babelqueue/binding/azureservicebus.hpp>
#include <babelqueue/binding/common.hpp>
#include <babelqueue/binding/kafka.hpp>
#include <babelqueue/binding/pulsar.hpp>
#include <babelqueue/binding/sqs.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/errors.hpp>
#include <babelqueue/idempotency.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/schema.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <deque>
#include <exception>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace babelqueue::conformance {

std::size_t Report::passed() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(), [](const CaseResult& c) { return c.passed; }));
}

std::size_t Report::failed() const noexcept {
  return cases.size() - passed();
}

namespace {

namespace fs = std::filesystem;

// Thrown by the checks below; Runner::add turns it into a failed case.
struct CaseFailure {
  std::string message;
};

[[noreturn]] void fail(std::string message) {
  throw CaseFailure{std::move(message)};
}

// Several independent checks of one case: every problem is reported, not just the first.
class Problems {
 public:
  void add(std::string problem) { list_.push_back(std::move(problem)); }
  void check(bool ok, const std::string& problem) {
    if (!ok) add(problem);
  }
  void finish() const {
    if (list_.empty()) return;
    std::string all;
    for (const std::string& p : list_) {
      if (!all.empty()) all += "; ";
      all += p;
    }
    fail(all);
  }

 private:
  std::vector<std::string> list_;
};

// ---- Display (messages stay on one line and in ASCII) ----

void append_hex(std::string& out, unsigned value, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) {
    out += kHex[(value >> shift) & 0xFU];
  }
}

void append_u_escape(std::string& out, std::uint32_t cp) {
  if (cp >= 0x10000) {
    const std::uint32_t v = cp - 0x10000;
    append_u_escape(out, 0xD800 + (v >> 10));
    append_u_escape(out, 0xDC00 + (v & 0x3FF));
    return;
  }
  out += "\\u";
  append_hex(out, cp, 4);
}

// Length and code point of the UTF-8 sequence at s[i], or 0 when it is not valid UTF-8.
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  std::size_t len = 0;
  std::uint32_t min = 0;
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    cp = b0 & 0x1FU;
    min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    cp = b0 & 0x0FU;
    min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    cp = b0 & 0x07U;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3FU);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

// `s` as a double-quoted, ASCII-only string: JSON escapes, \uXXXX for non-ASCII, \xHH for bytes
// that are not UTF-8.
std::string quote(std::string_view s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    const std::size_t len = utf8_sequence(s, i, cp);
    if (len == 0) {
      out += "\\x";
      append_hex(out, static_cast<unsigned char>(s[i]), 2);
      ++i;
      continue;
    }
    i += len;
    switch (cp) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (cp < 0x20 || cp >= 0x7F) {
          append_u_escape(out, cp);
        } else {
          out += static_cast<char>(cp);
        }
    }
  }
  out += '"';
  return out;
}

// A JSON value as compact, ASCII-only text.
std::string show(const Json& v) {
  std::string text;
  try {
    text = v.dump();
  } catch (const std::exception& e) {
    return std::string("<unencodable: ") + e.what() + ">";
  }
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    std::uint32_t cp = 0;
    const std::size_t len = utf8_sequence(text, i, cp);
    if (len <= 1) {
      out += text[i++];
    } else {
      append_u_escape(out, cp);
      i += len;
    }
  }
  return out;
}

// ---- Manifest access (a malformed manifest fails the case that reads it) ----

const Json& member(const Json& obj, std::string_view key) {
  const Json* v = obj.find(key);
  if (v == nullptr) fail("manifest: missing member '" + std::string(key) + "'");
  return *v;
}

const std::string& string_member(const Json& obj, std::string_view key) {
  const Json& v = member(obj, key);
  if (!v.is_string()) fail("manifest: '" + std::string(key) + "' is not a string");
  return v.as_string();
}

bool bool_member(const Json& obj, std::string_view key, std::optional<bool> fallback = {}) {
  const Json* v = obj.find(key);
  if (v == nullptr && fallback) return *fallback;
  if (v == nullptr || !v->is_bool()) fail("manifest: '" + std::string(key) + "' is not a boolean");
  return v->as_bool();
}

std::int64_t int_value(const Json& v, std::string_view key) {
  const auto n = v.as_int64();
  if (!n || !v.as_number().is_integer()) {
    fail("manifest: '" + std::string(key) + "' is not an integer");
  }
  return *n;
}

std::int64_t int_member(const Json& obj, std::string_view key) {
  return int_value(member(obj, key), key);
}

std::optional<std::int64_t> nullable_int_member(const Json& obj, std::string_view key) {
  const Json& v = member(obj, key);
  if (v.is_null()) return std::nullopt;
  return int_value(v, key);
}

const JsonArray& array_member(const Json& obj, std::string_view key) {
  const Json& v = member(obj, key);
  if (!v.is_array()) fail("manifest: '" + std::string(key) + "' is not an array");
  return v.as_array();
}

const JsonObject& object_member(const Json& obj, std::string_view key) {
  const Json& v = member(obj, key);
  if (!v.is_object()) fail("manifest: '" + std::string(key) + "' is not an object");
  return v.as_object();
}

// Fails on a member this runner does not know: a newer manifest may have given it a meaning.
void known_members(const Json& obj, std::initializer_list<std::string_view> known) {
  if (!obj.is_object()) fail("manifest: the case is not an object");
  for (const auto& [key, value] : obj.as_object()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      fail("manifest: member '" + key + "' is not implemented by this runner");
    }
  }
}

// ---- JSON helpers ----

// Deep equality with strict types: an integer lexeme never equals a decimal one, an object is
// never an array, null is not absent; member order is not significant.
bool strict_equal(const Json& a, const Json& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case Json::Type::Null:
      return true;
    case Json::Type::Bool:
      return a.as_bool() == b.as_bool();
    case Json::Type::Number:
      return a.as_number().is_integer() == b.as_number().is_integer() &&
             a.as_number() == b.as_number();
    case Json::Type::String:
      return a.as_string() == b.as_string();
    case Json::Type::Array: {
      const JsonArray& x = a.as_array();
      const JsonArray& y = b.as_array();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!strict_equal(x[i], y[i])) return false;
      }
      return true;
    }
    case Json::Type::Object: {
      if (a.size() != b.size()) return false;
      for (const auto& [key, value] : a.as_object()) {
        const Json* other = b.find(key);
        if (other == nullptr || !strict_equal(value, *other)) return false;
      }
      return true;
    }
  }
  return false;
}

// The reference tokens of an RFC 6901 pointer.
std::vector<std::string> pointer_tokens(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer.front() != '/') fail("manifest: invalid JSON pointer " + quote(pointer));
  std::size_t pos = 1;
  while (true) {
    const std::size_t end = std::min(pointer.find('/', pos), pointer.size());
    std::string token;
    for (std::size_t i = pos; i < end; ++i) {
      if (pointer[i] != '~') {
        token += pointer[i];
      } else if (i + 1 < end && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
        token += pointer[++i] == '0' ? '~' : '/';
      } else {
        fail("manifest: invalid JSON pointer " + quote(pointer));
      }
    }
    tokens.push_back(std::move(token));
    if (end == pointer.size()) break;
    pos = end + 1;
  }
  return tokens;
}

std::optional<std::size_t> array_index(std::string_view token) {
  if (token.empty() || (token.size() > 1 && token.front() == '0') || token.size() > 9) return {};
  std::size_t n = 0;
  for (const char c : token) {
    if (c < '0' || c > '9') return {};
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  return n;
}

// The value at `pointer`, or nullptr when there is none.
const Json* resolve(const Json& root, std::string_view pointer) {
  const Json* at = &root;
  for (const std::string& token : pointer_tokens(pointer)) {
    if (at->is_object()) {
      at = at->find(token);
    } else if (at->is_array()) {
      const auto i = array_index(token);
      at = i && *i < at->size() ? &at->as_array()[*i] : nullptr;
    } else {
      at = nullptr;
    }
    if (at == nullptr) return nullptr;
  }
  return at;
}

// Removes the object member at `pointer`; false when there is none.
bool erase(Json& root, std::string_view pointer) {
  std::vector<std::string> tokens = pointer_tokens(pointer);
  if (tokens.empty()) return false;
  Json* at = &root;
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    at = at->find(tokens[i]);
    if (at == nullptr) return false;
  }
  if (!at->is_object()) return false;
  JsonObject& members = at->as_object();
  const auto it = std::find_if(members.begin(), members.end(),
                               [&](const auto& m) { return m.first == tokens.back(); });
  if (it == members.end()) return false;
  members.erase(it);
  return true;
}

std::size_t skip_ws(std::string_view text, std::size_t i) {
  while (i < text.size() &&
         (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
    ++i;
  }
  return i;
}

// The end of the string token that starts at text[i] == '"'.
std::size_t skip_string(std::string_view text, std::size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return text.size();
}

// The end of the value that starts at text[i] (the text is known to be valid JSON).
std::size_t skip_value(std::string_view text, std::size_t i) {
  if (i >= text.size()) return i;
  if (text[i] == '"') return skip_string(text, i);
  if (text[i] == '{' || text[i] == '[') {
    int depth = 0;
    while (i < text.size()) {
      const char c = text[i];
      if (c == '"') {
        i = skip_string(text, i);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') --depth;
      ++i;
      if (depth == 0) return i;
    }
    return i;
  }
  while (i < text.size() &&
         std::string_view(",}] \t\n\r").find(text[i]) == std::string_view::npos) {
    ++i;
  }
  return i;
}

// The raw text of the top-level member `key` of the JSON object `text` (the last one when the
// name repeats), or nullopt.
std::optional<std::string_view> raw_member(std::string_view text, std::string_view key) {
  std::optional<std::string_view> found;
  std::size_t i = skip_ws(text, 0);
  if (i >= text.size() || text[i] != '{') return std::nullopt;
  i = skip_ws(text, i + 1);
  while (i < text.size() && text[i] == '"') {
    const std::size_t name_end = skip_string(text, i);
    const Json name = Json::parse(text.substr(i, name_end - i));
    i = skip_ws(text, name_end);
    if (i >= text.size() || text[i] != ':') return std::nullopt;
    i = skip_ws(text, i + 1);
    const std::size_t value_end = skip_value(text, i);
    if (name.as_string() == key) found = text.substr(i, value_end - i);
    i = skip_ws(text, value_end);
    if (i < text.size() && text[i] == ',') i = skip_ws(text, i + 1);
  }
  return found;
}

// `text` without whitespace outside strings.
std::string without_ws(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '"') {
      const std::size_t end = skip_string(text, i);
      out.append(text.substr(i, end - i));
      i = end;
    } else {
      if (std::string_view(" \t\n\r").find(text[i]) == std::string_view::npos) out += text[i];
      ++i;
    }
  }
  return out;
}

// ---- Envelope helpers ----

// Which ENV-29 check `accepts()` failed, in words.
std::string rejection(const Envelope& env) {
  std::vector<std::string> why;
  if (env.urn().empty()) why.emplace_back("ENV-29(a) no job/urn");
  if (!env.has_meta()) {
    why.emplace_back("ENV-29(b) meta is absent");
  } else if (env.meta().schema_version != SCHEMA_VERSION) {
    why.emplace_back("ENV-29(b) meta.schema_version is " +
                     std::to_string(env.meta().schema_version));
  }
  if (!env.has_data()) why.emplace_back("ENV-29(c) data is absent");
  if (trim_w(env.trace_id()).empty()) why.emplace_back("ENV-29(d) trace_id is blank");
  if (!env.has_attempts()) why.emplace_back("ENV-29(e) attempts is absent");
  if (why.empty()) return "accepts() returned false for no ENV-29 reason";
  std::string out;
  for (const std::string& w : why) {
    out += (out.empty() ? "" : ", ") + w;
  }
  return out;
}

// A decodable body with this meta.id and trace id, for driving the idempotency helper.
std::string body_with_id(std::string_view meta_id, std::string_view trace_id) {
  Json body = Json::object({
      {"job", "urn:babel:conformance:idempotency"},
      {"trace_id", Json(trace_id)},
      {"data", Json::object()},
      {"meta", Json::object({{"id", Json(meta_id)},
                             {"queue", "conformance"},
                             {"lang", Json(SOURCE_LANG)},
                             {"schema_version", SCHEMA_VERSION},
                             {"created_at", 1749132727000LL}})},
      {"attempts", 0},
  });
  return body.dump();
}

// ---- AMQP values ----

std::string amqp_type_name(const binding::amqp10::Value& v) {
  static constexpr std::string_view kNames[] = {"null",   "boolean", "byte",   "ubyte", "short",
                                                "ushort", "int",     "uint",   "long",  "ulong",
                                                "float",  "double",  "string", "binary"};
  if (const auto* other = std::get_if<binding::amqp10::Other>(&v)) return other->type_name;
  return std::string(kNames[v.index()]);
}

// The integral value of `v`, or nullopt when it is not of an AMQP integral type.
std::optional<long double> amqp_integral(const binding::amqp10::Value& v) {
  return std::visit(
      [](const auto& x) -> std::optional<long double> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          return static_cast<long double>(x);
        } else {
          return std::nullopt;
        }
      },
      v);
}

// Every AMQP typed value a JSON number of the manifest stands for: each integral width that holds
// an integer (at least int32 and int64 when they fit), float and double for a decimal.
std::vector<binding::amqp10::Value> amqp_values_for(const Json& number) {
  std::vector<binding::amqp10::Value> out;
  const JsonNumber& n = number.as_number();
  if (!n.is_integer()) {
    out.emplace_back(static_cast<float>(n.as_double()));
    out.emplace_back(n.as_double());
    return out;
  }
  const auto add = [&]<class T>(T /*tag*/) {
    if (const auto s = n.as_int64()) {
      if (std::in_range<T>(*s)) out.emplace_back(static_cast<T>(*s));
    } else if (const auto u = n.as_uint64()) {
      if (std::in_range<T>(*u)) out.emplace_back(static_cast<T>(*u));
    }
  };
  add(std::int8_t{});
  add(std::uint8_t{});
  add(std::int16_t{});
  add(std::uint16_t{});
  add(std::int32_t{});
  add(std::uint32_t{});
  add(std::int64_t{});
  add(std::uint64_t{});
  if (out.empty()) fail("manifest: the number " + n.lexeme() + " fits no AMQP integral type");
  return out;
}

std::string show_amqp(const binding::amqp10::Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return "string " + quote(*s);
  const auto text = binding::amqp10::header_text(v);
  return amqp_type_name(v) + (text ? " " + *text : "");
}

// Compares a typed application property with the manifest's JSON value: strings with strings,
// integers with any AMQP integral type, decimals with float/double, booleans with booleans.
void expect_amqp(const binding::amqp10::Value& got, const Json& want) {
  bool ok = false;
  if (want.is_string()) {
    const auto* s = std::get_if<std::string>(&got);
    ok = s != nullptr && *s == want.as_string();
  } else if (want.is_bool()) {
    const auto* b = std::get_if<bool>(&got);
    ok = b != nullptr && *b == want.as_bool();
  } else if (want.is_number() && want.as_number().is_integer()) {
    const auto i = amqp_integral(got);
    ok = i.has_value() && ((want.as_int64() && *i == static_cast<long double>(*want.as_int64())) ||
                           (want.as_uint64() && *i == static_cast<long double>(*want.as_uint64())));
  } else if (want.is_number()) {
    const double d = want.as_number().as_double();
    if (const auto* f = std::get_if<float>(&got)) ok = static_cast<double>(*f) == d;
    if (const auto* g = std::get_if<double>(&got)) ok = *g == d;
  } else {
    fail("manifest: an application property of JSON type " + show(want) + " is not implemented");
  }
  if (!ok) fail("expected " + show(want) + ", got " + show_amqp(got));
}

std::string show_opt(const std::optional<std::string>& s) {
  return s ? quote(*s) : "(absent)";
}

void expect_string(const std::optional<std::string>& got, const Json& want,
                   const std::string& what) {
  if (!want.is_string()) fail("manifest: " + what + " is not a string");
  if (!got || *got != want.as_string()) {
    fail(what + ": expected " + quote(want.as_string()) + ", got " + show_opt(got));
  }
}

// ---- The runner ----

class Runner {
 public:
  explicit Runner(fs::path dir) : dir_(std::move(dir)) {}

  Report report;

  // Runs one case and records its verdict.
  void add(const std::string& block, std::string name, const std::function<void()>& body) {
    CaseResult result{block, std::move(name), false, {}};
    try {
      body();
      result.passed = true;
    } catch (const CaseFailure& f) {
      result.message = f.message;
    } catch (const std::exception& e) {
      result.message = std::string("unexpected exception: ") + e.what();
    } catch (...) {
      result.message = "unexpected exception of a non-standard type";
    }
    report.cases.push_back(std::move(result));
  }

  // Runs a precondition of several cases; only a failure is recorded.
  void guard(const std::string& block, std::string name, const std::function<void()>& body) {
    add(block, std::move(name), body);
    if (report.cases.back().passed) report.cases.pop_back();
  }

  void add_failure(const std::string& block, std::string name, std::string message) {
    report.cases.push_back(CaseResult{block, std::move(name), false, std::move(message)});
  }

  // Records a failed case for every member of `block_value` this runner does not implement.
  // `path` names `block_value` inside the top-level block (empty for the block itself).
  void sub_blocks(const std::string& block, const std::string& path, const Json& block_value,
                  std::initializer_list<std::string_view> known) {
    const std::string at = path.empty() ? block : block + "." + path;
    if (!block_value.is_object()) {
      add_failure(block, path.empty() ? "(block)" : path, "manifest: " + at + " is not an object");
      return;
    }
    for (const auto& [key, value] : block_value.as_object()) {
      if (key == "description") continue;
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        std::string message = "sub-block ";
        message.append(at).append(".").append(key).append(" not implemented");
        add_failure(block, path.empty() ? key : path + "." + key, std::move(message));
      }
    }
  }

  // The exact bytes of a fixture named relative to the suite directory (cached).
  const std::string& fixture(const Json& obj, std::string_view key) {
    const std::string& rel = string_member(obj, key);
    if (const auto it = fixtures_.find(rel); it != fixtures_.end()) return it->second;
    std::ifstream in(dir_ / rel, std::ios::binary);
    if (!in) fail("cannot read fixture " + rel);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) fail("cannot read fixture " + rel);
    return fixtures_.emplace(rel, std::move(bytes)).first->second;
  }

  // A decoded, accepted fixture.
  Envelope accepted(const Json& obj, std::string_view key,
                    std::vector<std::string>* warnings = nullptr) {
    const std::string& bytes = fixture(obj, key);
    auto decoded = try_decode(bytes, warnings);
    if (!decoded) {
      fail("decode of " + string_member(obj, key) + " failed: " + decoded.error().what());
    }
    if (!accepts(*decoded)) fail("accepts() is false: " + rejection(*decoded));
    return std::move(decoded).value();
  }

 private:
  fs::path dir_;
  std::map<std::string, std::string, std::less<>> fixtures_;
};

// Iterates the array `key` of `block_value`; a missing or malformed array fails one case.
void each_case(Runner& r, const std::string& block, const std::string& prefix,
               const Json& block_value, std::string_view key,
               const std::function<void(std::size_t, const Json&)>& body) {
  const JsonArray* cases = nullptr;
  r.guard(block, prefix + "(cases)", [&] { cases = &array_member(block_value, key); });
  if (cases == nullptr) return;
  for (std::size_t i = 0; i < cases->size(); ++i) {
    body(i, (*cases)[i]);
  }
}

std::string case_name(const Json& c, std::size_t index) {
  const Json* name = c.find("name");
  if (name != nullptr && name->is_string()) return name->as_string();
  return "#" + std::to_string(index);
}

// ---- cases ----

void run_cases(Runner& r, const std::string& block, const Json& cases) {
  if (!cases.is_array()) {
    r.add_failure(block, "(block)", "manifest: 'cases' is not an array");
    return;
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Json& c = cases.as_array()[i];
    r.add(block, case_name(c, i), [&] {
      known_members(c, {"name", "file", "valid", "description", "expect", "reason"});
      const std::string& bytes = r.fixture(c, "file");
      std::vector<std::string> warnings;
      auto decoded = try_decode(bytes, &warnings);
      if (!bool_member(c, "valid")) {
        if (decoded && accepts(*decoded)) {
          fail("expected a rejection, but the fixture decodes and accepts() is true");
        }
        return;
      }
      if (!decoded) fail(std::string("decode failed: ") + decoded.error().what());
      const Envelope& env = *decoded;
      if (!accepts(env)) fail("accepts() is false: " + rejection(env));
      Problems p;
      for (const auto& [key, want] : object_member(c, "expect")) {
        const std::string what = "expect." + key;
        if (key == "urn") {
          p.check(want.is_string() && env.urn() == want.as_string(),
                  "urn: expected " + show(want) + ", got " + quote(env.urn()));
        } else if (key == "data") {
          p.check(env.has_data() && strict_equal(env.data(), want),
                  "data: expected " + show(want) + ", got " + show(env.data()));
        } else if (key == "attempts") {
          p.check(env.attempts() == int_value(want, what),
                  "attempts: expected " + show(want) + ", got " + std::to_string(env.attempts()));
        } else if (key == "lang") {
          p.check(want.is_string() && env.meta().lang == want.as_string(),
                  "meta.lang: expected " + show(want) + ", got " + quote(env.meta().lang));
        } else if (key == "schema_version") {
          p.check(env.meta().schema_version == int_value(want, what),
                  "meta.schema_version: expected " + show(want) + ", got " +
                      std::to_string(env.meta().schema_version));
        } else if (key == "dead_letter") {
          if (!env.dead_letter()) {
            p.add("dead_letter: expected a block, got none");
            continue;
          }
          const DeadLetter& dl = *env.dead_letter();
          if (!want.is_object()) fail("manifest: expect.dead_letter is not an object");
          for (const auto& member : want.as_object()) {
            const std::string& dk = member.first;  // named, not bound: lambdas capture them
            const Json& dv = member.second;
            const std::string name = "dead_letter." + dk;
            const auto text = [&](const std::optional<std::string>& got) {
              const bool ok = dv.is_null() ? !got : (dv.is_string() && got == dv.as_string());
              p.check(ok, name + ": expected " + show(dv) + ", got " + show_opt(got));
            };
            const auto number = [&](std::int64_t got) {
              p.check(got == int_value(dv, name),
                      name + ": expected " + show(dv) + ", got " + std::to_string(got));
            };
            if (dk == "reason") {
              text(dl.reason);
            } else if (dk == "error") {
              text(dl.error);
            } else if (dk == "exception") {
              text(dl.exception);
            } else if (dk == "original_queue") {
              text(dl.original_queue);
            } else if (dk == "lang") {
              text(dl.lang);
            } else if (dk == "failed_at") {
              number(dl.failed_at);
            } else if (dk == "attempts") {
              number(dl.attempts);
            } else {
              fail("manifest: " + name + " is not implemented by this runner");
            }
          }
        } else {
          fail("manifest: " + what + " is not implemented by this runner");
        }
      }
      p.check(!env.trace_id().empty(), "trace_id is empty");
      p.check(!env.meta().id.empty(), "meta.id is empty");
      p.check(env.meta().created_at != 0, "meta.created_at is 0");
      p.finish();
    });
  }
}

// ---- roundtrip ----

void run_roundtrip(Runner& r, const std::string& block, const Json& value) {
  r.sub_blocks(block, "", value, {"cases"});
  each_case(r, block, "", value, "cases", [&](std::size_t i, const Json& c) {
    r.add(block, case_name(c, i), [&] {
      known_members(c, {"name", "file", "description", "expect_attempts", "expect_preserved",
                        "producer_schema_valid"});
      Envelope env = r.accepted(c, "file");
      env.set_attempts(env.attempts() + 1);
      const std::string out = encode(env);
      const auto parsed = Json::try_parse(out);
      if (!parsed) fail(std::string("the re-encoding is not valid JSON: ") + parsed.error().what());
      Problems p;
      const Json* attempts = resolve(*parsed, "/attempts");
      p.check(attempts != nullptr && attempts->is_number() &&
                  attempts->as_int64() == int_member(c, "expect_attempts"),
              "/attempts: expected " + show(member(c, "expect_attempts")) + ", got " +
                  (attempts != nullptr ? show(*attempts) : "(absent)"));
      for (const auto& [pointer, want] : object_member(c, "expect_preserved")) {
        const Json* got = resolve(*parsed, pointer);
        p.check(got != nullptr && strict_equal(*got, want),
                pointer + ": expected " + show(want) + ", got " +
                    (got != nullptr ? show(*got) : "(absent)"));
      }
      p.finish();
    });
  });
}

// ---- data_shape ----

void run_data_shape(Runner& r, const std::string& block, const Json& value) {
  r.sub_blocks(block, "", value, {"cases"});
  each_case(r, block, "", value, "cases", [&](std::size_t i, const Json& c) {
    r.add(block, case_name(c, i), [&] {
      const std::string& mode = string_member(c, "mode");
      if (mode == "encode") {
        known_members(c, {"name", "mode", "urn", "queue", "data", "expect_encoded_data_json",
                          "description", "reason"});
        const Envelope env = make(string_member(c, "urn"), member(c, "data"),
                                  {.queue = string_member(c, "queue"), .trace_id = {}});
        const std::string out = encode(env);
        if (const auto parsed = Json::try_parse(out); !parsed) {
          fail(std::string("the encoding is not valid JSON: ") + parsed.error().what());
        }
        const auto raw = raw_member(out, "data");
        if (!raw) fail("the encoding has no data member: " + quote(out));
        const std::string& want = string_member(c, "expect_encoded_data_json");
        if (without_ws(*raw) != without_ws(want)) {
          fail("data encoded as " + quote(*raw) + ", expected " + quote(want));
        }
      } else if (mode == "decode") {
        known_members(c, {"name", "mode", "file", "valid", "reason", "description"});
        auto decoded = try_decode(r.fixture(c, "file"));
        const bool valid = bool_member(c, "valid");
        if (valid && !decoded) fail(std::string("decode failed: ") + decoded.error().what());
        if (valid && !accepts(*decoded)) fail("accepts() is false: " + rejection(*decoded));
        if (!valid && decoded && accepts(*decoded)) {
          fail("expected a rejection, but the fixture decodes and accepts() is true");
        }
      } else {
        fail("manifest: mode " + quote(mode) + " is not implemented by this runner");
      }
    });
  });
}

// ---- forbidden_keys ----

// True when `text` names `pointer` as a whole (not as a prefix of a longer pointer).
bool names_pointer(std::string_view text, std::string_view pointer) {
  for (std::size_t at = text.find(pointer); at != std::string_view::npos;
       at = text.find(pointer, at + 1)) {
    const std::size_t end = at + pointer.size();
    const bool longer = end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) ||
                                              text[end] == '_' || text[end] == '/');
    if (!longer) return true;
  }
  return false;
}

void run_forbidden_keys(Runner& r, const std::string& block, const Json& value) {
  r.sub_blocks(block, "", value, {"cases"});
  each_case(r, block, "", value, "cases", [&](std::size_t i, const Json& c) {
    r.add(block, case_name(c, i), [&] {
      known_members(c, {"name", "file", "forbidden_key", "expect", "expect_absent_after_reencode",
                        "description"});
      const std::string& expect = string_member(c, "expect");
      if (expect != "warn") fail("manifest: expect " + quote(expect) + " is not implemented");
      const std::string& pointer = string_member(c, "forbidden_key");
      std::vector<std::string> warnings;
      const Envelope env = r.accepted(c, "file", &warnings);
      Problems p;
      p.check(
          std::any_of(warnings.begin(), warnings.end(),
                      [&](const std::string& w) { return names_pointer(w, pointer); }),
          "no warning names " + pointer + " (" + std::to_string(warnings.size()) + " warnings)");
      const std::string out = encode(env);
      const Json reencoded = Json::parse(out);
      Json original = Json::parse(r.fixture(c, "file"));
      for (const Json& absent : array_member(c, "expect_absent_after_reencode")) {
        if (!absent.is_string())
          fail("manifest: expect_absent_after_reencode entry is not a string");
        p.check(resolve(reencoded, absent.as_string()) == nullptr,
                absent.as_string() + " is still present after re-encode");
        erase(original, absent.as_string());
      }
      erase(original, pointer);
      p.check(reencoded == original,
              "other members changed: expected " + show(original) + ", got " + quote(out));
      p.finish();
    });
  });
}

// ---- idempotency ----

void run_idempotency(Runner& r, const std::string& block, const Json& value) {
  r.sub_blocks(block, "", value, {"dedup_key", "sequences"});
  if (const Json* dedup = value.find("dedup_key")) {
    r.add(block, "dedup_key", [&] {
      known_members(*dedup, {"description", "envelope_file", "key_field", "expected_key"});
      const std::string& field = string_member(*dedup, "key_field");
      if (field != "meta.id") fail("manifest: key_field " + quote(field) + " is not implemented");
      const std::string& want = string_member(*dedup, "expected_key");
      const Envelope env = r.accepted(*dedup, "envelope_file");
      if (env.meta().id != want) {
        fail("meta.id: expected " + quote(want) + ", got " + quote(env.meta().id));
      }
      // The helper keys on meta.id: a run remembers exactly it, and a second delivery skips.
      idempotency::InMemoryStore store;
      int effects = 0;
      const auto effect = [&] { ++effects; };
      Problems p;
      p.check(idempotency::run_once(store, env, effect) == idempotency::Outcome::Ran,
              "the first delivery did not run");
      p.check(store.seen(want), "the store did not remember " + quote(want));
      p.check(!store.seen(env.trace_id()), "the store remembered the trace_id");
      p.check(idempotency::run_once(store, env, effect) == idempotency::Outcome::Skipped,
              "a redelivery of the same meta.id was not skipped");
      // Same trace_id, another meta.id: a distinct message.
      const Envelope sibling = decode(body_with_id("conformance-other-id", env.trace_id()));
      p.check(idempotency::run_once(store, sibling, effect) == idempotency::Outcome::Ran,
              "a message sharing only the trace_id was skipped");
      p.check(effects == 2, "effects: expected 2, got " + std::to_string(effects));
      p.finish();
    });
  }
  const Json* sequences = value.find("sequences");
  if (sequences == nullptr) return;
  r.sub_blocks(block, "sequences", *sequences, {"cases"});
  each_case(r, block, "sequences/", *sequences, "cases", [&](std::size_t i, const Json& c) {
    r.add(block, "sequences/" + case_name(c, i), [&] {
      known_members(c, {"name", "description", "deliveries", "expected_effects"});
      auto store = std::make_shared<idempotency::InMemoryStore>();
      std::int64_t invocations = 0;
      bool throw_next = false;
      auto wrapped = idempotency::wrap(store, [&](const Envelope& /*env*/) {
        ++invocations;
        if (throw_next) throw std::runtime_error("conformance handler outcome: throw");
      });
      Problems p;
      const JsonArray& deliveries = array_member(c, "deliveries");
      for (std::size_t d = 0; d < deliveries.size(); ++d) {
        const Json& delivery = deliveries[d];
        known_members(delivery,
                      {"meta_id", "expect_effect", "outcome", "forget_before", "description"});
        const std::string at = "delivery " + std::to_string(d + 1) + ": ";
        const std::string& id = string_member(delivery, "meta_id");
        const std::string& effect = string_member(delivery, "expect_effect");
        if (effect != "run" && effect != "skip") {
          fail("manifest: expect_effect " + quote(effect) + " is not implemented");
        }
        const Json* outcome_value = delivery.find("outcome");
        const std::string outcome = outcome_value == nullptr ? "ok" : outcome_value->as_string();
        if (outcome != "ok" && outcome != "throw") {
          fail("manifest: outcome " + quote(outcome) + " is not implemented");
        }
        if (bool_member(delivery, "forget_before", false)) store->forget(id);
        const Envelope env = decode(body_with_id(id, "conformance-trace"));
        throw_next = outcome == "throw";
        const std::int64_t before = invocations;
        bool threw = false;
        try {
          wrapped(env);
        } catch (const std::runtime_error&) {
          threw = true;
        }
        const bool ran = invocations > before;
        std::string problem = at;
        problem.append("expected ").append(effect).append(", the handler ");
        problem.append(ran ? "ran" : "was skipped");
        p.check(ran == (effect == "run"), problem);
        if (ran) {
          p.check(threw == throw_next, at + (threw ? "the wrapper threw after an ok outcome"
                                                   : "the handler's exception was swallowed"));
        } else {
          p.check(!threw, at + "a skipped delivery threw");
        }
      }
      const std::int64_t want = int_member(c, "expected_effects");
      p.check(invocations == want,
              "effects: expected " + std::to_string(want) + ", got " + std::to_string(invocations));
      p.finish();
    });
  });
}

// ---- payload_schema, payload_schema_unicode ----

void run_payload_schema(Runner& r, const std::string& block, const Json& value) {
  r.sub_blocks(block, "", value, {"schema", "cases"});
  std::optional<schema::Schema> compiled;
  std::string schema_error;
  try {
    compiled.emplace(member(value, "schema"));
  } catch (const CaseFailure& f) {
    schema_error = f.message;
  } catch (const std::exception& e) {
    schema_error = std::string("the schema does not compile: ") + e.what();
  }
  each_case(r, block, "", value, "cases", [&](std::size_t i, const Json& c) {
    r.add(block, case_name(c, i), [&] {
      if (!compiled) fail(schema_error);
      known_members(c, {"name", "valid", "data", "description"});
      const bool want = bool_member(c, "valid");
      const Json& data = member(c, "data");
      const std::vector<std::string> violations = compiled->validate(data);
      const bool valid = compiled->is_valid(data);
      if (valid != violations.empty()) {
        fail("is_valid() and validate() disagree (" + std::to_string(violations.size()) +
             " violations)");
      }
      if (valid && !want) fail("expected invalid, the validator accepted " + show(data));
      if (!valid && want) {
        std::string list;
        for (const std::string& v : violations) {
          list += (list.empty() ? "" : "; ") + v;
        }
        fail("expected valid, the validator reported: " + list);
      }
    });
  });
}

// ---- Brokers ----

struct Broker {
  std::string_view name;
  std::string_view gate_property;
};

// Runs `body` for every member of the map `key` of a projection block, one case each.
void each_entry(Runner& r, const std::string& block, const std::string& sub, const Json& proj,
                std::string_view key,
                const std::function<void(const std::string&, const Json&)>& body) {
  const Json* map = proj.find(key);
  if (map == nullptr || !map->is_object()) {
    r.add_failure(block, sub + "/" + std::string(key),
                  "manifest: '" + std::string(key) + "' is missing or not an object");
    return;
  }
  for (const auto& entry : map->as_object()) {
    r.add(block, sub + "/" + std::string(key) + "/" + entry.first,
          [&] { body(entry.first, entry.second); });
  }
}

// One case: the projection has no entry beyond the manifest's list.
void no_extra(Runner& r, const std::string& block, const std::string& sub, const Json& proj,
              std::string_view key, const std::function<std::vector<std::string>()>& names) {
  r.add(block, sub + "/" + std::string(key) + " (nothing unlisted)", [&] {
    const Json* map = proj.find(key);
    if (map == nullptr) fail("manifest: '" + std::string(key) + "' is missing");
    std::string extra;
    for (const std::string& n : names()) {
      if (map->find(n) == nullptr) extra += (extra.empty() ? "" : ", ") + n;
    }
    if (!extra.empty()) fail("unlisted entries projected: " + extra);
  });
}

void run_rabbitmq_projection(Runner& r, const std::string& block, const Json& proj) {
  const std::string sub = "property_projection";
  r.guard(block, sub + " (members)", [&] {
    known_members(proj, {"description", "envelope_file", "properties", "headers"});
  });
  const auto projection = [&] {
    return binding::amqp::projection(r.fixture(proj, "envelope_file"));
  };
  each_entry(r, block, sub, proj, "properties", [&](const std::string& name, const Json& want) {
    const binding::amqp::Properties p = projection().properties;
    if (name == "type") return expect_string(p.type, want, name);
    if (name == "correlation_id") return expect_string(p.correlation_id, want, name);
    if (name == "message_id") return expect_string(p.message_id, want, name);
    if (name == "app_id") return expect_string(p.app_id, want, name);
    if (name == "content_type") return expect_string(p.content_type, want, name);
    if (name == "content_encoding") return expect_string(p.content_encoding, want, name);
    if (name == "delivery_mode") {
      if (p.delivery_mode != int_value(want, name)) {
        fail("delivery_mode: expected " + show(want) + ", got " + std::to_string(p.delivery_mode));
      }
      return;
    }
    fail("manifest: property " + quote(name) + " is not implemented by this runner");
  });
  each_entry(r, block, sub, proj, "headers", [&](const std::string& name, const Json& want) {
    const auto headers = projection().headers;
    const auto it = headers.find(name);
    if (it == headers.end()) fail("header " + quote(name) + " is absent");
    const binding::amqp::FieldValue& got = it->second;
    const char tag = binding::amqp::field_tag(got);
    std::string shown;
    std::visit(
        [&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
            shown = quote(v);
          } else {
            shown = std::to_string(v);
          }
        },
        got);
    shown = std::string(1, tag) + " " + shown;
    bool ok = false;
    if (want.is_string()) {
      const auto* s = std::get_if<std::string>(&got);
      ok = s != nullptr && *s == want.as_string();
    } else if (want.is_number() && want.as_number().is_integer()) {
      std::optional<std::int64_t> n;
      if (const auto* i = std::get_if<std::int32_t>(&got)) n = *i;
      if (const auto* l = std::get_if<std::int64_t>(&got)) n = *l;
      ok = n.has_value() && want.as_int64() == n;
    } else {
      fail("manifest: a header of JSON type " + show(want) + " is not implemented");
    }
    if (!ok) fail("header " + name + ": expected " + show(want) + ", got " + shown);
  });
  no_extra(r, block, sub, proj, "headers", [&] {
    std::vector<std::string> names;
    for (const auto& [name, v] : projection().headers) {
      names.push_back(name);
    }
    return names;
  });
}

void run_sqs_projection(Runner& r, const std::string& block, const Json& proj) {
  const std::string sub = "attribute_projection";
  r.guard(block, sub + " (members)", [&] {
    known_members(proj, {"description", "envelope_file", "message_attributes"});
  });
  const auto attributes = [&] {
    return binding::sqs::projection(r.fixture(proj, "envelope_file")).attributes;
  };
  each_entry(
      r, block, sub, proj, "message_attributes", [&](const std::string& name, const Json& want) {
        known_members(want, {"DataType", "StringValue"});
        std::vector<binding::sqs::Attribute> found;
        for (const binding::sqs::Attribute& a : attributes()) {
          if (a.name == name) found.push_back(a);
        }
        if (found.size() != 1) {
          fail("attribute " + quote(name) + " projected " + std::to_string(found.size()) +
               " times");
        }
        Problems p;
        const std::string& type = string_member(want, "DataType");
        const std::string& text = string_member(want, "StringValue");
        p.check(found[0].data_type == type,
                "DataType: expected " + quote(type) + ", got " + quote(found[0].data_type));
        p.check(found[0].string_value == text,
                "StringValue: expected " + quote(text) + ", got " + quote(found[0].string_value));
        p.finish();
      });
  no_extra(r, block, sub, proj, "message_attributes", [&] {
    std::vector<std::string> names;
    const auto all = attributes();
    if (all.size() > binding::sqs::MAX_ATTRIBUTES) fail("more than 10 attributes projected");
    names.reserve(all.size());
    for (const binding::sqs::Attribute& a : all) {
      names.push_back(a.name);
    }
    return names;
  });
}

void run_asb_projection(Runner& r, const std::string& block, const Json& proj) {
  const std::string sub = "property_projection";
  r.guard(block, sub + " (members)", [&] {
    known_members(proj, {"description", "envelope_file", "message", "application_properties"});
  });
  const auto projection = [&] {
    return binding::azureservicebus::projection(r.fixture(proj, "envelope_file"));
  };
  each_entry(r, block, sub, proj, "message", [&](const std::string& name, const Json& want) {
    const binding::azureservicebus::Projection p = projection();
    if (name == "subject") return expect_string(p.subject, want, name);
    if (name == "correlation_id") return expect_string(p.correlation_id, want, name);
    if (name == "message_id") return expect_string(p.message_id, want, name);
    if (name == "content_type") return expect_string(p.content_type, want, name);
    fail("manifest: message field " + quote(name) + " is not implemented by this runner");
  });
  each_entry(r, block, sub, proj, "application_properties",
             [&](const std::string& name, const Json& want) {
               const auto props = projection().application_properties;
               const auto it = props.find(name);
               if (it == props.end()) fail("application property " + quote(name) + " is absent");
               expect_amqp(it->second, want);
             });
  no_extra(r, block, sub, proj, "application_properties", [&] {
    std::vector<std::string> names;
    for (const auto& [name, v] : projection().application_properties) {
      names.push_back(name);
    }
    return names;
  });
}

void run_string_map_projection(
    Runner& r, const std::string& block, const Json& proj, std::string_view key,
    const std::function<std::vector<std::pair<std::string, std::string>>(const std::string&)>&
        project) {
  const std::string sub = "property_projection";
  r.guard(block, sub + " (members)", [&] {
    known_members(proj, {"description", "envelope_file", key});
  });
  each_entry(r, block, sub, proj, key, [&](const std::string& name, const Json& want) {
    if (!want.is_string()) fail("manifest: " + name + " is not a string");
    std::vector<std::string> found;
    for (const auto& [k, v] : project(r.fixture(proj, "envelope_file"))) {
      if (k == name) found.push_back(v);
    }
    if (found.size() != 1) {
      fail(quote(name) + " projected " + std::to_string(found.size()) + " times");
    }
    if (found[0] != want.as_string()) {
      fail("expected " + quote(want.as_string()) + ", got " + quote(found[0]));
    }
  });
  no_extra(r, block, sub, proj, key, [&] {
    std::vector<std::string> names;
    for (const auto& [k, v] : project(r.fixture(proj, "envelope_file"))) {
      names.push_back(k);
    }
    return names;
  });
}

void run_artemis_projection(Runner& r, const std::string& block, const Json& proj) {
  const std::string sub = "property_projection";
  r.guard(block, sub + " (members)", [&] {
    known_members(proj, {"description", "envelope_file", "jms_type_annotation", "jms_type",
                         "correlation_id", "properties"});
  });
  const auto projection = [&] {
    return binding::artemis::projection(r.fixture(proj, "envelope_file"));
  };
  r.add(block, sub + "/jms_type_annotation", [&] {
    const std::string& want = string_member(proj, "jms_type_annotation");
    if (want != binding::artemis::JMS_TYPE_ANNOTATION) {
      fail("annotation key: expected " + quote(want) + ", the binding uses " +
           quote(binding::artemis::JMS_TYPE_ANNOTATION));
    }
    if (!projection().jms_type) fail("no " + want + " annotation projected");
  });
  r.add(block, sub + "/jms_type",
        [&] { expect_string(projection().jms_type, member(proj, "jms_type"), "jms_type"); });
  r.add(block, sub + "/correlation_id", [&] {
    expect_string(projection().correlation_id, member(proj, "correlation_id"), "correlation_id");
  });
  each_entry(r, block, sub, proj, "properties", [&](const std::string& name, const Json& want) {
    const auto props = projection().properties;
    const auto it = props.find(name);
    expect_string(it == props.end() ? std::nullopt : std::optional<std::string>(it->second), want,
                  name);
  });
  no_extra(r, block, sub, proj, "properties", [&] {
    std::vector<std::string> names;
    for (const auto& [name, v] : projection().properties) {
      names.push_back(name);
    }
    return names;
  });
}

void run_reconciliation(Runner& r, const std::string& block, const Json& value) {
  const std::string sub = "attempts_reconciliation";
  r.sub_blocks(block, sub, value, {"cases"});
  each_case(r, block, sub + "/", value, "cases", [&](std::size_t i, const Json& c) {
    r.add(block, sub + "/" + case_name(c, i), [&] {
      const std::int64_t body = int_member(c, "body_attempts");
      const std::int64_t want = int_member(c, "expected_attempts");
      std::int64_t got = 0;
      Problems p;
      if (block == "sqs") {
        known_members(c, {"name", "description", "body_attempts", "approximate_receive_count",
                          "expected_attempts"});
        const Json& count = member(c, "approximate_receive_count");
        if (!count.is_null() && !count.is_string()) {
          fail("manifest: approximate_receive_count is neither a string nor null");
        }
        const std::optional<std::string_view> native =
            count.is_null() ? std::nullopt : std::optional<std::string_view>(count.as_string());
        got = binding::reconcile_attempts(body, binding::sqs::delivery_count(native));
      } else if (block == "asb") {
        known_members(
            c, {"name", "description", "body_attempts", "delivery_count", "expected_attempts"});
        const std::int64_t count = int_member(c, "delivery_count");  // 1-based DeliveryCount
        got = binding::reconcile_attempts(body, count);
        // The same through the binding's mapping of the 0-based AMQP header.
        if (count >= 1 && count - 1 <= std::numeric_limits<std::uint32_t>::max()) {
          const auto header = static_cast<std::uint32_t>(count - 1);
          const std::int64_t via_header =
              binding::reconcile_attempts(body, binding::azureservicebus::delivery_count(header));
          p.check(via_header == want, "via the AMQP header delivery-count " +
                                          std::to_string(header) + ": got " +
                                          std::to_string(via_header));
        }
      } else if (block == "pulsar") {
        known_members(
            c, {"name", "description", "body_attempts", "redelivery_count", "expected_attempts"});
        got = binding::reconcile_attempts(
            body, binding::pulsar::delivery_count(nullable_int_member(c, "redelivery_count")));
      } else if (block == "artemis") {
        known_members(
            c, {"name", "description", "body_attempts", "delivery_count", "expected_attempts"});
        const std::int64_t count = int_member(c, "delivery_count");  // 0-based AMQP header
        if (count < 0 || count > std::numeric_limits<std::uint32_t>::max()) {
          fail("manifest: delivery_count is outside the AMQP uint range");
        }
        got = binding::reconcile_attempts(
            body, binding::artemis::delivery_count(static_cast<std::uint32_t>(count)));
      } else if (block == "kafka") {
        known_members(
            c, {"name", "description", "body_attempts", "header_attempts", "expected_attempts"});
        const auto header_value = nullable_int_member(c, "header_attempts");
        std::optional<std::int64_t> header;
        if (header_value) {
          header = binding::parse_attempts_header(std::to_string(*header_value));
          p.check(header == header_value,
                  "parse_attempts_header(" + quote(std::to_string(*header_value)) + ") failed");
        }
        got = binding::kafka::attempts(body, header);
        // The body rewrite must carry the same value (and only when the header differs).
        Envelope env = make("urn:babel:conformance:kafka", Json::object(),
                            {.queue = "conformance", .trace_id = {}});
        env.set_attempts(body);
        const std::string bytes = encode(env);
        const auto rewritten = binding::kafka::reconcile_body(bytes, header);
        if (header && *header != body) {
          p.check(rewritten.has_value() && decode(*rewritten).attempts() == want,
                  "kafka_reconcile_body did not rewrite attempts to " + std::to_string(want));
        } else {
          p.check(!rewritten.has_value(), "kafka_reconcile_body rewrote a body that needs none");
        }
      } else {
        fail("attempts reconciliation for " + block + " is not implemented");
      }
      p.check(got == want,
              "attempts: expected " + std::to_string(want) + ", got " + std::to_string(got));
      p.finish();
    });
  });
}

// The gate verdicts of one manifest value under `block`'s binding: (label, decision) pairs.
std::vector<std::pair<std::string, binding::GateDecision>> gate_verdicts(const std::string& block,
                                                                         const Json& c) {
  std::vector<std::pair<std::string, binding::GateDecision>> out;
  const bool absent = bool_member(c, "absent", false);
  const Json* value = c.find("value");
  if (absent && value != nullptr) fail("manifest: a case is both absent and has a value");
  if (!absent && value == nullptr) fail("manifest: a case has neither 'value' nor 'absent'");
  const bool typed_gate = block == "asb" || block == "artemis";
  const auto typed = [&](const binding::amqp10::Value& v) {
    return block == "asb" ? binding::azureservicebus::schema_version_gate(v)
                          : binding::artemis::schema_version_gate(v);
  };
  if (absent || value->is_null() || value->is_string()) {
    std::optional<std::string_view> text;
    if (!absent && value->is_string()) text = value->as_string();
    out.emplace_back("schema_version_gate", binding::schema_version_gate(text));
    if (typed_gate) {
      const binding::amqp10::Value v = text ? binding::amqp10::Value(std::string(*text))
                                            : binding::amqp10::Value(std::monostate{});
      out.emplace_back(block + "_schema_version_gate(" + amqp_type_name(v) + ")", typed(v));
    }
    return out;
  }
  if (!typed_gate) {
    fail("manifest: a typed (" + show(*value) + ") property is not implemented for " + block);
  }
  if (value->is_bool()) {
    out.emplace_back(block + "_schema_version_gate(boolean)", typed(value->as_bool()));
  } else if (value->is_number()) {
    for (const binding::amqp10::Value& v : amqp_values_for(*value)) {
      out.emplace_back(block + "_schema_version_gate(" + amqp_type_name(v) + ")", typed(v));
    }
  } else {
    fail("manifest: a property value " + show(*value) + " is not implemented");
  }
  return out;
}

void run_gate(Runner& r, const std::string& block, const Json& value, std::string_view property) {
  const std::string sub = "schema_version_gate";
  r.sub_blocks(block, sub, value, {"property", "fixture", "cases"});
  r.add(block, sub + "/property", [&] {
    const std::string& want = string_member(value, "property");
    if (want != property) {
      fail("the manifest gates on " + quote(want) + ", the " + block + " binding reads " +
           quote(property));
    }
  });
  each_case(r, block, sub, value, "cases", [&](std::size_t i, const Json& c) {
    std::string label = "absent";
    if (const Json* v = c.find("value")) label = show(*v);
    const Json* expect = c.find("expect");
    const std::string index = (i < 10 ? "0" : "") + std::to_string(i);
    const std::string name = sub + "[" + index + "] " + label + " -> " +
                             (expect != nullptr && expect->is_string() ? expect->as_string() : "?");
    r.add(block, name, [&] {
      known_members(c, {"value", "absent", "expect", "description"});
      const std::string& want = string_member(c, "expect");
      if (want != "decode" && want != "reject") {
        fail("manifest: expect " + quote(want) + " is not implemented");
      }
      Problems p;
      for (const auto& [how, decision] : gate_verdicts(block, c)) {
        const std::string got = decision.reject ? "reject" : "decode";
        if (got != want) {
          p.add(std::string(how).append(": ").append(got));
          continue;
        }
        if (decision.reject) {
          p.check(decision.route == binding::unsupported_route(decision.version) &&
                      binding::is_unsupported_route(decision.route),
                  how + ": route " + quote(decision.route) + " is not the reserved route of " +
                      quote(decision.version));
          if (const Json* v = c.find("value"); v != nullptr && v->is_string()) {
            p.check(decision.version == v->as_string(),
                    how + ": version " + quote(decision.version) + " is not the value as-is");
          }
        }
      }
      if (want == "decode") {
        // The gate passed: the body's own check still applies, and the fixture passes it.
        r.accepted(value, "fixture");
      }
      p.finish();
    });
  });
}

void run_broker(Runner& r, const std::string& block, const Json& value) {
  static constexpr Broker kBrokers[] = {
      {"sqs", "bq-schema-version"},     {"asb", "bq-schema-version"},
      {"pulsar", "bq-schema-version"},  {"kafka", "bq-schema-version"},
      {"artemis", "bq_schema_version"}, {"rabbitmq", ""}};
  const auto* broker = std::find_if(std::begin(kBrokers), std::end(kBrokers),
                                    [&](const Broker& b) { return b.name == block; });
  const std::string_view projection_key =
      block == "sqs" ? "attribute_projection" : "property_projection";
  if (block == "rabbitmq") {
    r.sub_blocks(block, "", value, {"property_projection"});
  } else {
    r.sub_blocks(block, "", value,
                 {projection_key, "attempts_reconciliation", "schema_version_gate"});
  }
  if (const Json* proj = value.find(projection_key)) {
    if (block == "rabbitmq") {
      run_rabbitmq_projection(r, block, *proj);
    } else if (block == "sqs") {
      run_sqs_projection(r, block, *proj);
    } else if (block == "asb") {
      run_asb_projection(r, block, *proj);
    } else if (block == "artemis") {
      run_artemis_projection(r, block, *proj);
    } else if (block == "pulsar") {
      run_string_map_projection(r, block, *proj, "properties", [](const std::string& body) {
        const auto props = binding::pulsar::properties(body);
        return std::vector<std::pair<std::string, std::string>>(props.begin(), props.end());
      });
    } else if (block == "kafka") {
      run_string_map_projection(r, block, *proj, "headers", [](const std::string& body) {
        return binding::kafka::projection(body).headers;
      });
    }
  }
  if (block == "rabbitmq") return;
  if (const Json* rec = value.find("attempts_reconciliation")) run_reconciliation(r, block, *rec);
  if (const Json* gate = value.find("schema_version_gate")) {
    run_gate(r, block, *gate, broker->gate_property);
  }
}

// ---- redis ----

void run_redis(Runner& r, const std::string& block, const Json& value) {
  r.sub_blocks(block, "", value, {"payload_identity"});
  const Json* identity = value.find("payload_identity");
  if (identity == nullptr) return;
  r.add(block, "payload_identity (in-memory FIFO stand-in; live Redis round-trip pending)", [&] {
    known_members(*identity, {"description", "envelope_file"});
    const std::string& bytes = r.fixture(*identity, "envelope_file");
    std::deque<std::string> list;  // RPUSH ... LMOVE stand-in
    list.push_back(bytes);
    const std::string reserved = std::move(list.front());
    list.pop_front();
    if (reserved != bytes) fail("the reserved element differs from the produced bytes");
    if (const auto decoded = try_decode(reserved); !decoded) {
      fail(std::string("the reserved element does not decode: ") + decoded.error().what());
    }
  });
}

}  // namespace

Report run(const std::filesystem::path& dir) {
  const fs::path path = dir / "manifest.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("conformance: cannot read " + path.string());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw ConfigError("conformance: cannot read " + path.string());
  auto manifest = Json::try_parse(text);
  if (!manifest) {
    throw ConfigError("conformance: " + path.string() +
                      " is not valid JSON: " + manifest.error().what());
  }
  if (!manifest->is_object()) {
    throw ConfigError("conformance: " + path.string() + " is not a JSON object");
  }

  using BlockRunner = std::function<void(Runner&, const std::string&, const Json&)>;
  const std::map<std::string, BlockRunner, std::less<>> blocks = {
      {"cases", run_cases},
      {"roundtrip", run_roundtrip},
      {"data_shape", run_data_shape},
      {"forbidden_keys", run_forbidden_keys},
      {"idempotency", run_idempotency},
      {"payload_schema", run_payload_schema},
      {"payload_schema_unicode", run_payload_schema},
      {"sqs", run_broker},
      {"asb", run_broker},
      {"pulsar", run_broker},
      {"kafka", run_broker},
      {"artemis", run_broker},
      {"rabbitmq", run_broker},
      {"redis", run_redis},
  };

  Runner r(dir);
  for (const auto& [key, value] : manifest->as_object()) {
    if (key == "description") continue;
    if (key == "schema_version") {
      if (!value.is_number() || value.as_int64() != 1) {
        r.add_failure("manifest", "schema_version",
                      "manifest schema_version " + show(value) + " is not supported (runner: 1)");
      }
      continue;
    }
    const auto it = blocks.find(key);
    if (it == blocks.end()) {
      r.add_failure(key, "(block)", "block " + key + " not implemented");
      continue;
    }
    try {
      it->second(r, key, value);
    } catch (const CaseFailure& f) {
      r.add_failure(key, "(block)", f.message);
    } catch (const std::exception& e) {
      r.add_failure(key, "(block)", std::string("unexpected exception: ") + e.what());
    }
  }
  return std::move(r.report);
}

}  // namespace babelqueue::conformance
