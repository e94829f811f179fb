// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "suite.hpp"

#include <babelqueue/codec.hpp>

#include <algorithm>
#include <exception>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace babelqueue::conformance::detail {

namespace fs = std::filesystem;

void fail(std::string message) {
  throw CaseFailure{std::move(message)};
}

std::string Problems::joined() const {
  std::string all;
  for (const std::string& p : list_) {
    if (!all.empty()) all += "; ";
    all += p;
  }
  return all;
}

void Problems::finish() const {
  if (!list_.empty()) fail(joined());
}

void Problems::fail_with(std::string problem) {
  add(std::move(problem));
  fail(joined());
}

// ---- Display ----

namespace {

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

}  // namespace

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

// ---- Manifest access ----

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

bool bool_member(const Json& obj, std::string_view key, std::optional<bool> fallback) {
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

void known_members(const Json& obj, std::initializer_list<std::string_view> known) {
  if (!obj.is_object()) fail("manifest: the case is not an object");
  for (const auto& [key, value] : obj.as_object()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      fail("manifest: member '" + key + "' is not implemented by this runner");
    }
  }
}

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

// ---- The runner ----

Runner::Runner(fs::path dir, std::shared_ptr<Transport> transport)
    : dir_(std::move(dir)), transport_(std::move(transport)) {}

void Runner::add(const std::string& block, std::string name, const std::function<void()>& body) {
  CaseResult result{block, std::move(name), Verdict::Failed, {}};
  try {
    body();
    result.verdict = Verdict::Passed;
  } catch (const CaseFailure& f) {
    result.message = f.message;
  } catch (const std::exception& e) {
    result.message = std::string("unexpected exception: ") + e.what();
  } catch (...) {
    result.message = "unexpected exception of a non-standard type";
  }
  report.cases.push_back(std::move(result));
}

void Runner::live(const std::string& block, std::string name,
                  const std::function<void(Transport&)>& body) {
  if (!transport_) {
    report.cases.push_back(CaseResult{block, std::move(name), Verdict::Skipped,
                                      "needs a live transport (babelqueue conformance --url URL)"});
    return;
  }
  add(block, std::move(name), [&] { body(*transport_); });
}

bool Runner::guard(const std::string& block, std::string name, const std::function<void()>& body) {
  add(block, std::move(name), body);
  if (!report.cases.back().passed()) return false;
  report.cases.pop_back();
  return true;
}

void Runner::add_failure(const std::string& block, std::string name, std::string message) {
  report.cases.push_back(CaseResult{block, std::move(name), Verdict::Failed, std::move(message)});
}

void Runner::sub_blocks(const std::string& block, const std::string& path, const Json& block_value,
                        const std::vector<std::string_view>& known) {
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

const std::string& Runner::fixture(const Json& obj, std::string_view key) {
  const std::string& rel = string_member(obj, key);
  if (const auto it = fixtures_.find(rel); it != fixtures_.end()) return it->second;
  std::ifstream in(dir_ / rel, std::ios::binary);
  if (!in) fail("cannot read fixture " + rel);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail("cannot read fixture " + rel);
  return fixtures_.emplace(rel, std::move(bytes)).first->second;
}

Envelope Runner::accepted(const Json& obj, std::string_view key,
                          std::vector<std::string>* warnings) {
  const std::string& bytes = fixture(obj, key);
  auto decoded = try_decode(bytes, warnings);
  if (!decoded) {
    fail("decode of " + string_member(obj, key) + " failed: " + decoded.error().what());
  }
  if (!accepts(*decoded)) fail("accepts() is false: " + rejection(*decoded));
  return std::move(decoded).value();
}

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
  std::string numbered = "#";  // not "#" + ...: GCC 12 -Wrestrict false positive
  numbered += std::to_string(index);
  return numbered;
}

// ---- The registry ----

void Registry::add(std::string block, BlockKind kind, BlockHandler handler) {
  const auto [it, inserted] = entries_.try_emplace(block, BlockEntry{kind, std::move(handler)});
  if (!inserted) throw std::logic_error("conformance: block " + block + " registered twice");
}

const BlockEntry* Registry::find(std::string_view block) const {
  const auto it = entries_.find(block);
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace babelqueue::conformance::detail
