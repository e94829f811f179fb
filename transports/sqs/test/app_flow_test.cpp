// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The App end to end on SqsTransport against the shared emulator, checked with the raw client
// and the request counts of the HTTP seam: a failure is retried in place (ChangeMessageVisibility,
// no republish) with attempts from ApproximateReceiveCount and the retry backoff rounded up to
// whole seconds (SQS-10, SQS-13, RT-39); the schema gate's route goes to `<q>-dlq` as the
// original bytes with dead-lettering on and to the queue's RedrivePolicy with it off (SQS-11,
// SQS-15, OB-8); an exhausted message is dead-lettered to `<q>-dlq`, or to the explicit suffix
// (SQS-14, RT-7); publish_batch of 25 is three SendMessageBatch requests (D-11); headers
// (traceparent) travel beside the body (OB-3, OB-4); four workers settle each message once.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/app_fixture.hpp>
#include <babelqueue/testing/contract.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "binding/fixtures.hpp"
#include "shared_emulator_test.hpp"

namespace babelqueue::sqs::test {
namespace {

using babelqueue::testing::AppOn;
using babelqueue::testing::contract_body;
using babelqueue::testing::handler_failure;
using babelqueue::testing::kWithin;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kUrn = babelqueue::testing::kContractUrn;

class SqsAppTest : public SharedEmulatorTest {
 protected:
  // An App on a transport of its own whose requests `seam()` counts; a drain's pops wait up
  // to kWithin.
  App& app(AppOptions options = {}) {
    seam_ = std::make_shared<SeamClient>();
    return app_.start(transport(SharedEmulatorTest::options(seam_)), std::move(options), kWithin);
  }
  SqsTransport& sqs() { return app_.transport(); }
  SeamClient& seam() { return *seam_; }
  // Sends the deletes the App's acks queued.
  void settle() { ASSERT_TRUE(sqs().flush().ok()); }

 private:
  std::shared_ptr<SeamClient> seam_;
  AppOn<SqsTransport> app_;
};

// SQS-10, SQS-13, RT-39: two failures then success: the handler sees attempts 0, 1, 2 from the
// receive counts 1, 2, 3 on the very same bytes; the retries are ChangeMessageVisibility calls,
// never a second SendMessage; the success deletes the message.
TEST_F(SqsAppTest, SQS10_RetriesInPlaceWithAttemptsFromTheReceiveCount) {
  create_queue();
  App& a = app({.max_attempts = 5});
  const std::string id = a.publish(kUrn, Json::object({{"n", 1}}), {.queue = queue()});
  std::vector<std::int64_t> attempts;
  std::vector<std::int64_t> counts;
  std::set<std::string> bodies;
  a.handle(kUrn, [&](Context& ctx, const Envelope& env) {
    EXPECT_EQ(env.meta().id, id);
    attempts.push_back(env.attempts());
    counts.push_back(ctx.message().delivery_count);
    bodies.insert(ctx.message().body);
    return attempts.size() < 3 ? handler_failure("not yet") : Status();
  });
  const DrainResult drained = a.drain(queue(), 3);
  ASSERT_TRUE(drained.status.ok()) << drained.status.error().what();
  settle();
  EXPECT_EQ(attempts, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(counts, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(bodies.size(), 1U) << "a retry rewrote the body";
  EXPECT_EQ(seam().count("SendMessage"), 1U) << describe_counts(seam().counts());
  EXPECT_GE(seam().count("ChangeMessageVisibility") + seam().count("ChangeMessageVisibilityBatch"),
            2U)
      << describe_counts(seam().counts());
  EXPECT_TRUE(raw().empty(queue()));
}

// SQS-13: retry_backoff 300 ms is a ChangeMessageVisibility of 1 s (rounded up), so the retry
// comes no earlier than the backoff.
TEST_F(SqsAppTest, SQS13_TheRetryBackoffDelaysTheRedelivery) {
  create_queue();
  constexpr milliseconds kBackoff{300};
  App& a = app({.max_attempts = 2, .retry_backoff = kBackoff});
  a.publish(kUrn, Json::object({{"n", 1}}), {.queue = queue()});
  std::vector<Clock::time_point> runs;
  a.handle(kUrn, [&](Context&, const Envelope&) {
    runs.push_back(Clock::now());
    return runs.size() < 2 ? handler_failure("later") : Status();
  });
  ASSERT_TRUE(a.drain(queue(), 2).status.ok());
  settle();
  ASSERT_EQ(runs.size(), 2U);
  EXPECT_GE(runs[1] - runs[0], kBackoff);
  EXPECT_TRUE(raw().empty(queue()));
}

// SQS-11, OB-8: a message the bq-schema-version gate rejects goes, with dead-lettering on, to
// `<q>-dlq` as its original bytes; no handler runs and the source is deleted.
TEST_F(SqsAppTest, OB8_AGateRejectWithDlqOnGoesToTheDlqAsItsBytes) {
  create_queue();
  raw().create(dlq());
  const std::string body = binding_test::order_created();
  raw().send(queue(), body,
             Json::object({{"bq-schema-version",
                            Json::object({{"DataType", "String"}, {"StringValue", "2"}})}}));
  std::atomic<int> handled{0};
  App& a = app({.dead_letter = true});
  a.handle_any([&](Context&, const Envelope&) {
    ++handled;
    return Status();
  });
  ASSERT_TRUE(a.drain(queue(), 1).status.ok());
  settle();
  EXPECT_EQ(handled.load(), 0);
  EXPECT_TRUE(raw().empty(queue()));
  const JsonArray dead = raw().receive_at_least(dlq(), 1);
  ASSERT_EQ(dead.size(), 1U);
  EXPECT_EQ(dead[0].find("Body")->as_string(), body);
}

// SQS-15, OB-8: with dead-lettering off the gate's reject is handed to the broker: the
// RedrivePolicy (maxReceiveCount 1) moves the untouched message to its DLQ; no handler runs.
TEST_F(SqsAppTest, OB8_AGateRejectWithDlqOffGoesToTheRedrivePolicy) {
  const std::string redrive_dlq = queue() + "-redrive";
  raw().create_with_redrive(queue(), redrive_dlq, 1, {{"VisibilityTimeout", "1"}});
  const std::string body = binding_test::order_created();
  raw().send(queue(), body,
             Json::object({{"bq-schema-version",
                            Json::object({{"DataType", "Number"}, {"StringValue", "2"}})}}));
  std::atomic<int> handled{0};
  {
    Worker worker(transport(), queue(), {.dead_letter = false}, [&](Context&, const Envelope&) {
      ++handled;
      return Status();
    });
    EXPECT_TRUE(eventually([&] { return raw().visible(redrive_dlq) == 1; }))
        << "the rejected message never reached the redrive DLQ";
    EXPECT_TRUE(worker.stop().ok());
  }
  EXPECT_EQ(handled.load(), 0);
  EXPECT_TRUE(raw().empty(queue()));
  const JsonArray moved = raw().receive(redrive_dlq);
  ASSERT_EQ(moved.size(), 1U);
  EXPECT_EQ(moved[0].find("Body")->as_string(), body);
}

// RT-35, SQS-14: an exhausted message is written to `<q>-dlq` as its dead-letter record
// (reason "failed", the source queue, the handler's error) and deleted from the source.
TEST_F(SqsAppTest, RT35_AnExhaustedMessageIsDeadLetteredToTheDashDlq) {
  create_queue();
  raw().create(dlq());
  App& a = app({.max_attempts = 2, .dead_letter = true});
  const std::string id = a.publish(kUrn, Json::object({{"n", 1}}), {.queue = queue()});
  a.handle(kUrn, [](Context&, const Envelope&) { return handler_failure("kaput"); });
  ASSERT_TRUE(a.drain(queue(), 2).status.ok());
  settle();
  EXPECT_TRUE(raw().empty(queue()));
  const JsonArray dead = raw().receive_at_least(dlq(), 1);
  ASSERT_EQ(dead.size(), 1U);
  const Envelope record = decode(dead[0].find("Body")->as_string());
  EXPECT_EQ(record.meta().id, id);
  ASSERT_TRUE(record.dead_letter().has_value());
  EXPECT_EQ(record.dead_letter()->reason, "failed");
  EXPECT_EQ(record.dead_letter()->original_queue, queue());
  EXPECT_EQ(record.dead_letter()->error, std::optional<std::string>("kaput"));
  EXPECT_EQ(string_attribute(dead[0], "bq-message-id"), std::optional<std::string>(id))
      << "the record is an ordinary publish with the SQS-6 projection (OB-7)";
}

// SQS-14, RT-7: an explicit dead_letter_suffix names the queue `<q><suffix>`.
TEST_F(SqsAppTest, SQS14_AnExplicitSuffixNamesTheDlq) {
  create_queue();
  const std::string parked = queue() + "-parked";
  raw().create(parked);
  App& a = app({.max_attempts = 1, .dead_letter = true, .dead_letter_suffix = "-parked"});
  const std::string id = a.publish(kUrn, Json::object({{"n", 1}}), {.queue = queue()});
  a.handle(kUrn, [](Context&, const Envelope&) { return handler_failure("no"); });
  ASSERT_TRUE(a.drain(queue(), 1).status.ok());
  settle();
  const JsonArray dead = raw().receive_at_least(parked, 1);
  ASSERT_EQ(dead.size(), 1U);
  EXPECT_EQ(decode(dead[0].find("Body")->as_string()).meta().id, id);
}

// D-11: publish_batch of 25 is three SendMessageBatch requests (10, 10, 5); the App handles
// every message once and deletes them all.
TEST_F(SqsAppTest, D11_PublishBatchOf25IsThreeRequests) {
  create_queue();
  App& a = app();
  std::set<std::string> published;
  std::vector<std::string> bodies;
  for (int n = 0; n < 25; ++n) {
    bodies.push_back(contract_body(n));
    published.insert(std::string(decode(bodies.back()).meta().id));
  }
  ASSERT_TRUE(sqs().publish_batch(queue(), bodies).ok());
  EXPECT_EQ(seam().count("SendMessageBatch"), 3U) << describe_counts(seam().counts());
  EXPECT_EQ(seam().count("SendMessage"), 0U);
  std::map<std::string, int> runs;
  a.handle(kUrn, [&](Context&, const Envelope& env) {
    ++runs[std::string(env.meta().id)];
    return Status();
  });
  const DrainResult drained = a.drain(queue(), 25);
  ASSERT_TRUE(drained.status.ok()) << drained.status.error().what();
  settle();
  EXPECT_EQ(runs.size(), published.size());
  for (const std::string& id : published) {
    EXPECT_EQ(runs[id], 1) << id;
  }
  EXPECT_TRUE(raw().empty(queue()));
  std::cout << "[ sqs ] publish_batch of 25 then a drain of 25: "
            << describe_counts(seam().counts()) << "\n";
}

// OB-3, OB-4: a traceparent given to publish_with_headers reaches the handler as a header
// beside the SQS-6 attributes; the body is the envelope alone.
TEST_F(SqsAppTest, OB3_HeadersTravelBesideTheBody) {
  create_queue();
  const std::string tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  App& a = app();
  const std::string id = a.publish_with_headers(kUrn, Json::object({{"n", 1}}),
                                                {{"traceparent", tp}}, {.queue = queue()});
  Headers seen;
  std::string body;
  a.handle(kUrn, [&](Context& ctx, const Envelope&) {
    seen = ctx.headers();
    body = ctx.message().body;
    return Status();
  });
  ASSERT_TRUE(a.drain(queue(), 1).status.ok());
  settle();
  EXPECT_EQ(seen["traceparent"], tp);
  EXPECT_EQ(seen["bq-message-id"], id);
  EXPECT_EQ(seen["bq-job"], kUrn);
  EXPECT_EQ(body.find("traceparent"), std::string::npos) << "the header went into the body";
  EXPECT_EQ(decode(body).meta().id, id);
}

// D-4, OB-11: four workers (acks and releases from worker threads) handle 40 messages, each
// exactly once, and leave the queue empty.
TEST_F(SqsAppTest, D4_FourWorkersSettleEachMessageOnce) {
  create_queue();
  auto t = transport();
  std::vector<std::string> bodies;
  std::set<std::string> published;
  for (int n = 0; n < 40; ++n) {
    bodies.push_back(contract_body(n));
    published.insert(std::string(decode(bodies.back()).meta().id));
  }
  ASSERT_TRUE(t->publish_batch(queue(), bodies).ok());
  babelqueue::testing::HandledIds handled;
  {
    Worker worker(t, queue(), {.concurrency = 4}, [&](Context&, const Envelope& env) {
      handled.add(std::string(env.meta().id));
      return Status();
    });
    EXPECT_TRUE(eventually([&] { return handled.missing(published).empty(); }))
        << babelqueue::testing::describe_missing(handled.missing(published));
    EXPECT_TRUE(worker.stop().ok());
  }
  ASSERT_TRUE(t->flush().ok());
  for (const std::string& id : published) {
    EXPECT_EQ(handled.runs(id), 1) << id;
  }
  EXPECT_TRUE(eventually([&] { return raw().empty(queue()); }));
}

}  // namespace
}  // namespace babelqueue::sqs::test
