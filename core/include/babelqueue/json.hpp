// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/export.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace babelqueue {

class Json;
/// An ordered JSON object: members keep insertion (document) order; names are unique.
using JsonObject = std::vector<std::pair<std::string, Json>>;
/// A JSON array.
using JsonArray = std::vector<Json>;

/// A JSON number kept as its source lexeme (ENV-31), so `1.0`, `1E+3` and integers beyond
/// 64 bits survive every re-emit byte for byte.
///
/// Thread-safety: a value type.
class BABELQUEUE_EXPORT JsonNumber {
 public:
  /// A number from a lexeme that is already known to match the RFC 8259 number grammar.
  static JsonNumber from_valid_lexeme(std::string lexeme);
  /// Same, when the caller already knows whether the lexeme is an integer.
  static JsonNumber from_valid_lexeme(std::string lexeme, bool integer) noexcept;

  /// The lexeme as written on the wire. Empty for a non-finite double (which cannot be encoded).
  [[nodiscard]] const std::string& lexeme() const noexcept { return lexeme_; }
  /// True when the lexeme has no fraction and no exponent.
  [[nodiscard]] bool is_integer() const noexcept { return integer_; }
  /// False only for a number made from a NaN or infinite double.
  [[nodiscard]] bool is_finite() const noexcept { return !lexeme_.empty(); }

  /// The value as int64; nullopt for a decimal lexeme or one outside the int64 range.
  [[nodiscard]] std::optional<std::int64_t> as_int64() const noexcept;
  /// The value as uint64; nullopt for a decimal, a negative value or one beyond the range.
  [[nodiscard]] std::optional<std::uint64_t> as_uint64() const noexcept;
  /// The value as double (may round; may be infinite for `1e999999`).
  [[nodiscard]] double as_double() const noexcept;

  /// Exact numeric comparison of two lexemes (`1 == 1.0 == 10e-1`): any number of digits,
  /// exponents up to 10^36 (larger ones saturate).
  friend BABELQUEUE_EXPORT bool operator==(const JsonNumber& a, const JsonNumber& b) noexcept;
  /// Exact numeric ordering: negative, zero or positive like `strcmp`.
  friend BABELQUEUE_EXPORT int compare(const JsonNumber& a, const JsonNumber& b) noexcept;

 private:
  friend class Json;
  JsonNumber() = default;
  std::string lexeme_;
  bool integer_ = true;
};

/// Exact numeric ordering of two numbers: negative, zero or positive like `strcmp`.
BABELQUEUE_EXPORT int compare(const JsonNumber& a, const JsonNumber& b) noexcept;

/// A JSON value that keeps what the envelope rules need: number lexemes, member order, and
/// strict RFC 8259 parsing (ENV-16). Used for `data`, payload schemas and manifests.
///
/// Copying, `dump()` and `==` recurse once per nesting level (about 100 bytes of stack per
/// level in a release build); destruction does not.
///
/// Thread-safety: a value type; concurrent reads are safe, writes need external locking.
class BABELQUEUE_EXPORT Json {
 public:
  enum class Type { Null, Bool, Number, String, Array, Object };

  Json() noexcept = default;  ///< null
  Json(const Json&) = default;
  Json(Json&&) noexcept = default;
  Json& operator=(const Json&) = default;
  Json& operator=(Json&&) noexcept = default;
  /// Tears nested containers down iteratively, so a 10,000-deep value cannot exhaust the stack.
  ~Json();
  Json(std::nullptr_t) noexcept {}  // NOLINT: implicit by design
  Json(bool b) noexcept : v_(b) {}  // NOLINT
  Json(int n);                      // NOLINT
  Json(long n);                     // NOLINT
  Json(long long n);                // NOLINT
  Json(unsigned n);                 // NOLINT
  Json(unsigned long n);            // NOLINT
  Json(unsigned long long n);       // NOLINT
  /// Shortest round-trip digits, ECMAScript layout (ENV-32): `3.0` is `3`, `1e21` is `1e+21`.
  /// NaN and infinities make a number that `dump()` refuses with EncodeError.
  Json(double d);                                     // NOLINT
  Json(const char* s) : v_(std::string(s)) {}         // NOLINT
  Json(std::string s) noexcept : v_(std::move(s)) {}  // NOLINT
  Json(std::string_view s) : v_(std::string(s)) {}    // NOLINT
  Json(JsonNumber n) noexcept : v_(std::move(n)) {}   // NOLINT
  Json(JsonArray a) noexcept : v_(std::move(a)) {}    // NOLINT
  Json(JsonObject o) noexcept : v_(std::move(o)) {}   // NOLINT

  /// An object from `{key, value}` pairs; a repeated key keeps its first position, last value wins.
  static Json object(std::initializer_list<std::pair<std::string, Json>> members = {});
  /// An array of the given values.
  static Json array(std::initializer_list<Json> items = {});
  /// A number written exactly as `lexeme` (e.g. `"1.0"`).
  /// @throws EncodeError when `lexeme` is not an RFC 8259 number.
  static Json number(std::string_view lexeme);

  /// Strict parse (ENV-16 syntax: valid UTF-8, one value, depth <= 10,000; duplicate names:
  /// last wins at the first position; lone surrogate escapes become U+FFFD).
  /// @throws DecodeError with a byte offset.
  static Json parse(std::string_view text);
  /// Non-throwing `parse`.
  static Result<Json, DecodeError> try_parse(std::string_view text);

  [[nodiscard]] Type type() const noexcept { return static_cast<Type>(v_.index()); }
  [[nodiscard]] bool is_null() const noexcept { return type() == Type::Null; }
  [[nodiscard]] bool is_bool() const noexcept { return type() == Type::Bool; }
  [[nodiscard]] bool is_number() const noexcept { return type() == Type::Number; }
  [[nodiscard]] bool is_string() const noexcept { return type() == Type::String; }
  [[nodiscard]] bool is_array() const noexcept { return type() == Type::Array; }
  [[nodiscard]] bool is_object() const noexcept { return type() == Type::Object; }

  /// Typed access; each throws `Error(ErrorCode::Usage)` when the value has another type.
  [[nodiscard]] bool as_bool() const;
  [[nodiscard]] const JsonNumber& as_number() const;
  [[nodiscard]] const std::string& as_string() const;
  [[nodiscard]] const JsonArray& as_array() const;
  [[nodiscard]] JsonArray& as_array();
  [[nodiscard]] const JsonObject& as_object() const;
  [[nodiscard]] JsonObject& as_object();

  /// Shorthands for numbers: nullopt when not a number or not representable.
  [[nodiscard]] std::optional<std::int64_t> as_int64() const noexcept;
  [[nodiscard]] std::optional<std::uint64_t> as_uint64() const noexcept;

  /// The member `key` of an object, or nullptr (also when this is not an object).
  [[nodiscard]] const Json* find(std::string_view key) const noexcept;
  [[nodiscard]] Json* find(std::string_view key) noexcept;
  /// Object member access that inserts null when absent; a null value becomes an empty object.
  /// @throws Error(ErrorCode::Usage) when this is neither null nor an object.
  Json& operator[](std::string_view key);
  /// Appends to an array; a null value becomes an empty array.
  void push_back(Json value);
  /// Members of an object, items of an array, else 0.
  [[nodiscard]] std::size_t size() const noexcept;

  /// Compact canonical JSON (ENV-11, ENV-13). @throws EncodeError on invalid UTF-8 or NaN.
  [[nodiscard]] std::string dump() const;
  /// Appends the compact encoding to `out`. @throws EncodeError like `dump()`.
  void dump_to(std::string& out) const;

  /// Semantic equality: numbers by exact value, objects regardless of member order.
  friend BABELQUEUE_EXPORT bool operator==(const Json& a, const Json& b) noexcept;

 private:
  std::variant<std::monostate, bool, JsonNumber, std::string, JsonArray, JsonObject> v_;
};

/// Appends `s` as a JSON string with ENV-13 escaping. @throws EncodeError on invalid UTF-8.
BABELQUEUE_EXPORT void append_json_string(std::string& out, std::string_view s);

}  // namespace babelqueue
