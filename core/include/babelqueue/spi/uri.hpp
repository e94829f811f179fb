// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/export.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/// @file
/// Transport kit: one URI type and parser for every transport URL
/// (`scheme://[user[:password]@]host[:port][/path][?key=value&...]`), and typed query options.
/// Each transport maps a `Uri` onto its own options struct. Every error is a ConfigError whose
/// text never contains the password (it shows `redacted()`).

namespace babelqueue::spi {

/// A parsed transport URL. Userinfo, path and query values are percent-decoded.
///
/// Thread-safety: a value type.
struct Uri {
  /// Lower-cased scheme, without `://`.
  std::string scheme;
  /// Decoded user name; nullopt when the URL has no userinfo.
  std::optional<std::string> user;
  /// Decoded password; nullopt when the userinfo has no `:`.
  std::optional<std::string> password;
  /// Host without brackets (an IPv6 literal such as `::1` keeps its colons); may be empty
  /// (`unix:///path`, `redis:///0`).
  std::string host;
  /// True when the host was written as a bracketed IPv6 literal.
  bool ipv6_literal = false;
  /// Port when given.
  std::optional<std::uint16_t> port;
  /// Decoded path including its leading `/`; empty when absent.
  std::string path;
  /// Decoded query parameters in URL order (duplicates are rejected by `parse_uri`).
  std::vector<std::pair<std::string, std::string>> query;

  /// The URL with the password replaced by `***`: the only form that may appear in messages.
  [[nodiscard]] BABELQUEUE_EXPORT std::string redacted() const;
};

/// Parses `url`. @throws ConfigError (text without the password) for a missing scheme, a bad
/// percent-escape, an unterminated IPv6 literal, a port that is not 1..65535, an empty or
/// duplicate query key.
BABELQUEUE_EXPORT Uri parse_uri(std::string_view url);

/// `text` with every byte but the RFC 3986 unreserved characters (letters, digits, `-._~`) and
/// those in `also_plain` written as `%XX` (upper-case hex): safe in a userinfo, a path segment
/// or a query value. Never throws except std::bad_alloc.
BABELQUEUE_EXPORT std::string percent_encode(std::string_view text,
                                             std::string_view also_plain = {});
/// Decodes `%XX` escapes (and, when `plus_is_space`, `+` as a space).
/// @throws ConfigError for a truncated or non-hex escape.
BABELQUEUE_EXPORT std::string percent_decode(std::string_view text, bool plus_is_space = false);

/// `url` with the password of its userinfo replaced by `***`, for a URL that may not even
/// parse (used in error texts): the userinfo ends at the last `@`, and one holding `/`, `?` or
/// `#` is hidden whole; without a valid scheme nothing of `url` is shown. Never throws except
/// std::bad_alloc.
BABELQUEUE_EXPORT std::string redact_url(std::string_view url);

/// The lower-cased scheme `url` starts with (a letter, then letters, digits, `+`, `-`, `.`,
/// followed by `://`), or nullopt; the rest of `url` is not looked at. Never throws except
/// std::bad_alloc.
BABELQUEUE_EXPORT std::optional<std::string> url_scheme(std::string_view url);

/// Typed access to the query options of a `Uri`, with unknown-key checking.
///
/// Usage: take every option the transport knows, then call `finish()`, which throws for any
/// key nobody took, naming it and the keys that are allowed.
///
/// Thread-safety: not thread-safe; a short-lived local object.
class BABELQUEUE_EXPORT QueryOptions {
 public:
  /// `context` names the URL in errors, e.g. `uri.redacted()`.
  QueryOptions(const Uri& uri, std::string context);

  /// The raw value of `key`, marking it taken.
  std::optional<std::string> take(std::string_view key);
  /// An integer in [min, max]. @throws ConfigError for anything else.
  std::optional<std::int64_t> take_int(std::string_view key, std::int64_t min, std::int64_t max);
  /// `true/false/1/0/yes/no/on/off`. @throws ConfigError for anything else.
  std::optional<bool> take_bool(std::string_view key);
  /// Seconds with an optional fraction (`0.25`), as milliseconds (rounded up to 1 ms when > 0),
  /// >= 0. @throws ConfigError for anything else.
  std::optional<std::chrono::milliseconds> take_seconds(std::string_view key);
  /// One of `allowed`. @throws ConfigError naming the allowed values for anything else.
  std::optional<std::string> take_choice(std::string_view key,
                                         const std::vector<std::string_view>& allowed);
  /// @throws ConfigError when a key was not taken: "unknown option "x" in <context> (known: ...)".
  void finish() const;

 private:
  struct Entry {
    std::string key;
    std::string value;
    bool taken = false;
  };
  std::vector<Entry> entries_;
  std::vector<std::string> known_;
  std::string context_;
};

/// Runs `parse()` (a transport's URL parser) and re-throws its ConfigError as
/// "<transport> URL: <what>", a leading "URL " of the kit's own texts dropped, so that every
/// error of a transport's `parse_url` names the transport once.
template <class Parse>
auto with_url_context(std::string_view transport, Parse&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const ConfigError& e) {
    std::string_view what = e.what();
    if (what.starts_with("URL ")) what.remove_prefix(4);
    std::string text(transport);
    text += " URL: ";
    text += what;
    throw ConfigError(text);
  }
}

}  // namespace babelqueue::spi
