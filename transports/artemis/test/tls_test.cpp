// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// artemis+ssl:// (ART-1) on a broker of its own with a TLS acceptor (a throwaway CA and a
// certificate for localhost / 127.0.0.1, made by the testing kit): with the CA as trust store
// and the certificate's name a message goes round; a peer name the certificate does not carry,
// or a trust store without the CA, is refused before anything is sent (naming no password).

#include <babelqueue/artemis/transport.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/testing/contract.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "shared_broker_test.hpp"

namespace babelqueue::artemis::test {
namespace {

using babelqueue::testing::kWithin;

class ArtemisTls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (amqp10::test::artemis_server_unavailable()) return;
    server_ = std::make_unique<ArtemisServer>(ArtemisServer::Config{.tls = true});
  }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    BABELQUEUE_REQUIRE_ARTEMIS();
    ASSERT_NE(server_, nullptr);
  }

  // artemis+ssl://user:password@127.0.0.1:TLSPORT?cafile=CA&peer_name=NAME&timeout=MS
  static std::string tls_url(const std::string& ca, const std::string& peer_name,
                             const std::string& extra = {}) {
    std::string url = "artemis+ssl://";
    url += ArtemisServer::kUser;
    url += ':';
    url += ArtemisServer::kPassword;
    url += "@127.0.0.1:" + std::to_string(server_->tls_port()) + "?cafile=" + ca +
           "&peer_name=" + peer_name;
    if (!extra.empty()) url += "&" + extra;
    return url;
  }

  // A publish that must fail (a refused handshake): its error, within a short timeout.
  static Error refused(const std::string& url) {
    ArtemisTransport t(url + "&timeout=3000");
    const Status st = t.publish(babelqueue::testing::unique_queue_name(), "{}");
    EXPECT_FALSE(st.ok()) << "published over an unverified TLS connection";
    if (st.ok()) return Error(ErrorCode::Usage, "published");
    // The error names why the connection failed (the handshake), not only that it timed out.
    EXPECT_NE(std::string(st.error().what()).find("certificate verify failed"), std::string::npos)
        << st.error().what();
    // A receive is told the connection was refused for good: a ConfigError, so that `consume`
    // stops (D-3), rather than an empty wait.
    ArtemisTransport receiver(url + "&timeout=3000");
    const auto pop = receiver.pop(babelqueue::testing::unique_queue_name(), kWithin);
    EXPECT_FALSE(pop.has_value()) << "received over an unverified TLS connection";
    if (!pop.has_value()) {
      EXPECT_EQ(pop.error().code(), ErrorCode::Config) << pop.error().what();
      EXPECT_NE(std::string(pop.error().what()).find("certificate verify failed"),
                std::string::npos)
          << pop.error().what();
    }
    return st.error();
  }

  static std::unique_ptr<ArtemisServer> server_;
};

std::unique_ptr<ArtemisServer> ArtemisTls::server_;

TEST_F(ArtemisTls, ART1_TheCertificatesNameAndCaCarryAMessage) {
  const std::string queue = babelqueue::testing::unique_queue_name();
  ArtemisTransport t(tls_url(server_->ca_file(), "localhost"));
  EXPECT_TRUE(t.options().tls);
  const std::string body =
      encode(make("urn:babel:orders:created", Json::object({{"n", 1}}), {.queue = queue}));
  ASSERT_TRUE(t.publish(queue, body).ok());
  auto got = t.pop(queue, kWithin);
  ASSERT_TRUE(got.has_value()) << got.error().what();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->body, body);
  EXPECT_TRUE(t.ack(**got).ok());
  EXPECT_TRUE(t.flush().ok());
  // The same broker on its plain acceptor saw the message go: nothing left.
  EXPECT_EQ(raw_of(*server_).message_count(queue), 0);
}

TEST_F(ArtemisTls, ART1_APeerNameTheCertificateDoesNotCarryIsRefused) {
  const Error e = refused(tls_url(server_->ca_file(), "wrong.example"));
  EXPECT_EQ(std::string(e.what()).find(ArtemisServer::kPassword), std::string::npos) << e.what();
}

TEST_F(ArtemisTls, ART1_AnotherCaIsRefused) {
  const Error e = refused(tls_url(server_->wrong_ca_file(), "localhost"));
  EXPECT_EQ(std::string(e.what()).find(ArtemisServer::kPassword), std::string::npos) << e.what();
}

// verify=false (tests only) skips the name check, never the chain: the wrong name passes, the
// wrong CA does not.
TEST_F(ArtemisTls, ART1_VerifyFalseSkipsOnlyTheNameCheck) {
  const std::string queue = babelqueue::testing::unique_queue_name();
  ArtemisTransport t(tls_url(server_->ca_file(), "wrong.example", "verify=false"));
  EXPECT_TRUE(t.publish(queue, "{}").ok());
  EXPECT_EQ(raw_of(*server_).message_count(queue), 1);
  (void)refused(tls_url(server_->wrong_ca_file(), "localhost", "verify=false"));
}

}  // namespace
}  // namespace babelqueue::artemis::test
