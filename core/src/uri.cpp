// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Transport URLs (transport kit). Error messages name the offending part and never contain the
// password: a URL usually comes from configuration that also reaches logs.

#include <babelqueue/errors.hpp>
#include <babelqueue/spi/text.hpp>
#include <babelqueue/spi/uri.hpp>

#include <algorithm>
#include <charconv>
#include <string>

namespace babelqueue::spi {
namespace {

using spi::quoted;

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

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// The length of the scheme `url` starts with (RFC 3986 3.1: a letter, then letters, digits, '+',
// '-', '.'), followed by "://"; 0 when there is none.
std::size_t scheme_length(std::string_view url) {
  const std::size_t sep = url.find("://");
  if (sep == std::string_view::npos || sep == 0 || !is_alpha(url.front())) return 0;
  for (char ch : url.substr(0, sep)) {
    if (!is_alpha(ch) && !is_digit(ch) && ch != '+' && ch != '-' && ch != '.') return 0;
  }
  return sep;
}

// The parts of `scheme://authority[/path][?query]`; the authority ends at the first '/' or '?'.
// The last '@' of the authority ends the userinfo, so an unencoded '@' in a password parses.
struct Split {
  std::string_view userinfo;  // without '@'
  bool has_userinfo = false;
  std::string_view hostport;
  std::string_view path;
  std::string_view query;
};

Split split(std::string_view rest) {
  Split out;
  if (const std::size_t q = rest.find('?'); q != std::string_view::npos) {
    out.query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  out.path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    out.userinfo = authority.substr(0, at);
    out.has_userinfo = true;
    authority = authority.substr(at + 1);
  }
  out.hostport = authority;
  return out;
}

std::string decode_or_fail(std::string_view text, std::string_view part, std::string_view url,
                           bool plus_is_space = false) {
  try {
    return percent_decode(text, plus_is_space);
  } catch (const ConfigError&) {
    throw ConfigError("URL " + redact_url(url) + ": invalid percent-escape in the " +
                      std::string(part));
  }
}

}  // namespace

std::string percent_encode(std::string_view text, std::string_view also_plain) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
                            c == '~' || also_plain.find(c) != std::string_view::npos;
    if (unreserved) {
      out += c;
    } else {
      out += {'%', kHex[byte >> 4U], kHex[byte & 0xFU]};
    }
  }
  return out;
}

std::string percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (plus_is_space && s[i] == '+') {
      out.push_back(' ');
      continue;
    }
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size() || !is_hex(s[i + 1]) || !is_hex(s[i + 2])) {
      throw ConfigError("invalid percent-escape");  // the text may be a password: not shown
    }
    out.push_back(static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2])));
    i += 2;
  }
  return out;
}

std::optional<std::string> url_scheme(std::string_view url) {
  const std::size_t length = scheme_length(url);
  if (length == 0) return std::nullopt;
  return lower(url.substr(0, length));
}

std::string redact_url(std::string_view url) {
  const std::size_t length = scheme_length(url);
  if (length == 0) return "\"<unparsable URL>\"";  // no telling where a password would be
  std::string out(url.substr(0, length + 3));
  std::string_view rest = url.substr(length + 3);
  // The last '@' anywhere ends the userinfo here: a password holding an unencoded '/', '?' or
  // '#' (a URL parse_uri rejects) is hidden whole, user included.
  if (const std::size_t at = rest.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = rest.substr(0, at);
    const std::size_t colon = userinfo.find(':');
    if (userinfo.find_first_of("/?#") != std::string_view::npos) {
      out += "***";
    } else {
      out += userinfo.substr(0, colon);
      if (colon != std::string_view::npos) out += ":***";
    }
    out += '@';
    rest = rest.substr(at + 1);
  }
  out += rest;
  return out;
}

std::string Uri::redacted() const {
  std::string out = scheme + "://";
  if (user) {
    out += *user;
    if (password) out += ":***";
    out += '@';
  }
  if (ipv6_literal) {
    out += '[' + host + ']';
  } else {
    out += host;
  }
  if (port) out += ':' + std::to_string(*port);
  out += path;
  for (std::size_t i = 0; i < query.size(); ++i) {
    out += i == 0 ? '?' : '&';
    out += query[i].first + '=' + query[i].second;
  }
  return out;
}

Uri parse_uri(std::string_view url) {
  const auto fail = [&](const std::string& what) -> void {
    throw ConfigError("URL " + redact_url(url) + ": " + what);
  };
  const std::size_t scheme = scheme_length(url);
  if (scheme == 0) {
    throw ConfigError("URL " + redact_url(url) + ": expected scheme://[user[:password]@]host...");
  }
  Uri uri;
  uri.scheme = lower(url.substr(0, scheme));
  const Split parts = split(url.substr(scheme + 3));
  if (url.find('#') != std::string_view::npos) {
    fail("a fragment ('#') is not allowed; percent-encode '#' in a password as %23");
  }
  // An '@' past the authority is almost certainly the end of a password that holds an
  // unencoded '/' or '?'; refusing it keeps pieces of that password out of later messages.
  if (parts.path.find('@') != std::string_view::npos ||
      parts.query.find('@') != std::string_view::npos) {
    fail("'@' after the host: percent-encode '/', '?', '#' and '@' in a user or password");
  }
  if (parts.has_userinfo) {
    const std::size_t colon = parts.userinfo.find(':');
    uri.user = decode_or_fail(parts.userinfo.substr(0, colon), "user", url);
    if (colon != std::string_view::npos) {
      uri.password = decode_or_fail(parts.userinfo.substr(colon + 1), "password", url);
    }
  }

  std::string_view hostport = parts.hostport;
  std::string_view rest;
  if (!hostport.empty() && hostport.front() == '[') {
    const std::size_t close = hostport.find(']');
    if (close == std::string_view::npos) fail("unterminated IPv6 address (missing ']')");
    const std::string_view host = hostport.substr(1, close - 1);
    if (host.empty()) fail("empty IPv6 address");
    for (char ch : host) {
      if (!is_hex(ch) && ch != ':' && ch != '.') fail("invalid IPv6 address " + quoted(host));
    }
    rest = hostport.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') fail("unexpected text after the IPv6 address");
    uri.host = std::string(host);
    uri.ipv6_literal = true;
  } else {
    const std::size_t colon = hostport.find(':');
    if (colon != hostport.rfind(':')) fail("an IPv6 address needs brackets: [::1]:port");
    const std::string_view host = hostport.substr(0, colon);
    for (char ch : host) {
      if (!is_alpha(ch) && !is_digit(ch) && ch != '-' && ch != '.' && ch != '_') {
        fail("invalid character in host " + quoted(host));
      }
    }
    rest = colon == std::string_view::npos ? std::string_view() : hostport.substr(colon);
    uri.host = lower(host);
  }
  if (!rest.empty()) {
    const std::string_view port = rest.substr(1);
    unsigned value = 0;
    const auto r = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || r.ec != std::errc() || r.ptr != port.data() + port.size() || value < 1 ||
        value > 65535) {
      fail("invalid port " + quoted(port) + " (expected 1..65535)");
    }
    uri.port = static_cast<std::uint16_t>(value);
  }
  uri.path = decode_or_fail(parts.path, "path", url);

  std::string_view query = parts.query;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    std::string key = decode_or_fail(pair.substr(0, eq), "query", url, true);
    if (key.empty()) fail("a query option without a name");
    if (eq == std::string_view::npos) fail("query option " + quoted(key) + " needs a value");
    std::string value = decode_or_fail(pair.substr(eq + 1), "query", url, true);
    for (const auto& [k, v] : uri.query) {
      if (k == key) fail("query option " + quoted(key) + " is given twice");
    }
    uri.query.emplace_back(std::move(key), std::move(value));
  }
  return uri;
}

// ---- QueryOptions ----

QueryOptions::QueryOptions(const Uri& uri, std::string context) : context_(std::move(context)) {
  entries_.reserve(uri.query.size());
  for (const auto& [k, v] : uri.query)
    entries_.push_back(Entry{k, v, false});
}

std::optional<std::string> QueryOptions::take(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
  for (Entry& e : entries_) {
    if (e.key != key) continue;
    e.taken = true;
    if (e.value.empty()) {
      throw ConfigError("option " + quoted(key) + " in " + context_ + " has an empty value");
    }
    return e.value;
  }
  return std::nullopt;
}

std::optional<std::int64_t> QueryOptions::take_int(std::string_view key, std::int64_t min,
                                                   std::int64_t max) {
  const std::optional<std::string> v = take(key);
  if (!v) return std::nullopt;
  std::int64_t out = 0;
  const auto r = std::from_chars(v->data(), v->data() + v->size(), out);
  if (r.ec != std::errc() || r.ptr != v->data() + v->size() || out < min || out > max) {
    throw ConfigError("option " + quoted(key) + " in " + context_ + " must be an integer in " +
                      std::to_string(min) + ".." + std::to_string(max) + ", got " + quoted(*v));
  }
  return out;
}

std::optional<bool> QueryOptions::take_bool(std::string_view key) {
  const std::optional<std::string> v = take(key);
  if (!v) return std::nullopt;
  const std::string s = lower(*v);
  if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "0" || s == "no" || s == "off") return false;
  throw ConfigError("option " + quoted(key) + " in " + context_ + " must be true or false, got " +
                    quoted(*v));
}

std::optional<std::chrono::milliseconds> QueryOptions::take_seconds(std::string_view key) {
  const std::optional<std::string> v = take(key);
  if (!v) return std::nullopt;
  const std::string_view value = *v;
  const auto bad = [&]() {
    throw ConfigError("option " + quoted(key) + " in " + context_ +
                      " must be a number of seconds (e.g. 2 or 0.5), got " + quoted(value));
  };
  const std::size_t dot = value.find('.');
  const std::string_view whole = value.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? "" : value.substr(dot + 1);
  if (whole.empty() || (dot != std::string_view::npos && frac.empty())) bad();
  if (whole.size() > 9) bad();  // about 31 years: far from overflowing the ms count
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
  if (remainder) ++ms;  // rounded up: a positive value never becomes 0
  return std::chrono::milliseconds(ms);
}

std::optional<std::string> QueryOptions::take_choice(std::string_view key,
                                                     const std::vector<std::string_view>& allowed) {
  std::optional<std::string> v = take(key);
  if (!v) return std::nullopt;
  if (std::find(allowed.begin(), allowed.end(), *v) != allowed.end()) return v;
  std::string list;
  for (std::string_view a : allowed) {
    if (!list.empty()) list += ", ";
    list += a;
  }
  throw ConfigError("option " + quoted(key) + " in " + context_ + " must be one of " + list +
                    ", got " + quoted(*v));
}

void QueryOptions::finish() const {
  for (const Entry& e : entries_) {
    if (e.taken) continue;
    std::string known;
    for (const auto& k : known_) {
      if (!known.empty()) known += ", ";
      known += k;
    }
    throw ConfigError(
        "unknown option " + quoted(e.key) + " in " + context_ +
        (known.empty() ? std::string(" (it takes no options)") : " (known: " + known + ")"));
  }
}

}  // namespace babelqueue::spi
