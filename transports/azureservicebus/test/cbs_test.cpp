// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// CBS on the scripted peer (ASB-3, ASB-T5), which checks every SAS token's signature, expiry and
// audience with Node's crypto (an independent implementation of the signer): tokens minted from
// the key open the links; a ready SharedAccessSignature works; a refused put-token is a
// ConfigError for publish and pop that names the status, never the token; a wrong key is refused
// the same way; a token that expires during a run is renewed before the peer detaches the links
// (nothing interrupted); SASL PLAIN with the key needs no CBS.

#include <babelqueue/azureservicebus/transport.hpp>
#include <babelqueue/testing/contract.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "peer_test.hpp"

namespace babelqueue::azureservicebus::test {
namespace {

using namespace std::chrono_literals;
using babelqueue::testing::kBriefly;
using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;

using Cbs = PeerTest;

TEST_F(Cbs, ASB_T5_MintedTokensOpenTheLinksFromAConnectionString) {
  ServiceBusTransport t(parse_connection_string(peer().connection_string()));
  ASSERT_TRUE(t.publish(queue(), "hello").ok());
  auto m = pop_message(t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->body, "hello");
  EXPECT_TRUE(t.ack(*m).ok());
}

TEST_F(Cbs, ASB_T5_AReadySharedAccessSignatureIsSentAsIs) {
  const auto expiry = std::chrono::duration_cast<std::chrono::seconds>(
                          (std::chrono::system_clock::now() + 1h).time_since_epoch())
                          .count();
  const std::string sas = sas_token("sb://127.0.0.1/" + queue(), "k", "v", expiry);
  ServiceBusTransport t(
      parse_connection_string("Endpoint=sb://127.0.0.1:" + std::to_string(peer().port()) +
                              "/;SharedAccessSignature=" + sas + ";UseDevelopmentEmulator=true"));
  ASSERT_TRUE(t.publish(queue(), "signed").ok());
  auto m = pop_message(t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(t.ack(*m).ok());
  // The signature covers only its entity: another one is refused.
  const Status other = t.publish(queue() + "-other", "x");
  EXPECT_TRUE(other.is(ErrorCode::Config)) << other.error().what();
  EXPECT_EQ(std::string(other.error().what()).find("sig="), std::string::npos);
}

TEST_F(Cbs, ASB_T5_ARefusedPutTokenIsAConfigErrorNamingTheStatus) {
  auto t = transport();
  peer().control("refuse-next-put-token");
  const Status s = t->publish(queue(), "x");
  ASSERT_TRUE(s.is(ErrorCode::Config)) << s.error().what();
  const std::string what = s.error().what();
  EXPECT_NE(what.find("status 401"), std::string::npos) << what;
  EXPECT_NE(what.find(queue()), std::string::npos) << what;
  EXPECT_EQ(what.find("SharedAccessSignature"), std::string::npos) << what;
  // Not sticky: the next publish puts a token again and succeeds.
  ASSERT_TRUE(t->publish(queue(), "y").ok());
  peer().control("refuse-next-put-token");
  const std::string receive_queue = queue() + "-r";
  const auto pop = t->pop(receive_queue, kWithin);
  ASSERT_FALSE(pop.has_value());
  EXPECT_EQ(pop.error().code(), ErrorCode::Config) << pop.error().what();
  EXPECT_FALSE(pop.error().is_transient());
}

TEST_F(Cbs, ASB_T5_AWrongKeyIsRefusedWithoutEchoingIt) {
  ServiceBusTransport t(parse_url(
      "sb://k:wrong-key-123@127.0.0.1:" + std::to_string(peer().port()) + "?tls=0&timeout=5000"));
  const Status s = t.publish(queue(), "x");
  ASSERT_TRUE(s.is(ErrorCode::Config)) << s.error().what();
  const std::string what = s.error().what();
  EXPECT_NE(what.find("InvalidSignature"), std::string::npos) << what;
  EXPECT_EQ(what.find("wrong-key-123"), std::string::npos) << what;
  EXPECT_EQ(t.pop(queue(), kWithin).error().code(), ErrorCode::Config);
}

TEST_F(Cbs, ASB_T5_ATokenExpiringDuringARunIsRenewed) {
  Options o = parse_url(peer().url());
  o.token_lifetime = 3s;  // renewed at 2.7 s; the peer detaches unrenewed links at expiry
  auto t = std::make_shared<ServiceBusTransport>(o);
  const auto until = std::chrono::steady_clock::now() + 8s;
  int n = 0;
  while (std::chrono::steady_clock::now() < until) {
    ASSERT_TRUE(t->publish(queue(), std::to_string(n)).ok()) << "publish " << n;
    auto m = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(m.has_value()) << "message " << n;
    EXPECT_EQ(m->body, std::to_string(n));
    ASSERT_TRUE(t->ack(*m).ok()) << "ack " << n;
    ++n;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_GT(n, 10);
  EXPECT_EQ(peer().count(queue(), "receivers"), 1) << "the receiver link was never detached";
  EXPECT_EQ(count_becomes(queue(), "active", 0), 0);
}

TEST_F(Cbs, SaslPlainNeedsNoCbs) {
  auto t = transport("auth=sasl_plain");
  const Status s = t->publish(queue(), "plain");
  ASSERT_TRUE(s.ok()) << s.error().what();
  auto m = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(t->ack(*m).ok());
}

TEST_F(Cbs, ATokenProviderIsCalledPerAudienceAndItsErrorIsAConfigError) {
  Options o = parse_url(peer().url());
  std::atomic<int> calls{0};
  o.token_provider = [&calls](std::string_view audience) -> Token {
    ++calls;
    if (audience.ends_with("-refused")) throw std::runtime_error("no token for you");
    // The peer checks SAS tokens only: a provider may hand out any token type the service takes.
    return {sas_token(audience, "k", "v", 4'000'000'000), std::chrono::system_clock::now() + 1h};
  };
  ServiceBusTransport t(o);
  // The peer answers 400 to the "jwt" type (it checks SAS tokens only): the status is named.
  const Status s = t.publish(queue(), "x");
  ASSERT_TRUE(s.is(ErrorCode::Config)) << s.error().what();
  EXPECT_NE(std::string(s.error().what()).find("status 400"), std::string::npos);
  const Status refused = t.publish(queue() + "-refused", "x");
  ASSERT_TRUE(refused.is(ErrorCode::Config));
  EXPECT_NE(std::string(refused.error().what()).find("no token for you"), std::string::npos);
  EXPECT_GE(calls.load(), 2);
}

}  // namespace
}  // namespace babelqueue::azureservicebus::test
