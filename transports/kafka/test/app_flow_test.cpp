// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The App end to end on KafkaTransport against the shared broker, checked on the records and the
// group's committed offsets with RawKafka: a handled record is committed (KFK-6, KFK-11); a
// failure is retried by a republish with attempts + 1 and the source key, then dead-lettered to
// `<q>.dlq` keyed (KFK-13, KFK-17, OB-8); poison and gate-rejected records go to `<q>.dlq`
// (D-2, OB-8); four workers finishing out of order commit only contiguous offsets (KFK-11);
// redrive restores and re-publishes with keys and headers (KFK-15, HLP-20); the Inspector
// reports the group's lag.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/redrive.hpp>
#include <babelqueue/testing/app_fixture.hpp>
#include <babelqueue/testing/contract.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "binding/fixtures.hpp"
#include "shared_broker_test.hpp"

namespace babelqueue::kafka::test {
namespace {

using babelqueue::testing::AppOn;
using babelqueue::testing::body_attempts;
using babelqueue::testing::body_number;
using babelqueue::testing::contract_body;
using babelqueue::testing::handler_failure;
using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;
using std::chrono::milliseconds;

constexpr std::string_view kUrn = babelqueue::testing::kContractUrn;

// A contract body (data {"n": n}) whose meta.queue is `queue`: where its dead-letter record
// names it came from, and where redrive sends it back.
std::string body_for(const std::string& queue, int n) {
  return encode(make(kUrn, Json::object({{"n", n}}), {.queue = queue}));
}

class KafkaAppTest : public SharedBrokerTest {
 protected:
  // An App on a transport of its own for this test's group. `poll_timeout` bounds a drain's
  // first pop (the group join) and how long a consume takes to notice stop().
  App& app(AppOptions options = {}, std::string_view extra = {},
           milliseconds poll_timeout = kWithin) {
    return app_.start(transport(extra), std::move(options), poll_timeout);
  }
  // Closes the App's transport: what was acked is committed.
  void close_transport() { kafka().close(); }
  KafkaTransport& kafka() { return app_.transport(); }
  std::string dlq() const { return queue() + ".dlq"; }

 private:
  AppOn<KafkaTransport> app_;
};

// KFK-6, KFK-11: process then commit: the handled records are committed, nothing more.
TEST_F(KafkaAppTest, KFK11_HandledRecordsAreCommitted) {
  App& a = app();
  std::vector<std::string> ids;
  for (int n = 1; n <= 3; ++n) {
    ids.push_back(a.publish(kUrn, Json::object({{"n", n}}), {.queue = queue()}));
  }
  std::vector<std::string> handled;  // drain dispatches on this thread
  a.handle(kUrn, [&](Context&, const Envelope& env) {
    handled.emplace_back(env.meta().id);
    return Status();
  });
  const DrainResult drained = a.drain(queue(), 3);
  EXPECT_TRUE(drained.status.ok()) << drained.status.error().what();
  EXPECT_EQ(handled, ids);
  close_transport();
  EXPECT_EQ(raw().committed(group(), queue(), 0), 3);
  EXPECT_EQ(raw().end_offset(queue(), 0), 3);
}

// OB-4 through the App's deferred pop: a handler that reads the headers gets the record's text
// headers (the projection and the riders), built from the handle's list on first use.
TEST_F(KafkaAppTest, OB4_AHandlerReadsTheRecordsHeadersThroughTheDeferredPop) {
  App& a = app();
  const std::string id = a.publish_with_headers(kUrn, Json::object({{"n", 1}}),
                                                {{"traceparent", "00-t"}}, {.queue = queue()});
  Headers seen;
  a.handle(kUrn, [&](Context& ctx, const Envelope&) {
    seen = ctx.headers();
    return Status();
  });
  const DrainResult drained = a.drain(queue(), 1);
  ASSERT_TRUE(drained.status.ok()) << drained.status.error().what();
  EXPECT_EQ(seen.at("traceparent"), "00-t");
  EXPECT_EQ(seen.at("bq-message-id"), id);
  EXPECT_EQ(seen.at("bq-attempts"), "0");
  EXPECT_EQ(seen.at("bq-job"), kUrn);
}

// KFK-11: flush() returns only once the commits sent before it are stored: with commit_batch 1
// every ack sends an asynchronous commit, and the group's offset is read right after the flush,
// without waiting (bench transport's "queue still holds" check found the gap).
TEST_F(KafkaAppTest, KFK11_FlushEndsAfterTheAsynchronousCommits) {
  constexpr int kRecords = 60;
  App& a = app({}, "&commit_batch=1");
  for (int n = 0; n < kRecords; ++n)
    (void)a.publish(kUrn, Json::object({{"n", n}}), {.queue = queue()});
  int handled = 0;
  a.handle(kUrn, [&](Context&, const Envelope&) {
    ++handled;
    return Status();
  });
  const DrainResult drained = a.drain(queue(), kRecords);
  ASSERT_TRUE(drained.status.ok()) << drained.status.error().what();
  ASSERT_EQ(handled, kRecords);
  ASSERT_TRUE(kafka().flush().ok());
  EXPECT_EQ(raw().committed(group(), queue(), 0), kRecords);
}

// KFK-13, KFK-17, OB-8: a failure is republished to the same topic with attempts + 1 (header and
// body) and the source key; the last attempt goes to `<q>.dlq` with that key; both records of
// the source topic are committed.
TEST_F(KafkaAppTest, OB8_AFailureIsRetriedKeyedThenDeadLetteredKeyed) {
  raw().create_topic(queue(), 1);
  raw().produce(queue(), std::string("order-7"), body_for(queue(), 1));
  std::vector<std::int64_t> attempts;
  App& a = app({.max_attempts = 2, .dead_letter = true});
  a.handle(kUrn, [&](Context&, const Envelope& env) {
    attempts.push_back(env.attempts());
    return handler_failure("OB-8");
  });
  EXPECT_TRUE(a.drain(queue(), 2).status.ok());
  close_transport();
  EXPECT_EQ(attempts, (std::vector<std::int64_t>{0, 1}));

  const auto source = records(queue(), 2);
  ASSERT_EQ(source.size(), 2U);
  const RawRecord& retry = source[1];
  EXPECT_EQ(retry.key, std::optional<std::string>("order-7")) << "the retry lost the key";
  EXPECT_EQ(body_attempts(retry.value), 1);
  EXPECT_EQ(raw_header(retry, "bq-attempts"), std::optional<std::string>("1"));
  EXPECT_EQ(decode(retry.value).meta().id, decode(source[0].value).meta().id);

  const auto dead = records(dlq(), 1);
  ASSERT_EQ(dead.size(), 1U);
  EXPECT_EQ(dead[0].key, std::optional<std::string>("order-7")) << "the DLQ record lost the key";
  const Envelope env = decode(dead[0].value);
  ASSERT_TRUE(env.dead_letter().has_value()) << dead[0].value;
  EXPECT_EQ(env.dead_letter()->original_queue, queue());
  EXPECT_EQ(env.dead_letter()->reason, "failed");
  EXPECT_EQ(raw().committed(group(), queue(), 0), 2);
}

// D-2, OB-8: a value that is no envelope becomes the ADR-0035 poison record on `<q>.dlq`,
// keyed, and is committed.
TEST_F(KafkaAppTest, D2_PoisonGoesToTheDlqKeyed) {
  const std::string poison = std::string("\xFF\xFE{\"job\":\"urn:x\"}\x80", 18);
  raw().create_topic(queue(), 1);
  raw().produce(queue(), std::string("p-1"), poison);
  App& a = app({.dead_letter = true});
  a.handle(kUrn, [](Context&, const Envelope&) { return Status(); });
  EXPECT_TRUE(a.drain(queue(), 1).status.ok());
  close_transport();
  const auto dead = records(dlq(), 1);
  ASSERT_EQ(dead.size(), 1U);
  EXPECT_EQ(dead[0].key, std::optional<std::string>("p-1"));
  // The record for exactly these bytes, whenever it failed: `raw` and its encoding agree.
  const Json json = Json::parse(dead[0].value);
  const Json expected = Json::parse(poison_record(poison, "", queue()));
  ASSERT_NE(json.find("raw"), nullptr) << dead[0].value;
  EXPECT_EQ(*json.find("raw"), *expected.find("raw"));
  EXPECT_EQ(*json.find("raw_encoding"), *expected.find("raw_encoding"));
  EXPECT_EQ(raw().committed(group(), queue(), 0), 1);
}

// OB-8: a record the bq-schema-version gate rejects goes to `<q>.dlq` as its original bytes,
// keyed, with its headers, and is committed; no handler runs.
TEST_F(KafkaAppTest, OB8_AGateRejectedRecordGoesToTheDlqAsItsBytes) {
  const std::string body = binding_test::order_created();
  raw().create_topic(queue(), 1);
  raw().produce(queue(), std::string("g-1"), body, {{"bq-schema-version", "2"}});
  std::atomic<int> handled{0};
  App& a = app({.dead_letter = true});
  a.handle_any([&](Context&, const Envelope&) {
    ++handled;
    return Status();
  });
  EXPECT_TRUE(a.drain(queue(), 1).status.ok());
  close_transport();
  const auto dead = records(dlq(), 1);
  ASSERT_EQ(dead.size(), 1U);
  EXPECT_EQ(dead[0].value, body);
  EXPECT_EQ(dead[0].key, std::optional<std::string>("g-1"));
  EXPECT_EQ(handled.load(), 0);
  EXPECT_EQ(raw().committed(group(), queue(), 0), 1);
}

// KFK-11: with four workers and the first record's handler held, the others are handled and
// acked, yet the committed offset never passes the held record; once it finishes, everything
// is committed, and every record was handled exactly once.
TEST_F(KafkaAppTest, KFK11_FourWorkersCommitOnlyContiguousOffsets) {
  constexpr int kRecords = 24;
  App& a = app({.concurrency = 4}, "&commit_batch=1", milliseconds(200));
  for (int n = 0; n < kRecords; ++n) {
    ASSERT_TRUE(kafka().publish(queue(), contract_body(n)).ok());
  }
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::map<std::int64_t, int> runs;
  a.handle(kUrn, [&](Context& ctx, const Envelope&) {
    const std::int64_t n = body_number(ctx.message().body).value_or(-1);
    std::unique_lock lock(mu);
    ++runs[n];
    cv.notify_all();
    if (n == 0) cv.wait(lock, [&] { return release; });
    return Status();
  });
  Status status;
  std::thread consuming([&] { status = a.consume(queue()); });
  {
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, kWithin, [&] { return runs.size() == kRecords; }))
        << runs.size() << " of " << kRecords << " records handled";
  }
  // Every ack of the other records has been made; flush commits what may be committed.
  EXPECT_TRUE(kafka().flush().ok());
  EXPECT_LE(raw().committed(group(), queue(), 0), 0)
      << "committed past the record a handler still holds";
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  EXPECT_TRUE(eventually([&] {
    (void)kafka().flush();
    return raw().committed(group(), queue(), 0) == kRecords;
  })) << "committed "
      << raw().committed(group(), queue(), 0);
  a.stop();
  consuming.join();
  EXPECT_TRUE(status.ok()) << status.error().what();
  std::lock_guard lock(mu);
  for (int n = 0; n < kRecords; ++n) {
    EXPECT_EQ(runs[n], 1) << "record " << n;
  }
}

// HLP-20, KFK-15: redrive re-publishes a dead-lettered envelope to its queue with the record's
// key, restores what it cannot replay (an undecodable record) with its key and headers, and
// commits the dead-letter offsets: the records are written before anything is committed.
TEST_F(KafkaAppTest, HLP20_RedriveKeepsKeysAndCommitsTheDlqAfterItsWrites) {
  raw().create_topic(queue(), 1);
  raw().produce(queue(), std::string("order-9"), body_for(queue(), 9));
  {
    App& a = app({.max_attempts = 1, .dead_letter = true});
    a.handle(kUrn, [](Context&, const Envelope&) { return handler_failure("to the DLQ"); });
    EXPECT_TRUE(a.drain(queue(), 1).status.ok());
    close_transport();
  }
  const RawHeaders kept = {{"x-note", "keep me"}, {"x-null", std::nullopt}};
  raw().produce(dlq(), std::string("u-1"), "not an envelope", kept);
  ASSERT_EQ(records(dlq(), 2).size(), 2U);

  auto t = transport();
  RedriveOptions options;
  options.max = 2;
  options.timeout = kWithin;
  const RedriveResult result = redrive(*t, dlq(), options);
  ASSERT_TRUE(result.ok()) << result.status.error().what();
  EXPECT_EQ(result.redriven, 1U);
  EXPECT_EQ(result.skipped, 1U);
  t->close();

  const auto back = records(queue(), 2);
  ASSERT_EQ(back.size(), 2U);
  EXPECT_EQ(back[1].key, std::optional<std::string>("order-9")) << "redrive lost the key";
  const Envelope env = decode(back[1].value);
  EXPECT_FALSE(env.dead_letter().has_value());
  EXPECT_EQ(env.attempts(), 0);
  EXPECT_EQ(body_number(back[1].value), 9);

  const auto dead = records(dlq(), 3);
  ASSERT_EQ(dead.size(), 3U);
  EXPECT_EQ(dead[2].value, "not an envelope");
  EXPECT_EQ(dead[2].key, std::optional<std::string>("u-1"));
  EXPECT_EQ(dead[2].headers, kept);
  EXPECT_EQ(raw().committed(group(), dlq(), 0), 2)
      << "the restored record must stay for the next run, the others be committed";
}

// Inspector: on a topic with a lag the ready count is the group's lag, the dead-letter count
// the size of `<q>.dlq`, and the details show the per-partition figures.
TEST_F(KafkaAppTest, InspectorReportsTheGroupsLag) {
  auto t = transport();
  for (int n = 1; n <= 5; ++n) {
    ASSERT_TRUE(t->publish(queue(), contract_body(n)).ok());
  }
  ASSERT_TRUE(t->publish(dlq(), contract_body(6)).ok());
  for (int i = 0; i < 2; ++i) {
    const auto m = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(m.has_value());
    ASSERT_TRUE(t->ack(*m).ok());
  }
  ASSERT_TRUE(t->flush().ok());
  ASSERT_TRUE(committed_becomes(queue(), 2));
  const auto s = t->stats(queue(), {});
  ASSERT_TRUE(s.has_value()) << s.error().what();
  EXPECT_EQ(s->ready, 3);
  EXPECT_EQ(s->dead_letter, 1);
  EXPECT_FALSE(s->details.empty());
  bool lag = false;
  for (const auto& [name, value] : s->details) {
    if (name.find("lag") != std::string::npos || value.find("lag") != std::string::npos) lag = true;
  }
  EXPECT_TRUE(lag) << "no lag among the details";
}

}  // namespace
}  // namespace babelqueue::kafka::test
