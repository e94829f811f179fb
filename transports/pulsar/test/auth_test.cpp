// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// A refused token through the transport (PLS-12, D-3) on the scripted fake broker
// (testing/peers/pulsar `--token`: a CONNECT without that token gets ERROR AuthenticationError
// "Unable to authenticate" and the connection is closed, as the broker answers). Every operation
// is a non-transient ConfigError naming the refusal and never the token; the App's consume stops
// on it at once instead of reconnecting (D-3), and nothing it logs carries the token. (The real
// broker with AuthenticationProviderToken refuses a forged token the same way:
// PulsarClientToken.TheBrokerAcceptsItsTokenAndRefusesAForgedOne in client_tls_test.cpp.)

#include <babelqueue/app.hpp>
#include <babelqueue/pulsar/transport.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "fake_broker.hpp"

namespace babelqueue::pulsar::test {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kSecret = "the-right-secret";
constexpr std::string_view kWrong = "a-wrong-token-4711";

// The fake's URL with `token` as the user info's password ("" = no credentials).
std::string url_with_token(const FakeBroker& fake, std::string_view token) {
  if (token.empty()) return fake.url();
  constexpr std::string_view kScheme = "pulsar://";
  return std::string(kScheme) + "token:" + std::string(token) + "@" +
         fake.url().substr(kScheme.size());
}

// The refusal as an error must say what happened, and never carry a token.
void expect_refusal(const Error& e) {
  EXPECT_EQ(e.code(), ErrorCode::Config) << e.what();
  EXPECT_FALSE(e.is_transient()) << e.what();
  EXPECT_THAT(e.what(), HasSubstr("AuthenticationError"));
  EXPECT_THAT(e.what(), HasSubstr("Unable to authenticate"));
  EXPECT_THAT(e.what(), Not(HasSubstr(kWrong)));
  EXPECT_THAT(e.what(), Not(HasSubstr(kSecret)));
}

TEST(PulsarTransportAuth, ARefusedTokenIsAConfigErrorThatNeverPrintsIt) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake({"--token", std::string(kSecret)});
  for (const std::string_view token : {kWrong, std::string_view()}) {
    SCOPED_TRACE(token.empty() ? "no token" : "a wrong token");
    PulsarTransport t(url_with_token(fake, token));
    const Status published = t.publish("orders", R"({"job":"urn:x"})");
    ASSERT_FALSE(published.ok()) << "published with a refused token";
    expect_refusal(published.error());
    const auto popped = t.pop("orders", milliseconds(2'000));
    ASSERT_FALSE(popped.has_value()) << "popped with a refused token";
    expect_refusal(popped.error());
    t.close();
  }
  EXPECT_GE(FakeBroker::number(fake.control("connections"), {"refused_auth"}), 2);
  // The right token is accepted by the same broker: the refusal was the token's.
  PulsarTransport good(url_with_token(fake, kSecret));
  EXPECT_TRUE(good.publish("orders", R"({"job":"urn:x"})").ok());
}

// D-3: consume rides out transient faults but returns on a configuration error; a refused token
// is one: it returns the ConfigError after one refused connection, reports no transient error,
// and what it logs does not carry the token.
TEST(PulsarTransportAuth, D3_ConsumeStopsOnARefusedToken) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake({"--token", std::string(kSecret)});
  std::mutex mutex;
  std::vector<std::string> transient;
  std::string logged;
  AppOptions options;
  options.poll_timeout = milliseconds(500);
  options.on_consume_error = [&](const Error& e, milliseconds) {
    const std::lock_guard lock(mutex);
    transient.emplace_back(e.what());
  };
  options.logger = [&](LogLevel, std::string_view text) {
    const std::lock_guard lock(mutex);
    logged.append(text).append("\n");
  };
  App app(std::make_shared<PulsarTransport>(url_with_token(fake, kWrong)), std::move(options));
  app.handle("urn:babel:orders:created", [](Context&, const Envelope&) { return Status(); });
  auto consumed = std::async(std::launch::async, [&] { return app.consume("orders"); });
  if (consumed.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    app.stop();
    consumed.wait();
    FAIL() << "consume went on with a refused token";
  }
  const Status status = consumed.get();
  ASSERT_FALSE(status.ok());
  expect_refusal(status.error());
  const std::lock_guard lock(mutex);
  EXPECT_TRUE(transient.empty()) << "treated as transient: " << transient.front();
  EXPECT_THAT(logged, Not(HasSubstr(kWrong)));
  EXPECT_EQ(FakeBroker::number(fake.control("connections"), {"refused_auth"}), 1)
      << "consume reconnected after the refusal";
}

}  // namespace
}  // namespace babelqueue::pulsar::test
