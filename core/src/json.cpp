// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "json_scan.hpp"

namespace babelqueue {

namespace {

[[noreturn]] void wrong_type(const char* wanted) {
  throw Error(ErrorCode::Usage, std::string("JSON value is not ") + wanted);
}

template <class Int>
std::string integer_lexeme(Int n) {
  std::array<char, 24> buf{};
  auto r = std::to_chars(buf.data(), buf.data() + buf.size(), n);
  return std::string(buf.data(), r.ptr);
}

// ECMAScript Number::toString layout of the shortest round-trip digits (ENV-32).
std::string double_lexeme(double d) {
  if (!std::isfinite(d)) return {};
  if (d == 0) return "0";
  std::array<char, 40> buf{};
  auto r = std::to_chars(buf.data(), buf.data() + buf.size(), d, std::chars_format::scientific);
  std::string_view sci(buf.data(), static_cast<std::size_t>(r.ptr - buf.data()));
  std::string out;
  if (sci.front() == '-') {
    out.push_back('-');
    sci.remove_prefix(1);
  }
  const auto epos = sci.find('e');
  std::string digits;
  for (char ch : sci.substr(0, epos)) {
    if (ch != '.') digits.push_back(ch);
  }
  while (digits.size() > 1 && digits.back() == '0')
    digits.pop_back();
  int exp10 = 0;
  std::string_view es = sci.substr(epos + 1);
  const bool neg = es.front() == '-';
  if (es.front() == '+' || es.front() == '-') es.remove_prefix(1);
  std::from_chars(es.data(), es.data() + es.size(), exp10);
  if (neg) exp10 = -exp10;
  const int k = static_cast<int>(digits.size());
  const int n = exp10 + 1;
  if (k <= n && n <= 21) {
    out += digits;
    out.append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, 0, static_cast<std::size_t>(n));
    out.push_back('.');
    out.append(digits, static_cast<std::size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out += digits;
  } else {
    out.push_back(digits[0]);
    if (k > 1) {
      out.push_back('.');
      out.append(digits, 1);
    }
    out.push_back('e');
    out.push_back(n - 1 >= 0 ? '+' : '-');
    out += std::to_string(std::abs(n - 1));
  }
  return out;
}

__extension__ using Int128 = __int128;

// A number lexeme as sign, significant digits (no leading or trailing zeros) and a power of ten.
struct Decimal {
  bool negative = false;
  std::string_view digits_int;
  std::string_view digits_frac;
  std::string digits;  // significant digits
  Int128 exp10 = 0;    // value = 0.digits * 10^exp10 (position of the leading digit)
  [[nodiscard]] bool zero() const { return digits.empty(); }
};

Decimal to_decimal(std::string_view lex) {
  Decimal d;
  std::size_t i = 0;
  if (i < lex.size() && lex[i] == '-') {
    d.negative = true;
    ++i;
  }
  std::size_t s = i;
  while (i < lex.size() && detail::is_digit(lex[i]))
    ++i;
  std::string_view ip = lex.substr(s, i - s);
  std::string_view fp;
  if (i < lex.size() && lex[i] == '.') {
    s = ++i;
    while (i < lex.size() && detail::is_digit(lex[i]))
      ++i;
    fp = lex.substr(s, i - s);
  }
  // Exponents are exact up to 10^36 (128-bit arithmetic); beyond that they saturate.
  Int128 e = 0;
  constexpr Int128 kSaturate = static_cast<Int128>(1000000000000000000LL) * 1000000000000000000LL;
  if (i < lex.size() && (lex[i] == 'e' || lex[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < lex.size() && (lex[i] == '+' || lex[i] == '-')) eneg = lex[i++] == '-';
    for (; i < lex.size(); ++i) {
      if (e < kSaturate) e = e * 10 + (lex[i] - '0');
    }
    if (eneg) e = -e;
  }
  std::string all;
  all.reserve(ip.size() + fp.size());
  all.append(ip);
  all.append(fp);
  std::size_t lead = 0;
  while (lead < all.size() && all[lead] == '0')
    ++lead;
  std::size_t trail = all.size();
  while (trail > lead && all[trail - 1] == '0')
    --trail;
  d.digits = all.substr(lead, trail - lead);
  // Position of the leading significant digit relative to the decimal point.
  d.exp10 = e + static_cast<Int128>(ip.size()) - static_cast<Int128>(lead);
  if (d.zero()) d.negative = false;
  return d;
}

int compare_magnitude(const Decimal& a, const Decimal& b) {
  if (a.zero() || b.zero()) return (a.zero() ? 0 : 1) - (b.zero() ? 0 : 1);
  if (a.exp10 != b.exp10) return a.exp10 < b.exp10 ? -1 : 1;
  const int c = a.digits.compare(b.digits);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace

// ---- JsonNumber -----------------------------------------------------------------------------

JsonNumber JsonNumber::from_valid_lexeme(std::string lexeme) {
  JsonNumber n;
  n.integer_ = lexeme.find_first_of(".eE") == std::string::npos;
  n.lexeme_ = std::move(lexeme);
  return n;
}

JsonNumber JsonNumber::from_valid_lexeme(std::string lexeme, bool integer) noexcept {
  JsonNumber n;
  n.integer_ = integer;
  n.lexeme_ = std::move(lexeme);
  return n;
}

std::optional<std::int64_t> JsonNumber::as_int64() const noexcept {
  if (!integer_ || lexeme_.empty()) return std::nullopt;
  std::int64_t v = 0;
  auto r = std::from_chars(lexeme_.data(), lexeme_.data() + lexeme_.size(), v);
  if (r.ec != std::errc() || r.ptr != lexeme_.data() + lexeme_.size()) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> JsonNumber::as_uint64() const noexcept {
  if (!integer_ || lexeme_.empty()) return std::nullopt;
  if (lexeme_ == "-0") return 0;
  std::uint64_t v = 0;
  auto r = std::from_chars(lexeme_.data(), lexeme_.data() + lexeme_.size(), v);
  if (r.ec != std::errc() || r.ptr != lexeme_.data() + lexeme_.size()) return std::nullopt;
  return v;
}

double JsonNumber::as_double() const noexcept {
  if (lexeme_.empty()) return std::numeric_limits<double>::quiet_NaN();
  double v = 0;
  auto r = std::from_chars(lexeme_.data(), lexeme_.data() + lexeme_.size(), v);
  if (r.ec == std::errc::result_out_of_range) {
    const Decimal d = to_decimal(lexeme_);
    if (d.exp10 < 0) return d.negative ? -0.0 : 0.0;
    return d.negative ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity();
  }
  return v;
}

int compare(const JsonNumber& a, const JsonNumber& b) noexcept {
  if (a.lexeme_ == b.lexeme_) return 0;
  try {
    const Decimal x = to_decimal(a.lexeme_);
    const Decimal y = to_decimal(b.lexeme_);
    if (x.negative != y.negative) return x.negative ? -1 : 1;
    const int m = compare_magnitude(x, y);
    return x.negative ? -m : m;
  } catch (...) {  // std::bad_alloc only
    return a.lexeme_.compare(b.lexeme_) < 0 ? -1 : 1;
  }
}

bool operator==(const JsonNumber& a, const JsonNumber& b) noexcept {
  if (!a.is_finite() || !b.is_finite()) return false;
  return compare(a, b) == 0;
}

// ---- Json -----------------------------------------------------------------------------------

namespace {

bool is_container(const Json& j) {
  return j.is_array() || j.is_object();
}

// Moves the container children of `j` into `out`, leaving scalars in place.
void detach_containers(Json& j, std::vector<Json>& out) {
  if (j.is_array()) {
    for (auto& item : j.as_array()) {
      if (is_container(item)) out.push_back(std::move(item));
    }
  } else if (j.is_object()) {
    for (auto& member : j.as_object()) {
      if (is_container(member.second)) out.push_back(std::move(member.second));
    }
  }
}

bool has_container_child(const Json& j) {
  if (j.is_array()) return std::any_of(j.as_array().begin(), j.as_array().end(), is_container);
  if (j.is_object()) {
    return std::any_of(j.as_object().begin(), j.as_object().end(),
                       [](const auto& m) { return is_container(m.second); });
  }
  return false;
}

}  // namespace

Json::~Json() {
  if (!has_container_child(*this)) return;  // flat values: the ordinary destructor is enough
  try {
    std::vector<Json> pending;
    detach_containers(*this, pending);
    while (!pending.empty()) {
      Json next = std::move(pending.back());
      pending.pop_back();
      detach_containers(next, pending);
    }              // `next` now has no container children, so its destruction does not recurse
  } catch (...) {  // std::bad_alloc: fall back to the recursive teardown
  }
}

Json::Json(int n) : v_(JsonNumber::from_valid_lexeme(integer_lexeme(n))) {}
Json::Json(long n) : v_(JsonNumber::from_valid_lexeme(integer_lexeme(n))) {}
Json::Json(long long n) : v_(JsonNumber::from_valid_lexeme(integer_lexeme(n))) {}
Json::Json(unsigned n) : v_(JsonNumber::from_valid_lexeme(integer_lexeme(n))) {}
Json::Json(unsigned long n) : v_(JsonNumber::from_valid_lexeme(integer_lexeme(n))) {}
Json::Json(unsigned long long n) : v_(JsonNumber::from_valid_lexeme(integer_lexeme(n))) {}
Json::Json(double d) {
  JsonNumber n;
  n.lexeme_ = double_lexeme(d);
  n.integer_ = n.lexeme_.find_first_of(".eE") == std::string::npos;
  v_ = std::move(n);
}

Json Json::object(std::initializer_list<std::pair<std::string, Json>> members) {
  Json j{JsonObject{}};
  auto& obj = j.as_object();
  obj.reserve(members.size());
  for (const auto& m : members)
    j[m.first] = m.second;
  return j;
}

Json Json::array(std::initializer_list<Json> items) {
  return Json{JsonArray(items)};
}

Json Json::number(std::string_view lexeme) {
  detail::Cursor c(lexeme);
  detail::RawNumber n;
  if (lexeme.empty() || !detail::scan_number(c, n) || !c.at_end()) {
    throw EncodeError("not a JSON number: " + std::string(lexeme));
  }
  return Json{JsonNumber::from_valid_lexeme(std::string(lexeme))};
}

bool Json::as_bool() const {
  if (!is_bool()) wrong_type("a boolean");
  return std::get<bool>(v_);
}
const JsonNumber& Json::as_number() const {
  if (!is_number()) wrong_type("a number");
  return std::get<JsonNumber>(v_);
}
const std::string& Json::as_string() const {
  if (!is_string()) wrong_type("a string");
  return std::get<std::string>(v_);
}
const JsonArray& Json::as_array() const {
  if (!is_array()) wrong_type("an array");
  return std::get<JsonArray>(v_);
}
JsonArray& Json::as_array() {
  if (!is_array()) wrong_type("an array");
  return std::get<JsonArray>(v_);
}
const JsonObject& Json::as_object() const {
  if (!is_object()) wrong_type("an object");
  return std::get<JsonObject>(v_);
}
JsonObject& Json::as_object() {
  if (!is_object()) wrong_type("an object");
  return std::get<JsonObject>(v_);
}

std::optional<std::int64_t> Json::as_int64() const noexcept {
  if (!is_number()) return std::nullopt;
  return std::get<JsonNumber>(v_).as_int64();
}
std::optional<std::uint64_t> Json::as_uint64() const noexcept {
  if (!is_number()) return std::nullopt;
  return std::get<JsonNumber>(v_).as_uint64();
}

const Json* Json::find(std::string_view key) const noexcept {
  if (!is_object()) return nullptr;
  for (const auto& [k, v] : std::get<JsonObject>(v_)) {
    if (k == key) return &v;
  }
  return nullptr;
}
Json* Json::find(std::string_view key) noexcept {
  return const_cast<Json*>(static_cast<const Json&>(*this).find(key));
}

Json& Json::operator[](std::string_view key) {
  if (is_null()) v_ = JsonObject{};
  auto& obj = as_object();
  for (auto& [k, v] : obj) {
    if (k == key) return v;
  }
  obj.emplace_back(std::string(key), Json{});
  return obj.back().second;
}

void Json::push_back(Json value) {
  if (is_null()) v_ = JsonArray{};
  as_array().push_back(std::move(value));
}

std::size_t Json::size() const noexcept {
  if (is_object()) return std::get<JsonObject>(v_).size();
  if (is_array()) return std::get<JsonArray>(v_).size();
  return 0;
}

bool operator==(const Json& a, const Json& b) noexcept {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case Json::Type::Null:
      return true;
    case Json::Type::Bool:
      return std::get<bool>(a.v_) == std::get<bool>(b.v_);
    case Json::Type::Number:
      return std::get<JsonNumber>(a.v_) == std::get<JsonNumber>(b.v_);
    case Json::Type::String:
      return std::get<std::string>(a.v_) == std::get<std::string>(b.v_);
    case Json::Type::Array:
      return std::get<JsonArray>(a.v_) == std::get<JsonArray>(b.v_);
    case Json::Type::Object: {
      const auto& x = std::get<JsonObject>(a.v_);
      const auto& y = std::get<JsonObject>(b.v_);
      if (x.size() != y.size()) return false;
      return std::all_of(x.begin(), x.end(), [&b](const auto& m) {
        const Json* other = b.find(m.first);
        return other != nullptr && *other == m.second;
      });
    }
  }
  return false;
}

}  // namespace babelqueue
