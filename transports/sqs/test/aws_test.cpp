// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Against real Amazon SQS, gated on the environment (TRANSPORTS.md: clouds that cannot run here
// get env-gated tests, shown as skipped with their reason; ctest label `aws`):
//   BABELQUEUE_SQS_URL    an sqs:// URL of a real account (region, credentials from the URL, the
//                         environment or the shared credentials file, SQS-3)
//   BABELQUEUE_SQS_QUEUE  an existing standard queue the test may empty (default
//                         "babelqueue-test"; SQS never creates queues, SQS-5)
// It checks what the emulator cannot: the real signer accepted by AWS (SQS-4, TLS verified by
// default), the SQS-6 attributes and receive counts on AWS's side, batching (D-11) and release
// (SQS-13).

#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/sqs/transport.hpp>
#include <babelqueue/testing/contract.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace babelqueue::sqs::test {
namespace {

using babelqueue::testing::contract_body;
using babelqueue::testing::pop_message;
using namespace std::chrono_literals;

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

class SqsRealAws : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto url = environment("BABELQUEUE_SQS_URL");
    if (!url) {
      GTEST_SKIP() << "BABELQUEUE_SQS_URL is not set: these tests need a real AWS account (an "
                      "sqs:// URL, and BABELQUEUE_SQS_QUEUE naming an existing queue they may "
                      "empty)";
    }
    queue_ = environment("BABELQUEUE_SQS_QUEUE").value_or("babelqueue-test");
    transport_ = std::make_unique<SqsTransport>(*url);
    // Start from an empty queue: whatever an earlier run left is taken and deleted.
    for (;;) {
      const auto m = pop_message(*transport_, queue_, 1s);
      if (!m) break;
      ASSERT_TRUE(transport_->ack(*m).ok());
    }
    ASSERT_TRUE(transport_->flush().ok());
  }
  void TearDown() override {
    if (transport_) transport_->close();
  }

  std::unique_ptr<SqsTransport> transport_;
  std::string queue_;
};

// SQS-4, SQS-6, SQS-10, SQS-12: AWS accepts the signed SendMessage; the message comes back
// with the body, the bq-* attributes and the rider as headers and receive count 1; the batched
// delete removes it.
TEST_F(SqsRealAws, RoundTripWithAttributes) {
  const std::string body = contract_body(1);
  const std::string tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  ASSERT_TRUE(transport_->publish_with_headers(queue_, body, {{"traceparent", tp}}).ok());
  const auto m = pop_message(*transport_, queue_, 20s);
  ASSERT_TRUE(m.has_value()) << "the message never came";
  EXPECT_EQ(m->body, body);
  EXPECT_EQ(m->headers.at("traceparent"), tp);
  EXPECT_EQ(m->headers.at("bq-message-id"), decode(body).meta().id);
  EXPECT_EQ(m->delivery_count, 1);
  ASSERT_TRUE(transport_->ack(*m).ok());
  ASSERT_TRUE(transport_->flush().ok());
}

// D-11, SQS-13: a batch of 12 (two SendMessageBatch calls) arrives whole; a release with 0 s
// redelivers with receive count 2.
TEST_F(SqsRealAws, BatchAndRelease) {
  std::vector<std::string> bodies;
  std::set<std::string> ids;
  for (int n = 0; n < 12; ++n) {
    bodies.push_back(contract_body(n));
    ids.insert(std::string(decode(bodies.back()).meta().id));
  }
  ASSERT_TRUE(transport_->publish_batch(queue_, bodies).ok());
  std::set<std::string> got;
  std::optional<ReceivedMessage> released;
  while (got.size() < ids.size()) {
    auto m = pop_message(*transport_, queue_, 20s);
    ASSERT_TRUE(m.has_value()) << got.size() << " of " << ids.size();
    const std::string id(decode(m->body).meta().id);
    if (!released && m->delivery_count == 1) {
      ASSERT_TRUE(transport_->release(*m, 0ms).ok());
      released = std::move(m);
      continue;
    }
    if (released && id == decode(released->body).meta().id) {
      EXPECT_EQ(m->delivery_count, 2);
    }
    got.insert(id);
    ASSERT_TRUE(transport_->ack(*m).ok());
  }
  EXPECT_EQ(got, ids);
  ASSERT_TRUE(transport_->flush().ok());
}

}  // namespace
}  // namespace babelqueue::sqs::test
