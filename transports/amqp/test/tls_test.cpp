// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// amqps:// against a private RabbitMQ node with a TLS listener (spec/04-rabbitmq.md AMQP-1):
// the fixture's self-signed CA signs a server certificate for DNS:localhost and IP:127.0.0.1.
// Verification of the chain and of the name is on by default; verify=verify_none is the
// documented insecure mode. One node serves every test of this file.

#include <babelqueue/amqp/transport.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/errors.hpp>
#include <babelqueue/testing/contract.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>

#include "rabbit_server.hpp"

namespace bq = babelqueue;
namespace am = babelqueue::amqp;
using namespace std::chrono_literals;
using am::test::RabbitServer;
using bq::testing::kWithin;
using bq::testing::unique_queue_name;

namespace {

constexpr char kUrn[] = "urn:babel:orders:created";

class AmqpTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (am::test::rabbit_server_unavailable()) return;
    RabbitServer::Config config;
    config.tls = true;
    server_ = std::make_unique<RabbitServer>(config);
  }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override { BABELQUEUE_REQUIRE_RABBITMQ(); }

  // amqps://guest:guest@HOST:TLSPORT/?cacertfile=CA plus `options` ("&k=v...").
  static std::string url(const std::string& host, const std::string& ca,
                         const std::string& options = "") {
    return "amqps://guest:guest@" + host + ":" + std::to_string(server_->tls_port()) +
           "/?cacertfile=" + ca + options;
  }
  static std::string good_ca() { return server_->ca_file(); }
  static std::string wrong_ca() { return server_->wrong_ca_file(); }

  static std::unique_ptr<RabbitServer> server_;
};

std::unique_ptr<RabbitServer> AmqpTlsTest::server_;

// Publishes one envelope and consumes it back through a transport on `url`; the error of the
// first step that failed. Bounded: a handshake that hangs fails the test instead.
bq::Status round_trip(const std::string& url) {
  auto done = std::async(std::launch::async, [url]() -> bq::Status {
    am::AmqpTransport t(url);
    const std::string queue = unique_queue_name();
    const bq::Envelope env = bq::make(kUrn);
    if (bq::Status st = t.publish(queue, bq::encode(env)); !st.ok()) return st;
    const auto got = t.pop(queue, kWithin);
    if (!got) return got.error();
    if (!got.value()) return bq::TransportError("nothing came back within 20 s", false);
    if (bq::decode(got.value()->body).meta().id != env.meta().id) {
      return bq::TransportError("another message came back", false);
    }
    if (bq::Status st = t.ack(*got.value()); !st.ok()) return st;
    return t.flush();
  });
  if (done.wait_for(2 * kWithin) != std::future_status::ready) {
    ADD_FAILURE() << "the round trip on " << url << " did not end within " << 2 * kWithin.count()
                  << " ms";
    done.wait();
  }
  return done.get();
}

void expect_fails_naming(const bq::Status& st, const std::string& needle) {
  ASSERT_FALSE(st.ok()) << "connected although it should not have";
  const std::string what = st.error().what();
  EXPECT_EQ(st.error().code(), bq::ErrorCode::Transport) << what;
  EXPECT_NE(what.find("cannot connect"), std::string::npos) << what;
  EXPECT_NE(what.find(needle), std::string::npos) << what;
}

// AMQP-1: amqps:// with the CA that signed the broker's certificate: verified, and it works.
TEST_F(AmqpTlsTest, AMQP1_VerifiedConnectionPublishesAndConsumes) {
  const bq::Status st = round_trip(url("localhost", good_ca()));
  EXPECT_TRUE(st.ok()) << st.error().what();
}

// A CA that did not sign the certificate: the handshake fails at once with an error that says
// so, rather than hanging or connecting.
TEST_F(AmqpTlsTest, AMQP1_WrongCaFailsClearly) {
  expect_fails_naming(round_trip(url("localhost", wrong_ca())), "peer cert verification failed");
}

// verify=verify_none: the insecure mode connects whoever signed the certificate.
TEST_F(AmqpTlsTest, AMQP1_VerifyNoneConnectsWithTheWrongCa) {
  const bq::Status st = round_trip(url("localhost", wrong_ca(), "&verify=verify_none"));
  EXPECT_TRUE(st.ok()) << st.error().what();
}

// Hostname verification: "127.1" reaches 127.0.0.1 (inet_aton's short form) but is a name the
// certificate does not carry, so a verified chain is not enough; verify_hostname=false accepts
// it.
TEST_F(AmqpTlsTest, AMQP1_ANameNotInTheCertificateFailsHostnameVerification) {
  expect_fails_naming(round_trip(url("127.1", good_ca())), "hostname verification failed");
  const bq::Status st = round_trip(url("127.1", good_ca(), "&verify_hostname=false"));
  EXPECT_TRUE(st.ok()) << st.error().what();
}

// rabbitmq-c 0.11 matches the host against the certificate's DNS names (or, without SANs, its
// CN) and never against IP SANs: connecting by address fails hostname verification although the
// certificate has IP:127.0.0.1. Such a client connects by a DNS name of the certificate, or with
// verify_hostname=false (the chain is still verified). Fails here, as a reminder, once the
// library learns IP SANs.
TEST_F(AmqpTlsTest, AMQP1_AnAddressIsCheckedOnlyAgainstTheDnsNames) {
  expect_fails_naming(round_trip(url("127.0.0.1", good_ca())), "hostname verification failed");
  const bq::Status st = round_trip(url("127.0.0.1", good_ca(), "&verify_hostname=false"));
  EXPECT_TRUE(st.ok()) << st.error().what();
  expect_fails_naming(round_trip(url("127.0.0.1", wrong_ca(), "&verify_hostname=false")),
                      "peer cert verification failed");
}

}  // namespace
