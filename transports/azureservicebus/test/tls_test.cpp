// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// sb:// over TLS (ASB-1, ASB-3) on a scripted peer of its own whose listener speaks TLS with a
// certificate for localhost / 127.0.0.1 signed by a throwaway CA (the testing kit's): with the
// CA as trust file and the certificate's name (peer_name=, or the host itself) a message goes
// round with CBS; another CA or a name the certificate does not carry is refused before anything
// is sent, with an error naming the TLS failure and never the key.

#include <babelqueue/azureservicebus/transport.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/testing/contract.hpp>
#include <babelqueue/testing/fault_kit.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "servicebus_peer.hpp"

namespace babelqueue::azureservicebus::test {
namespace {

using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;

constexpr std::string_view kKey = "tls-secret-key-7";  // the peer's shared access key (name k)

class ServiceBusTls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (ServiceBusPeer::unavailable()) return;
    peer_ = std::make_unique<ServiceBusPeer>(std::vector<std::string>{"--key", std::string(kKey)},
                                             /*tls=*/true);
  }
  static void TearDownTestSuite() { peer_.reset(); }
  void SetUp() override {
    BABELQUEUE_REQUIRE_SERVICEBUS_PEER();
    ASSERT_NE(peer_, nullptr);
  }

  // sb://k:v@HOST:PORT?cafile=CA[&peer_name=NAME][&EXTRA] (TLS on: the default).
  static std::string tls_url(const std::string& host, const std::string& ca,
                             const std::string& peer_name, const std::string& extra = {}) {
    std::string url = "sb://k:" + std::string(kKey) + "@" + host + ":" +
                      std::to_string(peer_->port()) + "?cafile=" + ca;
    if (!peer_name.empty()) url += "&peer_name=" + peer_name;
    if (!extra.empty()) url += "&" + extra;
    return url;
  }

  // Publishes, pops and completes one message over `url`; the peer saw it go.
  static void round_trip(const std::string& url) {
    const std::string queue = babelqueue::testing::unique_queue_name();
    ServiceBusTransport t(url);
    EXPECT_TRUE(t.options().tls);
    const std::string body =
        encode(make("urn:babel:orders:created", Json::object({{"n", 1}}), {.queue = queue}));
    ASSERT_TRUE(t.publish(queue, body).ok());
    const std::optional<ReceivedMessage> got = pop_message(t, queue, kWithin);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->body, body);
    EXPECT_TRUE(t.ack(*got).ok());
    // The completion reaches the peer after ack() returns: wait for it to leave both states.
    babelqueue::testing::eventually(
        [&] { return peer_->count(queue, "active") == 0 && peer_->count(queue, "locked") == 0; },
        kWithin);
    EXPECT_EQ(peer_->count(queue, "active"), 0);
    EXPECT_EQ(peer_->count(queue, "locked"), 0);
  }

  // A publish and a receive that must fail (a refused handshake): their errors name the TLS
  // failure, not the key.
  static void refused(const std::string& url) {
    const std::string queue = babelqueue::testing::unique_queue_name();
    ServiceBusTransport t(url + "&timeout=1500");
    const Status st = t.publish(queue, "{}");
    ASSERT_FALSE(st.ok()) << "published over an unverified TLS connection";
    const std::string what = st.error().what();
    // The layer reports it when no outcome came within `timeout`, with the connection's last
    // failure: the handshake's.
    EXPECT_NE(what.find("SSL Failure"), std::string::npos) << what;
    EXPECT_NE(what.find("certificate verify failed"), std::string::npos) << what;
    EXPECT_EQ(what.find(kKey), std::string::npos) << what;
    EXPECT_EQ(peer_->count(queue, "active"), 0);
    // A receive is told that the connection was refused for good: a ConfigError, not an empty
    // wait, so that `consume` stops (D-3).
    ServiceBusTransport receiver(url + "&timeout=1500");
    const auto pop = receiver.pop(queue, kWithin);
    ASSERT_FALSE(pop.has_value()) << "received over an unverified TLS connection";
    EXPECT_EQ(pop.error().code(), ErrorCode::Config) << pop.error().what();
    EXPECT_FALSE(pop.error().is_transient());
    const std::string why = pop.error().what();
    EXPECT_NE(why.find("certificate verify failed"), std::string::npos) << why;
    EXPECT_EQ(why.find(kKey), std::string::npos) << why;
  }

  static std::unique_ptr<ServiceBusPeer> peer_;
};

std::unique_ptr<ServiceBusPeer> ServiceBusTls::peer_;

TEST_F(ServiceBusTls, ASB1_TheTestCaAndThePeerNameCarryAMessageWithCbs) {
  round_trip(tls_url("127.0.0.1", peer_->ca_file(), "localhost"));
}

// Without peer_name the name checked is the host's.
TEST_F(ServiceBusTls, ASB1_AHostTheCertificateNamesNeedsNoPeerName) {
  round_trip(tls_url("localhost", peer_->ca_file(), ""));
}

TEST_F(ServiceBusTls, ASB1_SaslPlainOverTlsCarriesAMessage) {
  round_trip(tls_url("127.0.0.1", peer_->ca_file(), "localhost", "auth=sasl_plain"));
}

TEST_F(ServiceBusTls, ASB1_AnotherCaIsRefused) {
  refused(tls_url("127.0.0.1", peer_->wrong_ca_file(), "localhost"));
}

TEST_F(ServiceBusTls, ASB1_APeerNameTheCertificateDoesNotCarryIsRefused) {
  refused(tls_url("127.0.0.1", peer_->ca_file(), "wrong.example"));
}

// verify=0 skips the name check, never the chain.
TEST_F(ServiceBusTls, ASB1_VerifyOffSkipsOnlyTheNameCheck) {
  round_trip(tls_url("127.0.0.1", peer_->ca_file(), "wrong.example", "verify=0"));
  refused(tls_url("127.0.0.1", peer_->wrong_ca_file(), "localhost", "verify=0"));
}

// A plain-TCP client on the TLS listener gets no AMQP connection: transient, nothing sent.
TEST_F(ServiceBusTls, ASB1_PlainTcpOnTheTlsListenerFails) {
  const std::string queue = babelqueue::testing::unique_queue_name();
  ServiceBusTransport t("sb://k:" + std::string(kKey) +
                        "@127.0.0.1:" + std::to_string(peer_->port()) + "?tls=0&timeout=1500");
  EXPECT_FALSE(t.publish(queue, "{}").ok());
  EXPECT_EQ(peer_->count(queue, "active"), 0);
}

}  // namespace
}  // namespace babelqueue::azureservicebus::test
