// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The Pulsar client's pieces that need no broker (issue 13): broker errors mapped to the core's
// error classes, receipts matched to sends by sequence id, options refused at construction.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client.hpp"
#include "client_detail.hpp"

namespace babelqueue::pulsar {
namespace {

namespace pb = proto;

template <class E>
void expect_class(pb::ServerError code, bool transient) {
  const std::exception_ptr error = detail::broker_error(code, "SEND to persistent://t/n/x", "why");
  try {
    std::rethrow_exception(error);
  } catch (const E& e) {
    EXPECT_EQ(e.is_transient(), transient) << pb::ServerError_Name(code);
    const std::string text = e.what();
    EXPECT_NE(text.find("persistent://t/n/x"), std::string::npos) << text;
    EXPECT_NE(text.find(pb::ServerError_Name(code)), std::string::npos) << text;
    EXPECT_NE(text.find("why"), std::string::npos) << text;
  } catch (...) {
    ADD_FAILURE() << pb::ServerError_Name(code) << " is not of the expected class";
  }
}

TEST(PulsarClientErrors, ConfigurationFaultsAreConfigErrors) {
  for (const auto code :
       {pb::AuthenticationError, pb::AuthorizationError, pb::InvalidTopicName, pb::TopicNotFound,
        pb::UnsupportedVersionError, pb::NotAllowedError, pb::IncompatibleSchema}) {
    expect_class<ConfigError>(code, false);
  }
}

TEST(PulsarClientErrors, BusyAndNotReadyAreTransient) {
  for (const auto code : {pb::ServiceNotReady, pb::TooManyRequests, pb::ProducerBusy,
                          pb::ConsumerBusy, pb::PersistenceError, pb::MetadataError,
                          pb::ProducerBlockedQuotaExceededError, pb::UnknownError}) {
    expect_class<TransportError>(code, true);
  }
}

TEST(PulsarClientErrors, TerminatedTopicIsNotTransient) {
  expect_class<TransportError>(pb::TopicTerminatedError, false);
  expect_class<TransportError>(pb::ProducerFenced, false);
}

TEST(PulsarClientPendingSends, ReceiptsResolveTheirOwnSequence) {
  detail::PendingSends sends;
  std::vector<std::string> outcomes;
  auto record = [&outcomes](int n) {
    return [&outcomes, n](const pb::MessageIdData* id, std::exception_ptr error) {
      std::string outcome = std::to_string(n);
      outcome += ':';
      outcome += error ? std::string("error") : std::to_string(id->entryid());
      outcomes.push_back(outcome);
    };
  };
  EXPECT_EQ(sends.add(record(0)), 0U);
  EXPECT_EQ(sends.add(record(1)), 1U);
  EXPECT_EQ(sends.add(record(2)), 2U);
  pb::MessageIdData id;
  id.set_ledgerid(7);
  id.set_entryid(41);
  EXPECT_TRUE(sends.receipt(1, id));
  EXPECT_FALSE(sends.receipt(1, id)) << "a duplicate receipt resolves nothing";
  EXPECT_FALSE(sends.receipt(9, id)) << "a receipt of no send resolves nothing";
  EXPECT_TRUE(sends.fail(0, std::make_exception_ptr(TransportError("x"))));
  EXPECT_EQ(sends.size(), 1U);
  sends.fail_all(std::make_exception_ptr(TransportError("lost")));
  EXPECT_EQ(sends.size(), 0U);
  EXPECT_EQ(outcomes, (std::vector<std::string>{"1:41", "0:error", "2:error"}));
  EXPECT_EQ(sends.add(record(3)), 3U) << "sequence ids never repeat";
}

TEST(PulsarClientOptions, BadServiceUrlsAreConfigErrors) {
  for (const char* url :
       {"http://127.0.0.1:6650", "pulsar://127.0.0.1", "pulsar://:6650", "pulsar://h:0",
        "pulsar://h:70000", "pulsar://h:66x", "pulsar+ssl://h", "pulsar+ssl//h:6651"}) {
    EXPECT_THROW(Client(ClientOptions{.service_url = url}), ConfigError) << url;
  }
  // TLS: a CA file that cannot be read is named; without one the system's CAs are used.
  try {
    Client(ClientOptions{.service_url = "pulsar+ssl://h:6651",
                         .tls_trust_certs_file = "/nonexistent/ca.pem"});
    ADD_FAILURE() << "an unreadable CA file was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/ca.pem"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(Client(ClientOptions{.service_url = "pulsar+ssl://h:6651"}));
  ClientOptions zero;
  zero.keepalive = std::chrono::milliseconds(0);
  EXPECT_THROW(Client{zero}, ConfigError);
  EXPECT_NO_THROW(Client(ClientOptions{.service_url = "pulsar://localhost:6650/"}));
}

TEST(PulsarClientOptions, RefusedConnectionIsTransientAndCloseIsIdempotent) {
  // Port 1 on loopback: nothing listens there (root could, nobody does in this test).
  ClientOptions options;
  options.service_url = "pulsar://127.0.0.1:1";
  options.operation_timeout = std::chrono::milliseconds(10'000);
  Client client(options);
  try {
    static_cast<void>(client.lookup("persistent://public/default/x"));
    ADD_FAILURE() << "a lookup without a broker succeeded";
  } catch (const TransportError& e) {
    EXPECT_TRUE(e.is_transient());
    EXPECT_EQ(e.code(), ErrorCode::Transport) << e.what();
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:1"), std::string::npos) << e.what();
  }
  client.close();
  client.close();
  EXPECT_THROW(static_cast<void>(client.lookup("persistent://public/default/x")), ClosedError);
}

}  // namespace
}  // namespace babelqueue::pulsar
