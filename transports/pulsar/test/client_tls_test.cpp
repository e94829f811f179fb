// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The private Pulsar client (src/client.hpp, issue 13) over TLS (pulsar+ssl://) against the real
// broker: a standalone of its own with a TLS listener whose certificate a throwaway CA made by
// the openssl CLI signed for IP 127.0.0.1; the chain and the peer name are verified, a name the
// certificate does not carry and a CA not given are refused with a clear ConfigError. Token
// authentication against a broker with AuthenticationProviderToken: an HS256 JWT minted here (the
// openssl CLI's HMAC) is accepted, a forged one refused without being printed. The transport
// (PulsarTransport) through the same brokers: pulsar+ssl:// with `cafile` and `verify`, the token
// of the URL's user info.

#include <babelqueue/codec.hpp>
#include <babelqueue/pulsar/transport.hpp>
#include <babelqueue/testing/broker_process.hpp>
#include <babelqueue/testing/command.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "client.hpp"
#include "pulsar_server.hpp"

namespace babelqueue::pulsar::test {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

constexpr milliseconds kWait{30'000};

// Why the openssl CLI cannot make the certificates here, or nullopt.
std::optional<std::string> openssl_unavailable() {
  if (::access(BABELQUEUE_OPENSSL, X_OK) != 0) {
    return std::string("the openssl CLI was not found (Debian: apt-get install openssl)");
  }
  return std::nullopt;
}

void openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv{BABELQUEUE_OPENSSL};
  argv.insert(argv.end(), args.begin(), args.end());
  const babelqueue::testing::CommandResult result = babelqueue::testing::run_command(argv);
  if (result.exit_code != 0) {
    throw std::runtime_error("openssl " + args.front() + " failed: " + result.output);
  }
}

// A directory of its own with a throwaway CA (ca.pem) and a broker certificate it signed for
// IP 127.0.0.1 only (server.pem, server.key: PKCS#8, as the broker reads it); removed at the end.
class Certificates {
 public:
  Certificates() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "babelqueue-pulsar-tls-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern);
    dir_ = pattern;
    const std::string subject_ca = "/CN=babelqueue test CA";
    openssl({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("ca.key"), "-out",
             path("ca.pem"), "-days", "2", "-subj", subject_ca});
    openssl({"req", "-newkey", "rsa:2048", "-nodes", "-keyout", path("server.key"), "-out",
             path("server.csr"), "-subj", "/CN=127.0.0.1"});
    std::ofstream(path("server.ext")) << "subjectAltName=IP:127.0.0.1\n";
    openssl({"x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey",
             path("ca.key"), "-CAcreateserial", "-out", path("server.pem"), "-days", "2",
             "-extfile", path("server.ext")});
  }
  ~Certificates() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  Certificates(const Certificates&) = delete;
  Certificates& operator=(const Certificates&) = delete;

  [[nodiscard]] std::string path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

// `text` in base64, by the openssl CLI.
std::string base64(const std::string& text) {
  const babelqueue::testing::CommandResult result =
      babelqueue::testing::run_command({BABELQUEUE_OPENSSL, "base64", "-A"}, {}, text);
  if (result.exit_code != 0) throw std::runtime_error("openssl base64 failed: " + result.output);
  std::string out = result.output;
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out;
}

// `text` in base64url without padding (JWT).
std::string base64url(const std::string& text) {
  std::string out;
  for (const char c : base64(text)) {
    if (c == '+') {
      out += '-';
    } else if (c == '/') {
      out += '_';
    } else if (c != '=') {
      out += c;
    }
  }
  return out;
}

// An HS256 JWT for `subject` signed with `key`.
std::string hs256_token(const std::string& subject, const std::string& key) {
  const std::string signed_part = base64url(R"({"alg":"HS256","typ":"JWT"})") + "." +
                                  base64url(R"({"sub":")" + subject + "\"}");
  const babelqueue::testing::CommandResult mac = babelqueue::testing::run_command(
      {BABELQUEUE_OPENSSL, "dgst", "-sha256", "-mac", "HMAC", "-macopt", "key:" + key, "-binary"},
      {}, signed_part);
  if (mac.exit_code != 0) throw std::runtime_error("openssl dgst failed: " + mac.output);
  return signed_part + "." + base64url(mac.output);
}

ClientOptions tls_options(const std::string& host, int port, const std::string& ca) {
  ClientOptions options;
  options.service_url = "pulsar+ssl://" + host + ":" + std::to_string(port);
  options.tls_trust_certs_file = ca;
  options.operation_timeout = kWait;
  return options;
}

// Through a PulsarTransport on `url`: a message published to `queue` is popped and acked, and the
// ack confirmed by the broker (flush: ACK_RESPONSE); then the queue holds nothing more.
void transport_round_trip(const std::string& url, const std::string& queue) {
  PulsarTransport transport(url);
  const std::string body = encode(make("urn:babel:orders:created"));
  const Status published = transport.publish(queue, body);
  ASSERT_TRUE(published.ok()) << published.error().what();
  auto popped = transport.pop(queue, kWait);
  ASSERT_TRUE(popped.has_value()) << popped.error().what();
  ASSERT_TRUE(popped->has_value()) << "nothing popped from " << queue;
  EXPECT_EQ((*popped)->body, body);
  const Status acked = transport.ack(**popped);
  ASSERT_TRUE(acked.ok()) << acked.error().what();
  const Status flushed = transport.flush();
  EXPECT_TRUE(flushed.ok()) << flushed.error().what();
  auto rest = transport.pop(queue, milliseconds(500));
  ASSERT_TRUE(rest.has_value()) << rest.error().what();
  EXPECT_FALSE(rest->has_value());
}

// The ConfigError a lookup through `options` fails with (the TLS handshake's), or a failure.
std::string refusal(const ClientOptions& options) {
  Client client(options);
  try {
    static_cast<void>(client.lookup("persistent://public/default/tls-refused"));
  } catch (const ConfigError& e) {
    EXPECT_FALSE(e.is_transient());
    return e.what();
  }
  ADD_FAILURE() << "the TLS connection to " << options.service_url << " was not refused";
  return {};
}

TEST(PulsarClientTls, VerifiesTheBrokersCertificateAndName) {
  BABELQUEUE_REQUIRE_BROKER(openssl_unavailable());
  BABELQUEUE_REQUIRE_PULSAR();
  const Certificates certificates;
  const int tls_port = babelqueue::testing::free_loopback_port();
  PulsarServer::Config config;
  config.extra_properties = {
      "brokerServicePortTls=" + std::to_string(tls_port),
      "tlsCertificateFilePath=" + certificates.path("server.pem"),
      "tlsKeyFilePath=" + certificates.path("server.key"),
      "tlsTrustCertsFilePath=" + certificates.path("ca.pem"),
  };
  const PulsarServer server(config);
  const std::string ca = certificates.path("ca.pem");

  // Verified chain and name: the lookup names the broker's pulsar+ssl:// URL, and a message
  // goes through.
  {
    Client client(tls_options("127.0.0.1", tls_port, ca));
    const std::string topic = "persistent://public/default/tls-round-trip";
    EXPECT_EQ(client.lookup(topic).broker_url,
              "pulsar+ssl://127.0.0.1:" + std::to_string(tls_port));
    const auto consumer = client.subscribe(topic, {});
    client.create_producer(topic)->send({"over TLS", {{"k", "v"}}});
    const std::optional<Received> message = consumer->receive(kWait);
    ASSERT_TRUE(message.has_value());
    EXPECT_EQ(message->payload, "over TLS");
    EXPECT_EQ(message->properties.at("k"), "v");
    consumer->ack(*message);
  }

  // The transport: pulsar+ssl:// with the CA file, then with the name check off (verify=no) on a
  // name the certificate does not carry; without the CA, refused as the client is.
  const std::string tls_url = "pulsar+ssl://127.0.0.1:" + std::to_string(tls_port);
  transport_round_trip(tls_url + "?cafile=" + ca, "tls-transport");
  transport_round_trip(
      "pulsar+ssl://localhost:" + std::to_string(tls_port) + "?verify=no&cafile=" + ca,
      "tls-transport-no-name-check");
  {
    PulsarTransport transport(tls_url + "?timeout=" + std::to_string(kWait.count()));
    const Status refused = transport.publish("tls-transport-refused", "{}");
    ASSERT_FALSE(refused.ok());
    EXPECT_TRUE(refused.is(ErrorCode::Config)) << refused.error().what();
    EXPECT_THAT(refused.error().what(), HasSubstr("certificate verify failed"));
  }

  // "localhost" is a name the certificate does not carry (it names IP 127.0.0.1).
  const std::string wrong_name = refusal(tls_options("localhost", tls_port, ca));
  EXPECT_THAT(wrong_name, HasSubstr("TLS handshake with localhost:" + std::to_string(tls_port)));
  EXPECT_THAT(wrong_name, HasSubstr("the certificate does not name localhost"));
  // ... accepted with the peer-name check off (the chain is still verified).
  {
    ClientOptions options = tls_options("localhost", tls_port, ca);
    options.tls_verify_hostname = false;
    EXPECT_EQ(Client(options).lookup("persistent://public/default/tls-name-off").redirects, 0);
  }

  // A CA that did not sign it (the system's): the chain is refused.
  const std::string unknown_ca = refusal(tls_options("127.0.0.1", tls_port, ""));
  EXPECT_THAT(unknown_ca, HasSubstr("certificate verify failed"));
  EXPECT_THAT(unknown_ca, HasSubstr("unable to get local issuer certificate"));
  // ... accepted when insecure (tests only).
  {
    ClientOptions options = tls_options("localhost", tls_port, "");
    options.tls_allow_insecure = true;
    EXPECT_EQ(Client(options).lookup("persistent://public/default/tls-insecure").redirects, 0);
  }

  // A TLS client on the plain port: the broker closes the connection in the handshake.
  try {
    static_cast<void>(Client(tls_options("127.0.0.1", server.port(), ca))
                          .lookup("persistent://public/default/tls-plain"));
    ADD_FAILURE() << "a TLS handshake with the plain port succeeded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("127.0.0.1:" + std::to_string(server.port())));
    EXPECT_THAT(e.what(), HasSubstr("TLS handshake"));
  }
}

TEST(PulsarClientToken, TheBrokerAcceptsItsTokenAndRefusesAForgedOne) {
  BABELQUEUE_REQUIRE_BROKER(openssl_unavailable());
  BABELQUEUE_REQUIRE_PULSAR();
  const std::string key = "babelqueue-pulsar-test-hs256-secret";  // >= 256 bits for HS256
  PulsarServer::Config config;
  // An anonymous role lets the fixture's readiness probe (no token) in; a token given is checked.
  config.extra_properties = {
      "authenticationEnabled=true",
      "authenticationProviders=org.apache.pulsar.broker.authentication."
      "AuthenticationProviderToken",
      "tokenSecretKey=data:;base64," + base64(key),
      "anonymousUserRole=anonymous",
  };
  const PulsarServer server(config);
  ClientOptions options;
  options.service_url = server.service_url();
  options.operation_timeout = kWait;

  options.token = hs256_token("babelqueue", key);
  {
    Client client(options);
    const std::string topic = "persistent://public/default/token-round-trip";
    const auto consumer = client.subscribe(topic, {});
    client.create_producer(topic)->send({"authenticated"});
    const std::optional<Received> message = consumer->receive(kWait);
    ASSERT_TRUE(message.has_value());
    EXPECT_EQ(message->payload, "authenticated");
  }

  // The transport with the token of its URL's user info.
  const std::string authority = "127.0.0.1:" + std::to_string(server.port());
  transport_round_trip("pulsar://:" + options.token + "@" + authority, "token-transport");

  options.token = hs256_token("babelqueue", "another-key-of-at-least-thirty-two-bytes");
  {
    PulsarTransport transport("pulsar://token:" + options.token + "@" + authority);
    const Status refused = transport.publish("token-transport-refused", "{}");
    ASSERT_FALSE(refused.ok());
    EXPECT_TRUE(refused.is(ErrorCode::Config)) << refused.error().what();
    EXPECT_THAT(refused.error().what(), HasSubstr("AuthenticationError"));
    EXPECT_THAT(refused.error().what(), ::testing::Not(HasSubstr(options.token)));
    const auto popped = transport.pop("token-transport-refused", milliseconds(2'000));
    ASSERT_FALSE(popped.has_value()) << "popped with a forged token";
    EXPECT_EQ(popped.error().code(), ErrorCode::Config) << popped.error().what();
    EXPECT_FALSE(popped.error().is_transient());
    EXPECT_THAT(popped.error().what(), ::testing::Not(HasSubstr(options.token)));
  }
  Client forged(options);
  try {
    static_cast<void>(forged.lookup("persistent://public/default/token-refused"));
    ADD_FAILURE() << "a token signed with another key was accepted";
  } catch (const ConfigError& e) {
    EXPECT_FALSE(e.is_transient());
    EXPECT_THAT(e.what(), HasSubstr("CONNECT to 127.0.0.1:" + std::to_string(server.port())));
    EXPECT_THAT(e.what(), HasSubstr("AuthenticationError"));
    EXPECT_THAT(e.what(), ::testing::Not(HasSubstr(options.token)));
  }
}

}  // namespace
}  // namespace babelqueue::pulsar::test
