// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The transport kit's URL parser, query options and redaction (issue 8 item 3).

#include <babelqueue/errors.hpp>
#include <babelqueue/spi/uri.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using babelqueue::ConfigError;
using babelqueue::spi::parse_uri;
using babelqueue::spi::percent_decode;
using babelqueue::spi::percent_encode;
using babelqueue::spi::QueryOptions;
using babelqueue::spi::redact_url;
using babelqueue::spi::Uri;
using std::chrono::milliseconds;

// The ConfigError text `f` throws; fails the test when it does not throw. No text may contain
// the password used throughout these tests.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    const std::string text = e.what();
    EXPECT_EQ(text.find("s3cret"), std::string::npos) << text;
    return text;
  }
  ADD_FAILURE() << "no ConfigError";
  return {};
}

std::string parse_error(std::string_view url) {
  return error_of([url] { parse_uri(url); });
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

TEST(ParseUri, AllParts) {
  const Uri uri = parse_uri("Redis://alice:s3cret@Cache.Example-1.org:6380/2?layout=laravel&p=x");
  EXPECT_EQ(uri.scheme, "redis");
  EXPECT_EQ(uri.user, "alice");
  EXPECT_EQ(uri.password, "s3cret");
  EXPECT_EQ(uri.host, "cache.example-1.org");
  EXPECT_FALSE(uri.ipv6_literal);
  EXPECT_EQ(uri.port, std::uint16_t{6380});
  EXPECT_EQ(uri.path, "/2");
  const std::vector<std::pair<std::string, std::string>> query{{"layout", "laravel"}, {"p", "x"}};
  EXPECT_EQ(uri.query, query);
  EXPECT_EQ(uri.redacted(), "redis://alice:***@cache.example-1.org:6380/2?layout=laravel&p=x");
}

TEST(ParseUri, OptionalPartsAbsent) {
  const Uri uri = parse_uri("unix:///var/run/redis.sock");
  EXPECT_FALSE(uri.user.has_value());
  EXPECT_FALSE(uri.password.has_value());
  EXPECT_EQ(uri.host, "");
  EXPECT_FALSE(uri.port.has_value());
  EXPECT_EQ(uri.path, "/var/run/redis.sock");
  EXPECT_TRUE(uri.query.empty());
  EXPECT_EQ(parse_uri("redis://h?").query.size(), 0U);
  EXPECT_EQ(parse_uri("memory://").redacted(), "memory://");
}

TEST(ParseUri, UserWithoutPasswordAndPasswordWithoutUser) {
  const Uri user_only = parse_uri("amqp://guest@h");
  EXPECT_EQ(user_only.user, "guest");
  EXPECT_FALSE(user_only.password.has_value());
  EXPECT_EQ(user_only.redacted(), "amqp://guest@h");
  const Uri password_only = parse_uri("redis://:s3cret@h");
  EXPECT_EQ(password_only.user, "");
  EXPECT_EQ(password_only.password, "s3cret");
  EXPECT_EQ(password_only.redacted(), "redis://:***@h");
}

TEST(ParseUri, Ipv6LiteralWithAndWithoutPort) {
  const Uri with_port = parse_uri("redis://u:s3cret@[::1]:6380/0");
  EXPECT_EQ(with_port.host, "::1");
  EXPECT_TRUE(with_port.ipv6_literal);
  EXPECT_EQ(with_port.port, std::uint16_t{6380});
  EXPECT_EQ(with_port.path, "/0");
  EXPECT_EQ(with_port.redacted(), "redis://u:***@[::1]:6380/0");
  const Uri bare = parse_uri("amqp://[fe80::1:ffff:192.168.0.1]");
  EXPECT_EQ(bare.host, "fe80::1:ffff:192.168.0.1");
  EXPECT_FALSE(bare.port.has_value());
}

TEST(ParseUri, BadIpv6Literals) {
  EXPECT_CONTAINS(parse_error("redis://[::1"), "unterminated IPv6 address");
  EXPECT_CONTAINS(parse_error("redis://[]:1"), "empty IPv6 address");
  EXPECT_CONTAINS(parse_error("redis://[::g]"), "invalid IPv6 address \"::g\"");
  EXPECT_CONTAINS(parse_error("redis://[::1]6379"), "unexpected text after the IPv6 address");
  EXPECT_CONTAINS(parse_error("redis://::1:6379"), "an IPv6 address needs brackets");
}

TEST(ParseUri, PercentDecodedUserinfoPathAndQuery) {
  const Uri uri = parse_uri("amqp://us%20er:p%3As%2Fs%40%23+@h/my%2Fvhost?k%65y=a+b%26c");
  EXPECT_EQ(uri.user, "us er");
  EXPECT_EQ(uri.password, "p:s/s@#+");  // '+' is a space only in the query
  EXPECT_EQ(uri.path, "/my/vhost");
  ASSERT_EQ(uri.query.size(), 1U);
  EXPECT_EQ(uri.query[0].first, "key");
  EXPECT_EQ(uri.query[0].second, "a b&c");
}

TEST(ParseUri, UnencodedAtInPasswordParses) {
  const Uri uri = parse_uri("redis://user:s3cret@x@host:1/0");
  EXPECT_EQ(uri.user, "user");
  EXPECT_EQ(uri.password, "s3cret@x");
  EXPECT_EQ(uri.host, "host");
  EXPECT_EQ(uri.port, std::uint16_t{1});
}

TEST(ParseUri, AtAfterTheHostIsRejectedWithoutShowingThePassword) {
  // Unencoded '/', '?' or '#' in a password end the authority early.
  for (const char* url : {"redis://user:s3cret/x@host/0", "redis://user:s3cret?x@host/0",
                          "redis://user:s3/cret@host", "redis://user:s3?cret@host"}) {
    EXPECT_CONTAINS(parse_error(url), "'@' after the host");
    EXPECT_EQ(parse_error(url).find("cret"), std::string::npos) << url;
  }
  EXPECT_CONTAINS(parse_error("redis://user:s3cret#x@host"), "fragment");
  EXPECT_EQ(parse_error("redis://user:s3#cret@host").find("cret"), std::string::npos);
}

TEST(ParseUri, BadPercentEscapesNameThePart) {
  EXPECT_CONTAINS(parse_error("redis://us%zzer:s3cret@h"), "invalid percent-escape in the user");
  EXPECT_CONTAINS(parse_error("redis://u:s3cret%4@h"), "invalid percent-escape in the password");
  EXPECT_CONTAINS(parse_error("redis://u:s3cret%@h"), "invalid percent-escape in the password");
  EXPECT_CONTAINS(parse_error("redis://u:s3cret@h/%g1"), "invalid percent-escape in the path");
  EXPECT_CONTAINS(parse_error("redis://u:s3cret@h/0?a=%2"), "invalid percent-escape in the query");
  EXPECT_CONTAINS(parse_error("redis://u:s3cret@h/0?%=1"), "invalid percent-escape in the query");
}

TEST(ParseUri, Ports) {
  EXPECT_EQ(parse_uri("redis://h:1").port, std::uint16_t{1});
  EXPECT_EQ(parse_uri("redis://h:65535").port, std::uint16_t{65535});
  for (const char* port : {"0", "65536", "abc", "", "-1", "+1", "1x", "99999999999999999999"}) {
    EXPECT_CONTAINS(parse_error(std::string("redis://u:s3cret@h:") + port),
                    "invalid port \"" + std::string(port) + "\" (expected 1..65535)");
  }
  EXPECT_CONTAINS(parse_error("redis://[::1]:0"), "invalid port \"0\"");
}

TEST(ParseUri, QueryKeys) {
  EXPECT_CONTAINS(parse_error("redis://h?a=1&a=2"), "query option \"a\" is given twice");
  EXPECT_CONTAINS(parse_error("redis://h?a=1&%61=2"), "query option \"a\" is given twice");
  EXPECT_CONTAINS(parse_error("redis://h?=1"), "a query option without a name");
  EXPECT_CONTAINS(parse_error("redis://h?a"), "query option \"a\" needs a value");
  const Uri uri = parse_uri("redis://h?a=1&&b=&c=x=y");  // empty pairs are skipped
  const std::vector<std::pair<std::string, std::string>> query{{"a", "1"}, {"b", ""}, {"c", "x=y"}};
  EXPECT_EQ(uri.query, query);
}

TEST(ParseUri, SchemeHostAndFragment) {
  EXPECT_CONTAINS(parse_error("localhost:6379"), "expected scheme://");
  EXPECT_CONTAINS(parse_error("1redis://h"), "expected scheme://");
  EXPECT_CONTAINS(parse_error("://h"), "expected scheme://");
  EXPECT_EQ(parse_uri("pulsar+ssl://h:6651").scheme, "pulsar+ssl");
  EXPECT_CONTAINS(parse_error("redis://ho st"), "invalid character in host \"ho st\"");
  EXPECT_CONTAINS(parse_error("redis://h/0#frag"), "a fragment ('#') is not allowed");
}

TEST(ParseUri, NoErrorTextContainsThePassword) {
  for (const char* url : {
           "redis://u:s3cret@h:0",
           "redis://u:s3cret@h:99999",
           "redis://u:s3cret@[::1",
           "redis://u:s3cret@[x]",
           "redis://u:s3cret@::1",
           "redis://u:s3cret@h?a=1&a=1",
           "redis://u:s3cret@h?=1",
           "redis://u:s3cret@h/%zz",
           "redis://u:s3cret%zz@h",
           "redis://u:s3cret/@h",
           "redis://u:s3cret?@h",
           "redis://u:s3cret#@h",
           "redis://u:s3cret@h/#",
           "redis://u:s3cret@h/0?a",
           "redis://u:s3cret@bad host",
           "bad scheme://u:s3cret@h",
           "u:s3cret@h:1",
           "u:s3cret@h://x",
       }) {
    EXPECT_FALSE(parse_error(url).empty()) << url;
  }
}

TEST(PercentEncode, KeepsUnreservedEscapesTheRestAndRoundTrips) {
  EXPECT_EQ(percent_encode("aZ09-._~"), "aZ09-._~");
  EXPECT_EQ(percent_encode("p@ss:w/rd %\xff"), "p%40ss%3Aw%2Frd%20%25%FF");
  EXPECT_EQ(percent_encode("/tmp/ca file.pem", "/"), "/tmp/ca%20file.pem");
  const std::string every_byte = [] {
    std::string s;
    for (int b = 0; b < 256; ++b)
      s.push_back(static_cast<char>(b));
    return s;
  }();
  EXPECT_EQ(percent_decode(percent_encode(every_byte)), every_byte);
}

TEST(PercentDecode, EscapesAndPlus) {
  EXPECT_EQ(percent_decode("a%41%7a%7A"), "aAzz");
  EXPECT_EQ(percent_decode("a+b"), "a+b");
  EXPECT_EQ(percent_decode("a+b", true), "a b");
  EXPECT_EQ(percent_decode("%2B", true), "+");
  EXPECT_EQ(percent_decode("%00").size(), 1U);
  for (const char* bad : {"%", "%4", "a%4", "%G0", "%0G", "%%41"}) {
    EXPECT_CONTAINS(error_of([bad] { percent_decode(bad); }), "invalid percent-escape");
  }
  EXPECT_EQ(error_of([] { percent_decode("s3cret%zz"); }), "invalid percent-escape");
}

TEST(RedactUrl, HidesOnlyThePassword) {
  EXPECT_EQ(redact_url("redis://alice:s3cret@h:1/0?a=b"), "redis://alice:***@h:1/0?a=b");
  EXPECT_EQ(redact_url("redis://:s3cret@h"), "redis://:***@h");
  EXPECT_EQ(redact_url("amqp://guest@h/"), "amqp://guest@h/");
  EXPECT_EQ(redact_url("redis://h:1/0"), "redis://h:1/0");
  EXPECT_EQ(redact_url("redis://u:s3cret@x@h"), "redis://u:***@h");
  EXPECT_EQ(redact_url("redis://u:p%zz@h:abc"), "redis://u:***@h:abc");  // need not parse
}

TEST(RedactUrl, HidesAPasswordThatEndsTheAuthorityEarly) {
  EXPECT_EQ(redact_url("redis://u:s3cret/x@h/0"), "redis://***@h/0");
  EXPECT_EQ(redact_url("redis://u:s3?cret@h/0"), "redis://***@h/0");
  EXPECT_EQ(redact_url("redis://u:s3#cret@h"), "redis://***@h");
}

TEST(RedactUrl, ShowsNothingWithoutAScheme) {
  for (const char* url : {"u:s3cret@h:1", "u:s3cret@h://x", "", "://u:s3cret@h", "s3cret"}) {
    EXPECT_EQ(redact_url(url), "\"<unparsable URL>\"") << url;
  }
}

TEST(UrlScheme, LowerCasedOrNothing) {
  EXPECT_EQ(babelqueue::spi::url_scheme("ReDiS://x"), "redis");
  EXPECT_EQ(babelqueue::spi::url_scheme("pulsar+ssl://"), "pulsar+ssl");
  EXPECT_EQ(babelqueue::spi::url_scheme("kafka://h1:9092,h2:9092"), "kafka");
  for (const char* url : {"", "redis", "redis:/x", "://x", "1x://", "a b://", "u:p@h://x"}) {
    EXPECT_FALSE(babelqueue::spi::url_scheme(url).has_value()) << url;
  }
}

Uri with_query(std::string_view query) {
  return parse_uri("test://u:s3cret@h/?" + std::string(query));
}

TEST(QueryOptions, TakeAndFinish) {
  const Uri uri = with_query("a=1&b=two");
  QueryOptions options(uri, uri.redacted());
  EXPECT_EQ(options.take("b"), "two");
  EXPECT_FALSE(options.take("missing").has_value());
  const std::string error = error_of([&] { options.finish(); });
  EXPECT_CONTAINS(error, "unknown option \"a\" in test://u:***@h/?a=1&b=two (known: b, missing)");
  EXPECT_EQ(options.take_int("a", 0, 9), 1);
  options.finish();
}

TEST(QueryOptions, FinishWithNothingTaken) {
  const Uri uri = with_query("x=1");
  const QueryOptions options(uri, "memory://");
  EXPECT_EQ(error_of([&] { options.finish(); }),
            "unknown option \"x\" in memory:// (it takes no options)");
  const Uri none = parse_uri("memory://");
  QueryOptions{none, "memory://"}.finish();
}

TEST(QueryOptions, EmptyValue) {
  const Uri uri = with_query("a=");
  QueryOptions options(uri, "ctx");
  EXPECT_EQ(error_of([&] { options.take("a"); }), "option \"a\" in ctx has an empty value");
}

TEST(QueryOptions, TakeInt) {
  const Uri uri =
      with_query("lo=-5&hi=10&big=11&neg=-6&x=1x&f=1.5&plus=%2B1&huge=99999999999999999999");
  QueryOptions options(uri, "ctx");
  EXPECT_EQ(options.take_int("lo", -5, 10), -5);
  EXPECT_EQ(options.take_int("hi", -5, 10), 10);
  EXPECT_FALSE(options.take_int("none", 0, 1).has_value());
  for (const char* key : {"big", "neg", "x", "f", "plus", "huge"}) {
    EXPECT_CONTAINS(error_of([&] { options.take_int(key, -5, 10); }),
                    "option \"" + std::string(key) + "\" in ctx must be an integer in -5..10, got");
  }
}

TEST(QueryOptions, TakeBool) {
  const Uri uri = with_query("a=TRUE&b=0&c=yes&d=Off&e=maybe");
  QueryOptions options(uri, "ctx");
  EXPECT_EQ(options.take_bool("a"), true);
  EXPECT_EQ(options.take_bool("b"), false);
  EXPECT_EQ(options.take_bool("c"), true);
  EXPECT_EQ(options.take_bool("d"), false);
  EXPECT_EQ(error_of([&] { options.take_bool("e"); }),
            "option \"e\" in ctx must be true or false, got \"maybe\"");
}

TEST(QueryOptions, TakeSeconds) {
  const Uri uri = with_query("a=2&b=0.5&c=0.0001&d=0&e=1.250&f=0.000");
  QueryOptions options(uri, "ctx");
  EXPECT_EQ(options.take_seconds("a"), milliseconds(2000));
  EXPECT_EQ(options.take_seconds("b"), milliseconds(500));
  EXPECT_EQ(options.take_seconds("c"), milliseconds(1));  // rounded up, never 0
  EXPECT_EQ(options.take_seconds("d"), milliseconds(0));
  EXPECT_EQ(options.take_seconds("e"), milliseconds(1250));
  EXPECT_EQ(options.take_seconds("f"), milliseconds(0));
  for (const char* bad : {"1.", ".5", "-1", "1e3", "1,5", "1234567890", "x"}) {
    const Uri one = with_query(std::string("s=") + bad);
    QueryOptions o(one, "ctx");
    EXPECT_EQ(error_of([&] { o.take_seconds("s"); }),
              "option \"s\" in ctx must be a number of seconds (e.g. 2 or 0.5), got \"" +
                  std::string(bad) + "\"")
        << bad;
  }
}

TEST(QueryOptions, TakeChoice) {
  const Uri uri = with_query("layout=laravel&mode=Default");
  QueryOptions options(uri, "ctx");
  EXPECT_EQ(options.take_choice("layout", {"default", "laravel"}), "laravel");
  EXPECT_EQ(error_of([&] {
              options.take_choice("mode", {"default", "laravel"});
            }),
            "option \"mode\" in ctx must be one of default, laravel, got \"Default\"");
  options.finish();
}

}  // namespace
