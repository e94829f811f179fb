// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/schema.hpp>

#include <babelqueue/codec.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

namespace babelqueue::schema {

namespace detail {

/// The HLP-11 `type` values; `Any` when absent, not a string, or not one of these.
enum class Type { Any, Object, Array, String, Integer, Number, Boolean, Null };

/// One parsed schema object. The pointers point into the `Json` document that the owning
/// `Schema` keeps alive (it is immutable, so they stay valid).
struct Node {
  Type type = Type::Any;
  std::vector<std::string_view> required;
  std::map<std::string_view, std::unique_ptr<Node>, std::less<>> properties;
  std::optional<bool> additional_properties;  // nullopt = open (draft-07 default)
  std::unique_ptr<Node> items;
  const JsonArray* enum_values = nullptr;
  const Json* const_value = nullptr;
  const JsonNumber* min_length = nullptr;
  const JsonNumber* minimum = nullptr;
};

}  // namespace detail

namespace {

using detail::Node;
using detail::Type;

Type parse_type(std::string_view name) noexcept {
  if (name == "object") return Type::Object;
  if (name == "array") return Type::Array;
  if (name == "string") return Type::String;
  if (name == "integer") return Type::Integer;
  if (name == "number") return Type::Number;
  if (name == "boolean") return Type::Boolean;
  if (name == "null") return Type::Null;
  return Type::Any;  // an unknown type name constrains nothing (Go, Python)
}

// Builds the node for one schema object. Members of the wrong JSON type are ignored, like every
// unknown keyword (Go and Python agree): `required` entries that are not strings, `properties`
// values that are not objects (such a property then counts as undeclared), non-boolean
// `additionalProperties`, non-object `items`, non-array `enum`, non-number `minLength`/`minimum`.
std::unique_ptr<Node> build(const Json& schema) {
  auto node = std::make_unique<Node>();
  for (const auto& [key, value] : schema.as_object()) {
    if (key == "type") {
      if (value.is_string()) node->type = parse_type(value.as_string());
    } else if (key == "required") {
      if (value.is_array()) {
        for (const Json& name : value.as_array()) {
          if (name.is_string()) node->required.emplace_back(name.as_string());
        }
      }
    } else if (key == "properties") {
      if (value.is_object()) {
        for (const auto& [name, sub] : value.as_object()) {
          if (sub.is_object()) node->properties.emplace(std::string_view(name), build(sub));
        }
      }
    } else if (key == "additionalProperties") {
      if (value.is_bool()) node->additional_properties = value.as_bool();
    } else if (key == "items") {
      if (value.is_object()) node->items = build(value);
    } else if (key == "enum") {
      if (value.is_array()) node->enum_values = &value.as_array();
    } else if (key == "const") {
      node->const_value = &value;
    } else if (key == "minLength") {
      if (value.is_number()) node->min_length = &value.as_number();
    } else if (key == "minimum") {
      if (value.is_number()) node->minimum = &value.as_number();
    }
    // Anything else (maxLength, pattern, format, $ref, x-gdpr-sensitive, ...) is ignored.
  }
  return node;
}

// True when the number has a zero fractional part, decided exactly from its lexeme:
// the value is D x 10^(exp - k), where D is the digits of the mantissa without its point and k
// the number of fraction digits up to the last non-zero one. `1.0`, `1e400`, `12.50e1` and `-0.0`
// are integers; `1.5`, `1.5e0`, `15e-1`, `150e-2` and `1e-400` are not.
bool is_integral(const JsonNumber& number) noexcept {
  if (number.is_integer()) return true;  // no fraction, no exponent
  const std::string_view s = number.lexeme();
  if (s.empty()) return false;  // NaN or infinity
  std::size_t i = 0;
  if (s[i] == '-') ++i;
  const std::size_t int_begin = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9')
    ++i;
  const std::string_view int_digits = s.substr(int_begin, i - int_begin);
  std::string_view frac_digits;
  if (i < s.size() && s[i] == '.') {
    const std::size_t frac_begin = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9')
      ++i;
    frac_digits = s.substr(frac_begin, i - frac_begin);
  }
  // The exponent, saturated far beyond any lexeme length so the sign decides for huge values.
  constexpr std::int64_t kCap = std::int64_t{1} << 52;
  std::int64_t exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      if (exponent < kCap) exponent = exponent * 10 + (s[i] - '0');
    }
    if (negative) exponent = -exponent;
  }
  const std::size_t last_frac = frac_digits.find_last_not_of('0');
  if (last_frac != std::string_view::npos) {
    // A non-zero fraction digit at position k-1: integral iff the exponent shifts it out.
    return exponent >= static_cast<std::int64_t>(last_frac + 1);
  }
  const std::size_t last_int = int_digits.find_last_not_of('0');
  if (last_int == std::string_view::npos) return true;  // the value is zero
  const auto trailing_zeros = static_cast<std::int64_t>(int_digits.size() - last_int - 1);
  return exponent + trailing_zeros >= 0;
}

// The number of Unicode code points in valid UTF-8 (HLP-12, conformance payload_schema_unicode):
// every byte that is not a continuation byte starts one.
std::size_t code_points(std::string_view s) noexcept {
  std::size_t n = 0;
  for (const char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0U) != 0x80U) ++n;
  }
  return n;
}

// `"name"` with quotes and backslashes escaped; never throws on odd bytes.
std::string quote_name(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (const char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

// Compact JSON for a message; a value that cannot be encoded (a NaN built in code) is elided.
std::string printable(const Json& value) {
  try {
    return value.dump();
  } catch (const std::exception&) {
    return "<unencodable value>";
  }
}

const char* type_name(Type type) noexcept {
  switch (type) {
    case Type::Object:
      return "an object";
    case Type::Array:
      return "an array";
    case Type::String:
      return "a string";
    case Type::Integer:
      return "an integer";
    case Type::Number:
      return "a number";
    case Type::Boolean:
      return "a boolean";
    case Type::Null:
      return "null";
    case Type::Any:
      break;
  }
  return "anything";
}

// Walks data and schema together, collecting violations under a JSON pointer (RFC 6901).
class Validator {
 public:
  explicit Validator(bool first_only) : first_only_(first_only) {}

  void validate(const Node& node, const Json& value) {
    if (done()) return;
    // const and enum come first and apply whatever the type (HLP-12).
    if (node.const_value != nullptr && !(value == *node.const_value)) {
      fail("must equal const " + printable(*node.const_value));
    }
    if (node.enum_values != nullptr && !in_enum(*node.enum_values, value)) {
      fail("must be one of the enum values");
    }
    switch (node.type) {
      case Type::Any:
        return;
      case Type::Object:
        validate_object(node, value);
        return;
      case Type::Array:
        validate_array(node, value);
        return;
      case Type::String:
        if (!value.is_string()) return fail_type(node.type);
        if (node.min_length != nullptr) check_min_length(*node.min_length, value.as_string());
        return;
      case Type::Integer:
        if (!value.is_number() || !is_integral(value.as_number())) return fail_type(node.type);
        check_minimum(node, value.as_number());
        return;
      case Type::Number:
        if (!value.is_number()) return fail_type(node.type);
        if (!value.as_number().is_finite()) return fail("must be a finite number");
        check_minimum(node, value.as_number());
        return;
      case Type::Boolean:
        if (!value.is_bool()) fail_type(node.type);
        return;
      case Type::Null:
        if (!value.is_null()) fail_type(node.type);
        return;
    }
  }

  [[nodiscard]] std::vector<std::string> take() { return std::move(violations_); }
  [[nodiscard]] bool valid() const noexcept { return violations_.empty(); }

 private:
  [[nodiscard]] bool done() const noexcept { return first_only_ && !violations_.empty(); }

  static bool in_enum(const JsonArray& values, const Json& value) noexcept {
    for (const Json& candidate : values) {
      if (candidate == value) return true;
    }
    return false;
  }

  void validate_object(const Node& node, const Json& value) {
    if (!value.is_object()) return fail_type(Type::Object);
    for (const std::string_view name : node.required) {
      // A member whose value is null is present (HLP-12).
      if (value.find(name) == nullptr) fail("missing required property " + quote_name(name));
    }
    for (const auto& [name, member] : value.as_object()) {
      if (done()) return;
      const auto it = node.properties.find(std::string_view(name));
      if (it != node.properties.end()) {
        Segment segment(*this, name);
        validate(*it->second, member);
      } else if (node.additional_properties == false) {
        Segment segment(*this, name);
        fail("additional property is not allowed");
      }
    }
  }

  void validate_array(const Node& node, const Json& value) {
    if (!value.is_array()) return fail_type(Type::Array);
    if (node.items == nullptr) return;
    const JsonArray& items = value.as_array();
    for (std::size_t i = 0; i < items.size() && !done(); ++i) {
      Segment segment(*this, std::to_string(i));
      validate(*node.items, items[i]);
    }
  }

  // minLength counts code points; Go and Python truncate a fractional bound toward zero, and
  // `n < trunc(m)` is `n + 1 <= m` for a count n >= 0, which needs no rounding.
  void check_min_length(const JsonNumber& bound, std::string_view text) {
    const auto count = static_cast<unsigned long long>(code_points(text));
    if (compare(Json(count + 1ULL).as_number(), bound) <= 0) {
      fail("must be at least " + bound.lexeme() + " characters long, got " + std::to_string(count));
    }
  }

  // minimum is inclusive and compared exactly (no double rounding).
  void check_minimum(const Node& node, const JsonNumber& number) {
    if (node.minimum == nullptr || !number.is_finite() || !node.minimum->is_finite()) return;
    if (compare(number, *node.minimum) < 0) fail("must be >= " + node.minimum->lexeme());
  }

  void fail_type(Type type) { fail(std::string("must be ") + type_name(type)); }

  void fail(const std::string& message) {
    if (done()) return;
    violations_.push_back((pointer_.empty() ? std::string("(root)") : pointer_) + ": " + message);
  }

  // Appends `/<escaped name>` to the pointer for the lifetime of the object.
  class Segment {
   public:
    Segment(Validator& v, std::string_view name) : v_(v), size_(v.pointer_.size()) {
      v_.pointer_.push_back('/');
      for (const char c : name) {
        if (c == '~') {
          v_.pointer_ += "~0";
        } else if (c == '/') {
          v_.pointer_ += "~1";
        } else {
          v_.pointer_.push_back(c);
        }
      }
    }
    Segment(const Segment&) = delete;
    Segment& operator=(const Segment&) = delete;
    ~Segment() { v_.pointer_.resize(size_); }

   private:
    Validator& v_;
    std::size_t size_;
  };

  bool first_only_;
  std::string pointer_;
  std::vector<std::string> violations_;
};

std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw std::system_error(std::make_error_code(std::errc::is_a_directory));
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno != 0 ? errno : static_cast<int>(std::errc::io_error);
    throw std::system_error(err, std::generic_category());
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::system_error(std::make_error_code(std::errc::io_error));
  return std::move(text).str();
}

}  // namespace

// ---- Schema ----

Schema::Schema() : Schema(Json(JsonObject{})) {}

Schema::Schema(const Json& document) {
  if (!document.is_object()) throw ConfigError("schema: a schema document must be a JSON object");
  auto doc = std::make_shared<const Json>(document);
  root_ = build(*doc);  // points into *doc, which document_ keeps alive
  document_ = std::move(doc);
}

Schema Schema::parse(std::string_view text) {
  auto parsed = Json::try_parse(text);
  if (!parsed) throw ConfigError(std::string("schema: parse: ") + parsed.error().what());
  return Schema(*parsed);
}

std::vector<std::string> Schema::validate(const Json& data) const {
  Validator v(false);
  v.validate(*root_, data);
  return v.take();
}

bool Schema::is_valid(const Json& data) const {
  Validator v(true);
  v.validate(*root_, data);
  return v.valid();
}

const Json& Schema::document() const noexcept {
  return *document_;
}

// ---- InvalidPayload ----

namespace {
std::string invalid_payload_message(std::string_view urn, const std::vector<std::string>& list) {
  std::string what = "invalid payload for ";
  what += urn;
  what += ": ";
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i > 0) what += "; ";
    what += list[i];
  }
  return what;
}
}  // namespace

InvalidPayload::InvalidPayload(std::string urn, std::vector<std::string> list)
    : Error(ErrorCode::InvalidPayload, invalid_payload_message(urn, list)),
      urn_(std::move(urn)),
      violations_(std::move(list)) {}

// ---- MapProvider ----

MapProvider::MapProvider(const std::map<std::string, std::string>& schemas) {
  for (const auto& [urn, text] : schemas) {
    try {
      schemas_.emplace(urn, Schema::parse(text));
    } catch (const Error& e) {
      throw ConfigError("schema: " + quote_name(urn) + ": " + e.what());
    }
  }
}

std::optional<Schema> MapProvider::schema(std::string_view urn) const {
  const auto it = schemas_.find(urn);
  if (it == schemas_.end()) return std::nullopt;
  return it->second;
}

// ---- DirProvider ----

DirProvider::DirProvider(const std::filesystem::path& manifest_path) {
  const std::string where = manifest_path.string();
  std::string text;
  try {
    text = read_file(manifest_path);
  } catch (const std::exception& e) {
    throw ConfigError("schema: read " + where + ": " + e.what());
  }
  auto parsed = Json::try_parse(text);
  if (!parsed) throw ConfigError("schema: parse " + where + ": " + parsed.error().what());
  const Json& manifest = *parsed;
  if (!manifest.is_object()) {
    throw ConfigError("schema: " + where + ": a registry manifest must be a JSON object");
  }
  const Json* entries = manifest.find("schemas");
  if (entries == nullptr || entries->is_null()) return;
  if (!entries->is_array()) {
    throw ConfigError("schema: " + where + ": \"schemas\" must be an array");
  }
  const std::filesystem::path dir = manifest_path.parent_path();
  for (const Json& entry : entries->as_array()) {
    const Json* urn = entry.find("urn");  // nullptr when entry is not an object
    const Json* file = entry.find("schema");
    if (urn == nullptr || file == nullptr || !urn->is_string() || !file->is_string() ||
        urn->as_string().empty() || file->as_string().empty()) {
      continue;  // entries without a urn or a schema are skipped (HLP-10)
    }
    // `dir / file` keeps an absolute `file` as it is.
    files_.insert_or_assign(urn->as_string(), dir / std::filesystem::path(file->as_string()));
  }
}

std::optional<Schema> DirProvider::schema(std::string_view urn) const {
  const std::lock_guard<std::mutex> lock(mu_);
  if (const auto cached = cache_.find(urn); cached != cache_.end()) return cached->second;
  const auto entry = files_.find(urn);
  if (entry == files_.end()) return std::nullopt;
  const std::filesystem::path& path = entry->second;
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    throw ConfigError("schema: read schema for " + quote_name(urn) + " (" + path.string() +
                      "): " + e.what());
  }
  std::optional<Schema> parsed;
  try {
    parsed.emplace(Schema::parse(text));
  } catch (const Error& e) {
    throw ConfigError("schema: " + quote_name(urn) + " (" + path.string() + "): " + e.what());
  }
  cache_.emplace(std::string(urn), *parsed);
  return parsed;
}

// ---- check / validate ----

std::vector<std::string> violations(const Provider& provider, std::string_view urn,
                                    const Json& data) {
  const std::optional<Schema> found = provider.schema(urn);
  if (!found) return {};
  return found->validate(data);
}

std::optional<InvalidPayload> try_check(const Provider& provider, std::string_view urn,
                                        const Json& data) {
  std::vector<std::string> list = violations(provider, urn, data);
  if (list.empty()) return std::nullopt;
  return InvalidPayload(std::string(urn), std::move(list));
}

void check(const Provider& provider, std::string_view urn, const Json& data) {
  if (auto invalid = try_check(provider, urn, data)) throw std::move(*invalid);
}

void validate(const Provider& provider, const Envelope& env) {
  check(provider, env.urn(), env.data());
}

std::optional<InvalidPayload> try_validate(const Provider& provider, const Envelope& env) {
  return try_check(provider, env.urn(), env.data());
}

// ---- App adapters ----

Handler wrap_handler(std::shared_ptr<const Provider> provider, Handler handler) {
  if (!provider) throw ConfigError("schema: wrap_handler() needs a provider");
  if (!handler) throw ConfigError("schema: wrap_handler() needs a handler");
  return [provider = std::move(provider), handler = std::move(handler)](
             Context& ctx, const Envelope& env) -> Status {
    if (std::optional<InvalidPayload> invalid = try_validate(*provider, env)) {
      // The Status carries the code and the text; violations() stay on the thrown-path type.
      return Status(Error(invalid->code(), invalid->what()));
    }
    return handler(ctx, env);
  };
}

std::string publish_checked(App& app, const Provider& provider, std::string_view urn, Json data,
                            const PublishOptions& options) {
  // The envelope carries the trimmed URN (ENV-10), so that is the schema key.
  check(provider, trim_w(urn), data);
  return app.publish(urn, std::move(data), options);
}

}  // namespace babelqueue::schema
