// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

// poison_record() must accept any bytes, produce valid JSON and keep every input byte (ENV-42):
// a strict JSON object without a top-level dead_letter is spliced, so removing the inserted
// member gives the input back; anything else is wrapped, and `raw` decodes to the input.
// The UTF-8, whitespace and base64 rules are checked here independently of the library.

namespace {

// The poison block for error "err", queue "orders" and failed_at 1, exactly as ENV-43 writes it.
constexpr std::string_view kBlock =
    R"({"reason":"poison","error":"err","failed_at":1,"original_queue":"orders","lang":"cpp"})";

[[noreturn]] void fail(const char* what, std::string_view body, std::string_view record) {
  std::fprintf(stderr, "fuzz_poison_record: %s\n  body:   %.*s\n  record: %.*s\n", what,
               static_cast<int>(body.size()), body.data(), static_cast<int>(record.size()),
               record.data());
  std::abort();
}

// RFC 3629 UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool is_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (s.size() - i < len) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return false;
    }
    i += len;
  }
  return true;
}

// Strict standard base64 with padding; nullopt on any other character or layout.
std::optional<std::string> from_base64(std::string_view in) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 4) {
    std::array<std::size_t, 4> v{};
    std::size_t pad = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        ++pad;
        continue;
      }
      if (pad != 0) return std::nullopt;
      const auto pos = kAlphabet.find(c);
      if (pos == std::string_view::npos) return std::nullopt;
      v[k] = pos;
    }
    const std::size_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out.push_back(static_cast<char>((n >> 16) & 0xFF));
    if (pad < 2) out.push_back(static_cast<char>((n >> 8) & 0xFF));
    if (pad < 1) out.push_back(static_cast<char>(n & 0xFF));
  }
  return out;
}

void check_splice(std::string_view body, bool empty_object, std::string_view record) {
  const auto first = body.find_first_not_of(" \t\n\r");
  const auto close = body.find_last_not_of(" \t\n\r");
  if (first == std::string_view::npos || body[first] != '{' || body[close] != '}') {
    fail("Json::parse accepted an object with non-whitespace around it", body, record);
  }
  if (!is_utf8(body)) fail("Json::parse accepted invalid UTF-8", body, record);
  const std::string_view prefix = body.substr(0, close);
  const std::string_view suffix = body.substr(close);
  const std::string inserted =
      std::string(empty_object ? "" : ",") + "\"dead_letter\":" + std::string(kBlock);
  if (record.size() != body.size() + inserted.size() || !record.starts_with(prefix) ||
      !record.ends_with(suffix) || record.substr(prefix.size(), inserted.size()) != inserted) {
    fail("the spliced record minus the dead_letter member is not the input", body, record);
  }
}

void check_wrap(std::string_view body, const babelqueue::Json& parsed, std::string_view record) {
  const auto& members = parsed.as_object();
  const bool base64 = !is_utf8(body);
  const std::size_t expected_members = base64 ? 3 : 2;
  if (members.size() != expected_members || members.front().first != "raw" ||
      !members.front().second.is_string() || members.back().first != "dead_letter") {
    fail("a wrapped record must be {raw[, raw_encoding], dead_letter}", body, record);
  }
  const std::string& raw = members.front().second.as_string();
  if (base64) {
    const babelqueue::Json& encoding = members[1].second;
    if (members[1].first != "raw_encoding" || !encoding.is_string() ||
        encoding.as_string() != "base64") {
      fail("invalid UTF-8 must be wrapped with raw_encoding base64", body, record);
    }
    if (from_base64(raw) != std::optional<std::string>(body)) {
      fail("raw does not base64-decode to the input", body, record);
    }
  } else if (raw != body) {
    fail("raw is not the input", body, record);
  }
  if (!record.ends_with(",\"dead_letter\":" + std::string(kBlock) + "}")) {
    fail("the poison block is not the last member, byte for byte", body, record);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const std::string record = babelqueue::poison_record(body, "err", "orders", 1);

  const auto parsed = babelqueue::Json::try_parse(record);
  if (!parsed || !parsed->is_object()) fail("the record is not a JSON object", body, record);
  const babelqueue::Json* block = parsed->find("dead_letter");
  if (block == nullptr || babelqueue::Json::parse(kBlock) != *block) {
    fail("the record's dead_letter is not the poison block", body, record);
  }

  const auto input = babelqueue::Json::try_parse(body);
  if (input && input->is_object() && input->find("dead_letter") == nullptr) {
    check_splice(body, input->size() == 0, record);
  } else {
    check_wrap(body, *parsed, record);
  }
  return 0;
}
