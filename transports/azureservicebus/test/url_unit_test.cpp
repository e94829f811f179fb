// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Connection strings, sb:// URLs (ASB-2) and SAS tokens (ASB-3) without a peer: every error
// names the problem and never the key or a signature.

#include <babelqueue/azureservicebus/transport.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace babelqueue::azureservicebus {
namespace {

constexpr std::string_view kKey = "c2VjcmV0LWtleS1mb3ItdGVzdHM=";

// The ConfigError text of `f`, or a test failure when it does not throw one.
template <class F>
std::string config_error(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError";
  return {};
}

// ASB-3's known answer (spec/05 §3: Microsoft's documented algorithm).
TEST(SasToken, MatchesTheSpecsKnownAnswer) {
  const std::string token = sas_token("sb://contoso.servicebus.windows.net/orders",
                                      "RootManageSharedAccessKey", kKey, 1796040000);
  EXPECT_EQ(token,
            "SharedAccessSignature sr=sb%3A%2F%2Fcontoso.servicebus.windows.net%2Forders"
            "&sig=zzOPGB3BjKUXrNyk0XrVZ8Zf38Ix7P7WFIpv%2BQpvyJ0%3D&se=1796040000"
            "&skn=RootManageSharedAccessKey");
}

TEST(SasToken, DependsOnKeyExpiryAndResource) {
  const std::string base = sas_token("sb://ns/orders", "k", "v", 100);
  EXPECT_NE(base, sas_token("sb://ns/orders", "k", "w", 100));
  EXPECT_NE(base, sas_token("sb://ns/orders", "k", "v", 101));
  EXPECT_NE(base, sas_token("sb://ns/other", "k", "v", 100));
  EXPECT_EQ(base.find("&se=100&skn=k"), base.size() - 13);
}

TEST(ConnectionString, KeyAndEntityPath) {
  const Options o = parse_connection_string(
      "Endpoint=sb://contoso.servicebus.windows.net/;SharedAccessKeyName=Root;"
      "SharedAccessKey=" +
      std::string(kKey) + ";EntityPath=orders");
  EXPECT_EQ(o.host, "contoso.servicebus.windows.net");
  EXPECT_EQ(o.port, 5671);
  EXPECT_TRUE(o.tls);
  EXPECT_EQ(o.key_name, "Root");
  EXPECT_EQ(o.key, kKey) << "a value keeps its '=' characters";
  EXPECT_EQ(o.entity, "orders");
}

TEST(ConnectionString, KeysAreCaseInsensitiveAndSpacesTrimmed) {
  const Options o = parse_connection_string(
      " endpoint = sb://ns.example/ ; sharedaccesskeyname=k ; SHAREDACCESSKEY=v ;");
  EXPECT_EQ(o.host, "ns.example");
  EXPECT_EQ(o.key_name, "k");
  EXPECT_EQ(o.key, "v");
  EXPECT_TRUE(o.entity.empty());
}

TEST(ConnectionString, SharedAccessSignature) {
  const std::string sas = sas_token("sb://ns.example/orders", "k", "v", 1796040000);
  const Options o =
      parse_connection_string("Endpoint=sb://ns.example/;SharedAccessSignature=" + sas);
  EXPECT_EQ(o.shared_access_signature, sas);
  EXPECT_TRUE(o.key.empty());
}

TEST(ConnectionString, TheDevelopmentEmulatorIsPlainTcpOnLoopbackOnly) {
  const Options o = parse_connection_string(
      "Endpoint=sb://127.0.0.1:41237/;SharedAccessKeyName=k;SharedAccessKey=v;"
      "UseDevelopmentEmulator=true");
  EXPECT_FALSE(o.tls);
  EXPECT_EQ(o.port, 41237);
  const std::string e = config_error([] {
    parse_connection_string(
        "Endpoint=sb://ns.example/;SharedAccessKeyName=k;SharedAccessKey=secret-1;"
        "UseDevelopmentEmulator=true");
  });
  EXPECT_NE(e.find("plain TCP"), std::string::npos) << e;
  EXPECT_EQ(e.find("secret-1"), std::string::npos) << e;
}

TEST(ConnectionString, ErrorsNameTheProblemNeverTheSecret) {
  const std::string secret = "s3cr3t+key/==";
  struct Case {
    std::string text;
    std::string expect;
  };
  const Case cases[] = {
      {"SharedAccessKeyName=k;SharedAccessKey=" + secret, "no Endpoint"},
      {"Endpoint=sb://ns/;SharedAccessKey=" + secret, "go together"},
      {"Endpoint=sb://ns/;SharedAccessKeyName=k;SharedAccessKey=" + secret +
           ";SharedAccessSignature=SharedAccessSignature sr=x&sig=" + secret,
       "both"},
      {"Endpoint=http://ns/;SharedAccessKeyName=k;SharedAccessKey=" + secret, "not sb://"},
      {"Endpoint=sb://ns/;Bogus=1;SharedAccessKey=" + secret, "unknown key \"Bogus\""},
      {"Endpoint=sb://ns/;" + secret, "an unknown key"},
      {"Endpoint=sb://ns/;SharedAccessKeyName=k;novalue" + secret.substr(0, 6), "name=value"},
  };
  for (const Case& c : cases) {
    const std::string e = config_error([&] { parse_connection_string(c.text); });
    EXPECT_TRUE(e.starts_with("azureservicebus connection string: ")) << e;
    EXPECT_NE(e.find(c.expect), std::string::npos) << e;
    EXPECT_EQ(e.find(secret), std::string::npos) << e;
  }
}

TEST(Url, KeyInTheUserInfoEntityInThePath) {
  const Options o = parse_url("sb://Root:c2Vj%2BcmV0%3D@ns.example/orders?prefetch=5&timeout=2000");
  EXPECT_EQ(o.host, "ns.example");
  EXPECT_EQ(o.port, 5671);
  EXPECT_TRUE(o.tls);
  EXPECT_EQ(o.key_name, "Root");
  EXPECT_EQ(o.key, "c2Vj+cmV0=") << "percent-decoded";
  EXPECT_EQ(o.entity, "orders");
  EXPECT_EQ(o.prefetch, 5U);
  EXPECT_EQ(o.timeout.count(), 2000);
}

TEST(Url, EveryOption) {
  const Options o = parse_url(
      "sb://k:v@127.0.0.1:5999?tls=0&verify=0&cafile=/ca.pem&peer_name=x&auth=sasl_plain&"
      "token_lifetime=60&lock_renewal=off&max_lock_renewal=1000&max_wait=50&"
      "native_dead_letter=dead_letter");
  EXPECT_FALSE(o.tls);
  EXPECT_EQ(o.port, 5999);
  EXPECT_FALSE(o.tls_verify_peer_name);
  EXPECT_EQ(o.tls_ca_file, "/ca.pem");
  EXPECT_EQ(o.tls_peer_name, "x");
  EXPECT_EQ(o.auth, Auth::SaslPlain);
  EXPECT_EQ(o.token_lifetime.count(), 60);
  EXPECT_FALSE(o.lock_renewal);
  EXPECT_EQ(o.max_lock_renewal.count(), 1000);
  EXPECT_EQ(o.max_wait.count(), 50);
  EXPECT_EQ(o.native_dead_letter, NativeDeadLetter::DeadLetter);
  EXPECT_EQ(parse_url("sb://k:v@127.0.0.1?tls=false").port, 5672) << "plain TCP's default port";
}

TEST(Url, ErrorsNameTheProblemNeverTheKey) {
  const std::string cases[][2] = {
      {"amqp://k:s3cr3t@ns/", "unsupported scheme"},
      {"sb://k:s3cr3t@ns/?bogus=1", "unknown option \"bogus\""},
      {"sb://k:s3cr3t@ns/?prefetch=100001", "prefetch"},
      {"sb://k:s3cr3t@ns/?tls=0", "plain TCP"},
      {"sb://k:s3cr3t@ns/?native_dead_letter=drop", "native_dead_letter"},
      {"sb://k:s3cr3t@ns/?auth=magic", "auth"},
      {"sb://:s3cr3t@ns/", "KeyName:Key"},
  };
  for (const auto& [url, expect] : cases) {
    const std::string e = config_error([&] { parse_url(url); });
    EXPECT_TRUE(e.starts_with("azureservicebus URL: ")) << e;
    EXPECT_NE(e.find(expect), std::string::npos) << e;
    EXPECT_EQ(e.find("s3cr3t"), std::string::npos) << e;
  }
}

TEST(Url, NoPrefetchByDefault) {
  EXPECT_EQ(Options{}.prefetch, 0U) << "ASB-5: one credit per waiting pop";
  EXPECT_EQ(parse_url("sb://k:v@ns.example/orders?prefetch=7").prefetch, 7U);
  EXPECT_EQ(parse_url("sb://k:v@ns.example/orders?prefetch=0").prefetch, 0U);
}

TEST(Url, NoHostReadsTheEnvironmentsConnectionString) {
  ::setenv("AZURE_SERVICEBUS_CONNECTION_STRING",
           "Endpoint=sb://env.example/;SharedAccessKeyName=k;SharedAccessKey=v", 1);
  const Options o = parse_url("sb:///orders?prefetch=3");
  EXPECT_EQ(o.host, "env.example");
  EXPECT_EQ(o.key, "v");
  EXPECT_EQ(o.entity, "orders");
  EXPECT_EQ(o.prefetch, 3U);
  ::unsetenv("AZURE_SERVICEBUS_CONNECTION_STRING");
  const std::string e = config_error([] { parse_url("sb:///orders"); });
  EXPECT_NE(e.find("AZURE_SERVICEBUS_CONNECTION_STRING is not set"), std::string::npos) << e;
}

TEST(Transport, ConstructionNeedsCredentialsAndDoesNoIo) {
  Options o;
  o.host = "ns.example";
  const std::string e = config_error([&] { ServiceBusTransport t(o); });
  EXPECT_NE(e.find("no credentials"), std::string::npos) << e;
  o.key_name = "k";
  o.key = "v";
  ServiceBusTransport t(o);  // no I/O: nothing listens on ns.example
  EXPECT_EQ(t.options().host, "ns.example");
  o.shared_access_signature = "SharedAccessSignature sr=x&sig=y";
  o.key.clear();
  const std::string no_se = config_error([&] { ServiceBusTransport u(o); });
  EXPECT_NE(no_se.find("no se="), std::string::npos) << no_se;
  EXPECT_EQ(no_se.find("sig=y"), std::string::npos) << no_se;
}

TEST(Transport, AnEntityOutsideTheEntityPathIsAConfigError) {
  ServiceBusTransport t(parse_connection_string(
      "Endpoint=sb://ns.example/;SharedAccessKeyName=k;SharedAccessKey=v;EntityPath=orders"));
  const Status s = t.publish("payments", "{}");
  EXPECT_TRUE(s.is(ErrorCode::Config)) << s.error().what();
  EXPECT_NE(std::string(s.error().what()).find("only the entity orders"), std::string::npos);
}

}  // namespace
}  // namespace babelqueue::azureservicebus
