// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Connection URLs (RDS-2) and the layout names (RDS-8). Error messages name the offending part
// and never contain the user or password: a URL usually comes from configuration that also
// reaches logs.

#include <babelqueue/redis/transport.hpp>

#include <charconv>
#include <climits>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "text.hpp"

namespace babelqueue::redis {
namespace {

using detail::quoted;

[[noreturn]] void fail(const std::string& what) {
  throw ConfigError("redis URL: " + what);
}

// Schemes are case-insensitive (RFC 3986 §3.1); `lower` is already lowercase.
bool iequals(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char x = (a[i] >= 'A' && a[i] <= 'Z') ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (x != lower[i]) return false;
  }
  return true;
}

bool is_digit(char ch) {
  return ch >= '0' && ch <= '9';
}
bool is_alpha(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}
bool is_hex(char ch) {
  return is_digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}
int hex_value(char ch) {
  if (is_digit(ch)) return ch - '0';
  return (ch | 0x20) - 'a' + 10;
}

// RFC 3986 §2.1. `part` names the component for the message; the value is never shown, since
// it may be a password. '+' stays '+' (URI semantics, not HTML form encoding).
std::string percent_decode(std::string_view s, std::string_view part) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size() || !is_hex(s[i + 1]) || !is_hex(s[i + 2])) {
      fail("invalid percent-escape in the " + std::string(part));
    }
    out.push_back(static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2])));
    i += 2;
  }
  return out;
}

// A whole decimal integer (optional '-'), or nullopt.
std::optional<std::int64_t> to_int64(std::string_view s) {
  std::int64_t v = 0;
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, v);
  if (s.empty() || r.ec != std::errc() || r.ptr != end) return std::nullopt;
  return v;
}

int int_option(std::string_view name, std::string_view value, int min) {
  const auto v = to_int64(value);
  if (!v || *v < min || *v > INT_MAX) {
    fail(std::string(name) + " must be an integer >= " + std::to_string(min) + ", got " +
         quoted(value));
  }
  return static_cast<int>(*v);
}

// Seconds as `digits[.digits]`, rounded up to whole milliseconds, at least 1 ms.
std::chrono::milliseconds seconds_option(std::string_view name, std::string_view value) {
  const auto bad = [&]() {
    fail(std::string(name) + " must be a positive number of seconds (e.g. 2 or 0.5), got " +
         quoted(value));
  };
  const std::size_t dot = value.find('.');
  const std::string_view whole = value.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? "" : value.substr(dot + 1);
  if (whole.empty() || (dot != std::string_view::npos && frac.empty())) bad();
  // Nine digits (about 31 years) keep the millisecond count far from overflow.
  if (whole.size() > 9) bad();
  std::int64_t ms = 0;
  for (char ch : whole) {
    if (!is_digit(ch)) bad();
    ms = ms * 10 + (ch - '0');
  }
  ms *= 1000;
  std::int64_t scale = 100;
  bool remainder = false;
  for (char ch : frac) {
    if (!is_digit(ch)) bad();
    if (scale > 0) {
      ms += (ch - '0') * scale;
      scale /= 10;
    } else {
      remainder |= ch != '0';
    }
  }
  if (remainder) ++ms;
  if (ms == 0) bad();
  return std::chrono::milliseconds(ms);
}

// `[::1]` or a name / IPv4 address, then an optional `:port`.
void parse_host_port(std::string_view hostport, Options& o) {
  std::string_view host;
  std::string_view rest;
  if (!hostport.empty() && hostport.front() == '[') {
    const std::size_t close = hostport.find(']');
    if (close == std::string_view::npos) fail("unterminated IPv6 address (missing ']')");
    host = hostport.substr(1, close - 1);
    rest = hostport.substr(close + 1);
    if (host.empty()) fail("empty host");
    for (char ch : host) {
      if (!is_hex(ch) && ch != ':' && ch != '.') fail("invalid IPv6 address " + quoted(host));
    }
    if (!rest.empty() && rest.front() != ':') fail("unexpected text after the IPv6 address");
  } else {
    const std::size_t colon = hostport.find(':');
    if (colon != hostport.rfind(':')) fail("an IPv6 address needs brackets: [::1]:6379");
    host = hostport.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : hostport.substr(colon);
    if (host.empty()) fail("empty host");
    for (char ch : host) {
      if (!is_alpha(ch) && !is_digit(ch) && ch != '-' && ch != '.' && ch != '_') {
        fail("invalid character in host " + quoted(host));
      }
    }
  }
  if (!rest.empty()) {
    const std::string_view port = rest.substr(1);
    const auto v = to_int64(port);
    if (!v || !is_digit(port.front()) || *v < 1 || *v > 65535) {
      fail("invalid port " + quoted(port) + " (expected 1..65535)");
    }
    o.port = static_cast<int>(*v);
  }
  o.host = std::string(host);
}

// `user:password`, `:password` (AUTH with the password only). A bare `user` with no ':' is
// refused rather than silently connecting without AUTH.
void parse_userinfo(std::string_view userinfo, Options& o) {
  if (userinfo.empty()) return;
  const std::size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos) {
    fail("user without a password: write user:password@ (or :password@ for the password only)");
  }
  o.user = percent_decode(userinfo.substr(0, colon), "user");
  o.password = percent_decode(userinfo.substr(colon + 1), "password");
}

// Splits `[userinfo@]rest` at the last '@', so an unencoded '@' in a password still works.
std::string_view take_userinfo(std::string_view authority, Options& o) {
  const std::size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return authority;
  parse_userinfo(authority.substr(0, at), o);
  return authority.substr(at + 1);
}

// Returns true when the path set the database index.
bool parse_tcp(std::string_view rest, Options& o) {
  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  const std::string_view path =
      slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  // An '@' past the authority is almost certainly the end of a password that holds an
  // unencoded '/', '?' or '#'; refusing it keeps pieces of that password out of later messages.
  if (path.find('@') != std::string_view::npos) {
    fail("'@' after the host: percent-encode '/', '?', '#' and '@' in a user or password");
  }
  parse_host_port(take_userinfo(authority, o), o);
  o.unix_socket.clear();
  if (path.size() <= 1) return false;  // "" or "/"
  const std::string_view db = path.substr(1);
  const auto v = to_int64(db);
  if (!v || !is_digit(db.front()) || *v > INT_MAX) {
    fail("invalid database index " + quoted(db) + " in the path (expected /0, /1, ...)");
  }
  o.db = static_cast<int>(*v);
  return true;
}

void parse_unix(std::string_view rest, Options& o) {
  const std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos) fail("unix:// needs an absolute socket path: unix:///path");
  const std::string_view authority = rest.substr(0, slash);
  if (!authority.empty() && authority.back() != '@') {
    fail("unix:// takes no host: write unix:///path (or unix://:password@/path)");
  }
  take_userinfo(authority, o);
  const std::string path = percent_decode(rest.substr(slash), "socket path");
  if (path.size() <= 1) fail("empty socket path");
  o.unix_socket = path;
}

void apply_query(std::string_view query, bool path_db, Options& o) {
  std::set<std::string, std::less<>> seen;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    const std::string name = percent_decode(pair.substr(0, eq), "query");
    if (eq == std::string_view::npos) fail("query option " + quoted(name) + " needs a value");
    const std::string value = percent_decode(pair.substr(eq + 1), "query");
    if (value.empty()) fail("query option " + quoted(name) + " has an empty value");
    if (!seen.insert(name).second) fail("query option " + quoted(name) + " is given twice");

    if (name == "connect_timeout") {
      o.connect_timeout = seconds_option(name, value);
    } else if (name == "timeout") {
      o.command_timeout = seconds_option(name, value);
    } else if (name == "layout") {
      o.layout = parse_layout(value);
    } else if (name == "prefix") {
      o.laravel_key_prefix = value;
    } else if (name == "processing_suffix") {
      o.processing_suffix = value;
    } else if (name == "retry_after") {
      if (value == "none" || value == "null") {
        o.retry_after = std::nullopt;
        continue;
      }
      // Whole seconds only (spec/03-redis.md §5: sub-second retry_after is a config error).
      const auto v = to_int64(value);
      if (!v) fail("retry_after must be whole seconds or none, got " + quoted(value));
      if (*v < 0) fail("retry_after must not be negative (RDS-59), got " + quoted(value));
      o.retry_after = std::chrono::seconds(*v);
    } else if (name == "migration_batch_size") {
      // -1 = all; 0 would move nothing (LIMIT 0 0), so it is refused (RDS-51).
      const auto v = to_int64(value);
      if (!v || *v == 0 || *v < -1) {
        fail("migration_batch_size must be -1 (all) or a positive integer, got " + quoted(value));
      }
      o.migration_batch_size = *v;
    } else if (name == "prefetch") {
      o.prefetch = int_option(name, value, 1);
    } else if (name == "db") {
      if (path_db) fail("the database index is given twice (path and ?db=)");
      o.db = int_option(name, value, 0);
    } else {
      fail("unknown query option " + quoted(name) +
           " (known: connect_timeout, timeout, layout, prefix, processing_suffix, retry_after, "
           "migration_batch_size, prefetch, db)");
    }
  }
}

}  // namespace

Layout parse_layout(std::string_view text) {
  if (text == "legacy" || text == "default") return Layout::Legacy;
  if (text == "laravel" || text == "zset") return Layout::Laravel;
  throw ConfigError("unknown redis layout " + quoted(text) +
                    " (expected legacy, default, laravel or zset)");
}

Options parse_url(std::string_view url, Options base) {
  const std::size_t sep = url.find("://");
  if (sep == std::string_view::npos) {
    fail("expected redis://[[user]:password@]host[:port][/db][?options] or unix:///path");
  }
  const std::string_view scheme = url.substr(0, sep);
  std::string_view rest = url.substr(sep + 3);
  if (rest.find('#') != std::string_view::npos) {
    fail("a fragment ('#') is not allowed; percent-encode '#' in a password as %23");
  }
  std::string_view query;
  if (const std::size_t q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (query.find('@') != std::string_view::npos) {
    fail("'@' after the host: percent-encode '/', '?', '#' and '@' in a user or password");
  }
  bool path_db = false;
  if (iequals(scheme, "redis")) {
    path_db = parse_tcp(rest, base);
  } else if (iequals(scheme, "unix")) {
    parse_unix(rest, base);
  } else if (iequals(scheme, "rediss")) {
    fail("rediss:// (TLS) is not supported: this build's hiredis (0.14) has no TLS support");
  } else {
    bool plain = !scheme.empty() && is_alpha(scheme.front());
    for (char ch : scheme) {
      plain = plain && (is_alpha(ch) || is_digit(ch) || ch == '+' || ch == '-' || ch == '.');
    }
    std::string what = "unsupported scheme";
    if (plain) what.append(" ").append(quoted(scheme));
    fail(what + " (expected redis:// or unix://)");
  }
  apply_query(query, path_db, base);
  return base;
}

}  // namespace babelqueue::redis
