// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Every SQS-T6 scenario of spec/05-other-brokers.md §2 on the shared emulator, checked with the
// raw client: the send / receive / delete round trip (SQS-9, SQS-12); a release with 0 s
// redelivers with receive count 2 (SQS-13); with dead-lettering off, a handler that always fails
// is retried in place until the queue's RedrivePolicy moves it to its DLQ (SQS-15), and a poison
// body is left undeleted (ADR-0037, OB-8: visible again after its visibility timeout, no
// RedrivePolicy here); with dead-lettering on, the record goes to `orders-dlq` (SQS-14) and the
// source is deleted; a FIFO send carries the group and deduplication ids (SQS-7).

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>

#include <gtest/gtest.h>

#include <openssl/evp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shared_emulator_test.hpp"

namespace babelqueue::sqs::test {
namespace {

using babelqueue::testing::contract_body;
using babelqueue::testing::kBriefly;
using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;
using std::chrono::milliseconds;

// Lowercase hex SHA-256 of `bytes` (SQS-7's deduplication id of a poison record).
std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EXPECT_EQ(EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr), 1);
  constexpr std::string_view kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    out.push_back(kDigits[digest[i] >> 4]);
    out.push_back(kDigits[digest[i] & 0x0F]);
  }
  return out;
}

class SqsScenario : public SharedEmulatorTest {};

// SQS-T6: SendMessage, ReceiveMessage, DeleteMessage(Batch): the body and its meta.id arrive,
// the receive count is 1, and after the ack (flushed) the queue is empty.
TEST_F(SqsScenario, SQST6_SendReceiveDeleteRoundTrip) {
  create_queue();
  auto t = transport();
  const std::string body = contract_body(1);
  ASSERT_TRUE(t->publish(queue(), body).ok());
  const auto m = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->body, body);
  EXPECT_EQ(m->queue, queue());
  EXPECT_EQ(m->delivery_count, 1);
  EXPECT_EQ(m->headers.at("bq-message-id"), decode(body).meta().id);
  ASSERT_TRUE(t->ack(*m).ok());
  ASSERT_TRUE(t->flush().ok());
  EXPECT_TRUE(raw().empty(queue()));
  EXPECT_TRUE(raw().receive(queue(), 10, 0).empty()) << "the acked message is still there";
}

// SQS-13, SQS-T6: release with 0 s makes the message visible at once, and its next receive
// counts 2.
TEST_F(SqsScenario, SQST6_ReleaseWithZeroSecondsRedeliversWithReceiveCountTwo) {
  create_queue({{"VisibilityTimeout", "30"}});
  auto t = transport();
  ASSERT_TRUE(t->publish(queue(), contract_body(1)).ok());
  const auto first = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(t->release(*first, milliseconds::zero()).ok());
  const auto again = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(again.has_value()) << "not visible again within kWithin (the window is 30 s)";
  EXPECT_EQ(again->body, first->body);
  EXPECT_EQ(again->delivery_count, 2);
  ASSERT_TRUE(t->ack(*again).ok());
  ASSERT_TRUE(t->flush().ok());
  EXPECT_TRUE(raw().empty(queue()));
}

// SQS-15, SQS-T6: dead-lettering off, a handler that always fails: the App retries in place
// (release 0 s, D2), and the RedrivePolicy's maxReceiveCount 2, below max_attempts 3, moves the
// message, unchanged, to its DLQ on the third receive, before the App would drop it (D6).
TEST_F(SqsScenario, SQST6_AlwaysFailingHandlerWithDlqOffEndsInTheRedriveDlq) {
  const std::string redrive_dlq = queue() + "-redrive";
  raw().create_with_redrive(queue(), redrive_dlq, 2, {{"VisibilityTimeout", "1"}});
  auto t = transport();
  const std::string body = contract_body(1);
  ASSERT_TRUE(t->publish(queue(), body).ok());
  std::mutex mu;
  std::vector<std::int64_t> attempts;
  {
    Worker worker(t, queue(), {.max_attempts = 3, .dead_letter = false},
                  [&](Context&, const Envelope& env) {
                    std::lock_guard lock(mu);
                    attempts.push_back(env.attempts());
                    return Status(Error(ErrorCode::Handler, "always fails"));
                  });
    EXPECT_TRUE(eventually([&] { return raw().visible(redrive_dlq) == 1; }))
        << "the message never reached the redrive DLQ";
    EXPECT_TRUE(worker.stop().ok());
  }
  std::lock_guard lock(mu);
  EXPECT_EQ(attempts, (std::vector<std::int64_t>{0, 1}));
  EXPECT_TRUE(raw().empty(queue()));
  const JsonArray moved = raw().receive(redrive_dlq);
  ASSERT_EQ(moved.size(), 1U);
  EXPECT_EQ(moved[0].find("Body")->as_string(), body) << "the broker's DLQ holds the original";
}

// SQS-15, OB-8, SQS-T6: dead-lettering off, a poison body is handed to the broker: not deleted,
// visible again once its visibility timeout lapses (receive count 2, the same bytes), and no
// record is written anywhere.
TEST_F(SqsScenario, SQST6_PoisonWithDlqOffIsLeftUndeleted) {
  create_queue({{"VisibilityTimeout", "1"}});
  raw().create(dlq());
  const std::string poison = "not an envelope {";
  raw().send(queue(), poison);
  auto t = transport();
  App app(t, {.dead_letter = false, .poll_timeout = kWithin});
  std::atomic<int> handled{0};
  app.handle_any([&](Context&, const Envelope&) {
    ++handled;
    return Status();
  });
  const DrainResult drained = app.drain(queue(), 1);
  ASSERT_TRUE(drained.status.ok()) << drained.status.error().what();
  EXPECT_EQ(drained.count, 1U);
  ASSERT_TRUE(t->flush().ok());
  t->close();
  EXPECT_EQ(handled.load(), 0);
  const JsonArray back = raw().receive_at_least(queue(), 1);
  ASSERT_EQ(back.size(), 1U) << "the poison message was deleted or never became visible again";
  EXPECT_EQ(back[0].find("Body")->as_string(), poison);
  EXPECT_EQ(system_attribute(back[0], "ApproximateReceiveCount"), std::optional<std::string>("2"));
  EXPECT_TRUE(raw().empty(dlq())) << "a record was written with dead-lettering off";
}

// SQS-14, OB-8, SQS-T6: dead-lettering on, a poison body becomes its ADR-0035 record in
// `orders-dlq` and the source message is deleted. The queue is literally `orders` (this test
// alone uses the name; the record is found by its bytes, so a rerun on the same emulator holds).
TEST_F(SqsScenario, SQST6_PoisonWithDlqOnGoesToOrdersDlq) {
  raw().create("orders");
  raw().create("orders-dlq");
  auto t = transport();
  EXPECT_EQ(t->dead_letter_name("orders", std::nullopt), "orders-dlq");
  const std::string poison = "poison " + babelqueue::testing::unique_queue_name();
  raw().send("orders", poison);
  App app(t, {.dead_letter = true, .poll_timeout = kWithin});
  app.handle_any([](Context&, const Envelope&) { return Status(); });
  const DrainResult drained = app.drain("orders", 1);
  ASSERT_TRUE(drained.status.ok()) << drained.status.error().what();
  ASSERT_TRUE(t->flush().ok());
  EXPECT_TRUE(raw().empty("orders")) << "the source was not deleted";
  const Json expected = Json::parse(poison_record(poison, "", "orders"));
  bool found = false;
  for (const Json& m : raw().receive_at_least("orders-dlq", 1)) {
    const Json record = Json::parse(m.find("Body")->as_string());
    if (record.find("raw") != nullptr && *record.find("raw") == *expected.find("raw")) {
      found = true;
      raw().delete_message("orders-dlq", m);
    }
  }
  EXPECT_TRUE(found) << "no record of the poison body in orders-dlq";
}

// SQS-7, SQS-T6: a FIFO send carries MessageGroupId (the queue's name, or group_id) and
// MessageDeduplicationId (meta.id; the body's SHA-256 for a poison record), on publish and in a
// SendMessageBatch.
TEST_F(SqsScenario, SQST6_FifoSendCarriesGroupAndDedupIds) {
  const std::string fifo = queue() + ".fifo";
  raw().create(fifo, {{"FifoQueue", "true"}});
  Options o = options();
  o.fifo = true;
  auto t = transport(o);
  const std::string one = contract_body(1);
  const std::string two = contract_body(2);
  const std::string poison = "not an envelope";
  ASSERT_TRUE(t->publish(fifo, one).ok());
  ASSERT_TRUE(t->publish_batch(fifo, {two, poison}).ok());
  o.message_group_id = "tenant-7";
  auto grouped = transport(o);
  const std::string three = contract_body(3);
  ASSERT_TRUE(grouped->publish(fifo, three).ok());

  struct Expected {
    std::string group;
    std::string dedup;
  };
  const std::map<std::string, Expected> expected = {
      {one, {fifo, std::string(decode(one).meta().id)}},
      {two, {fifo, std::string(decode(two).meta().id)}},
      {poison, {fifo, sha256_hex(poison)}},
      {three, {"tenant-7", std::string(decode(three).meta().id)}}};
  std::map<std::string, Expected> got;
  eventually([&] {
    for (const Json& m : raw().receive(fifo)) {
      got[m.find("Body")->as_string()] = {
          system_attribute(m, "MessageGroupId").value_or("(none)"),
          system_attribute(m, "MessageDeduplicationId").value_or("(none)")};
      raw().delete_message(fifo, m);
    }
    return got.size() >= expected.size();
  });
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [body, want] : expected) {
    SCOPED_TRACE(body);
    ASSERT_TRUE(got.contains(body));
    EXPECT_EQ(got.at(body).group, want.group);
    EXPECT_EQ(got.at(body).dedup, want.dedup);
  }
  EXPECT_FALSE(pop_message(*t, fifo, kBriefly).has_value());
}

}  // namespace
}  // namespace babelqueue::sqs::test
