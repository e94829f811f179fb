// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// SqsTransport and the App under faults, counting every meta.id whose publish returned ok
// (HTTP 200, TRANSPORTS.md "nothing is lost"): a `babelqueue work` process killed with SIGKILL
// while it holds a full prefetch (its messages return when their visibility lapses, SQS-9,
// D-11); the emulator killed and restarted mid-run (D-3: transient errors, then both sides go
// on; every id arrives, since the emulator keeps its messages); throttling and HTTP 500s injected
// by the seam on every request kind (SQS-17: transient); a SendMessageBatch answer with one failed
// entry (resent when transient, reported when not, D-11); a handler slower than the visibility
// timeout (extended with ChangeMessageVisibility, not redelivered, D-11). Duplicates are allowed
// (at least once); a lost id fails.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>

#include <babelqueue/testing/fault_kit.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "shared_emulator_test.hpp"

#ifdef BABELQUEUE_CLI
#include "cli_process.hpp"
#endif

namespace babelqueue::sqs::test {
namespace {

using babelqueue::testing::ContinuousPublisher;
using babelqueue::testing::describe_missing;
using babelqueue::testing::HandledIds;
using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;
using namespace std::chrono_literals;

constexpr char kUrn[] = "urn:babel:orders:created";
// An emulator restart plus the clients' reconnect backoff (up to 5 s), on a loaded machine.
constexpr auto kRecover = 90s;

// `n` envelopes of kUrn, encoded; their meta.ids go to `ids`.
std::vector<std::string> envelopes(int n, std::set<std::string>& ids) {
  std::vector<std::string> bodies;
  for (int i = 0; i < n; ++i) {
    Envelope env = make(kUrn, Json::object({{"i", i}}));
    ids.insert(std::string(env.meta().id));
    bodies.push_back(encode(env));
  }
  return bodies;
}

// Every k-th request is answered with throttling or, every 2k-th, HTTP 500, without sending it.
SeamClient::Fault every_kth_fails(std::uint64_t k) {
  return [k](const HttpRequest&, std::uint64_t n) -> std::optional<HttpResponse> {
    if (n % k != 0) return std::nullopt;
    return n % (2 * k) == 0 ? server_error_response() : throttling_response();
  };
}

class SqsFaultTest : public SharedEmulatorTest {};

// SQS-9, D-11 across processes: a `babelqueue work` process whose handler never returns holds
// a full prefetch (one message in the handler, nine waiting, all invisible) when it is killed
// with SIGKILL; once their visibility lapses (2 s, no one extends it any more) a new consumer
// receives them again (receive count 2) and gets every published id.
TEST_F(SqsFaultTest, SQS9_AWorkerKilledHoldingAFullPrefetchLosesNothing) {
#ifndef BABELQUEUE_CLI
  GTEST_SKIP() << "the babelqueue tool is not built (BABELQUEUE_BUILD_TOOLS=OFF)";
#else
  constexpr int kMessages = 30;
  constexpr int kPrefetch = 10;  // the transport's default
  create_queue({{"VisibilityTimeout", "2"}});
  std::set<std::string> published;
  auto t = transport();
  ASSERT_TRUE(t->publish_batch(queue(), envelopes(kMessages, published)).ok());

  // `exec sleep` keeps the handler busy for good; the worker leads its own process group, so
  // the SIGKILL ends the shell too.
  cli::test::CliProcess worker(
      {"work", "--url", emulator().url(), "--queue", queue(), "--exec", "exec sleep 600"}, true);
  ASSERT_TRUE(eventually([&] { return raw().not_visible(queue()) == kPrefetch; }))
      << "the worker never held " << kPrefetch << " messages; its stderr:\n"
      << worker.err();
  EXPECT_EQ(raw().visible(queue()), kMessages - kPrefetch);
  worker.kill_group();

  std::set<std::string> received;
  int redelivered = 0;
  while (received.size() < published.size()) {
    const auto m = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(m.has_value()) << "nothing more within kWithin; got " << received.size();
    received.insert(std::string(decode(m->body).meta().id));
    if (m->delivery_count > 1) ++redelivered;
    ASSERT_TRUE(t->ack(*m).ok());
  }
  EXPECT_EQ(received, published);
  EXPECT_EQ(redelivered, kPrefetch) << "the held messages are the ones received before";
  ASSERT_TRUE(t->flush().ok());
  EXPECT_TRUE(raw().empty(queue()));
#endif
}

// D-3, SQS-17: the emulator killed with SIGKILL mid-run and restarted. While it is down both the
// publisher and the consumer see transient errors and go on; afterwards publishing resumes and
// the consumer handles every published id (ElasticMQ keeps queues and messages across a
// restart, persistent()). Were the emulator to keep nothing, the ids published before the kill
// would be gone with it: then only those published after the restart must arrive, and the test
// re-creates the queue while holding the clients' requests (a request in that gap would find no
// queue, a ConfigError by SQS-5).
TEST_F(SqsFaultTest, D3_EmulatorRestartedMidRunLosesNothingPublishedAfterIt) {
  SqsEmulator own;
  RawQueues queues(own);
  const Attributes attributes{{"VisibilityTimeout", "2"}};
  queues.create(queue(), attributes);
  Options o = own.options();
  auto publisher_seam = std::make_shared<SeamClient>();
  auto consumer_seam = std::make_shared<SeamClient>();
  o.client = publisher_seam;
  ContinuousPublisher producer(std::make_shared<SqsTransport>(o), queue(), kUrn);
  o.client = consumer_seam;
  HandledIds handled;
  std::atomic<int> consume_errors{0};
  AppOptions app_options;
  app_options.on_consume_error = [&](const Error&, std::chrono::milliseconds) { ++consume_errors; };
  Worker worker(std::make_shared<SqsTransport>(o), queue(), app_options,
                [&](Context&, const Envelope& env) {
                  handled.add(std::string(env.meta().id));
                  return Status();
                });
  ASSERT_TRUE(eventually([&] { return handled.distinct() >= 30; }, kRecover))
      << handled.distinct() << " handled; emulator log:\n"
      << own.log_tail();

  const std::size_t failures_before = producer.failures();
  own.kill();
  EXPECT_TRUE(eventually([&] { return producer.failures() > failures_before; }, kRecover))
      << "publishing saw no error while the emulator was down";
  EXPECT_TRUE(eventually([&] { return consume_errors.load() > 0; }, kRecover))
      << "consuming saw no error while the emulator was down";
  if (own.persistent()) {
    own.restart();
  } else {
    publisher_seam->hold();
    consumer_seam->hold();
    own.restart();
    queues.create(queue(), attributes);
  }
  const std::set<std::string> before = producer.confirmed_ids();
  publisher_seam->open();
  consumer_seam->open();

  EXPECT_TRUE(producer.wait_for_more(30, kRecover)) << "publishing did not resume; emulator log:\n"
                                                    << own.log_tail();
  const std::set<std::string> published = producer.stop();
  std::set<std::string> must_arrive;
  for (const std::string& id : published) {
    if (own.persistent() || !before.contains(id)) must_arrive.insert(id);
  }
  EXPECT_FALSE(must_arrive.empty());
  EXPECT_TRUE(eventually([&] { return handled.missing(must_arrive).empty(); }, kRecover))
      << describe_missing(handled.missing(must_arrive)) << "; emulator log:\n"
      << own.log_tail();
  const Status consumed = worker.stop();
  EXPECT_TRUE(consumed.ok()) << "the consumer gave up: " << consumed.error().what();
  EXPECT_EQ(producer.permanent_failures(), std::vector<std::string>{});
}

// SQS-17, D-3: every 3rd request of the publisher and every 4th of the consumer (receives,
// deletes, visibility changes alike) is answered with ThrottlingException or HTTP 500: publishes
// that returned ok are all handled (a delete that failed brings its message back: handled more
// than once is allowed) and the queue ends empty; no error was taken for permanent.
TEST_F(SqsFaultTest, SQS17_ThrottlingAnd500sLoseNothing) {
  create_queue({{"VisibilityTimeout", "2"}});
  auto publisher_seam = std::make_shared<SeamClient>();
  publisher_seam->set_fault(every_kth_fails(3));
  auto consumer_seam = std::make_shared<SeamClient>();
  consumer_seam->set_fault(every_kth_fails(4));
  HandledIds handled;
  AppOptions app_options;
  std::atomic<int> consume_errors{0};
  app_options.on_consume_error = [&](const Error& e, std::chrono::milliseconds) {
    EXPECT_TRUE(e.is_transient()) << e.what();
    ++consume_errors;
  };
  app_options.logger = [](LogLevel, std::string_view) {};  // one warning per injected pop error
  Worker worker(transport(options(consumer_seam)), queue(), app_options,
                [&](Context&, const Envelope& env) {
                  handled.add(std::string(env.meta().id));
                  return Status();
                });
  std::set<std::string> published;
  {
    ContinuousPublisher producer(transport(options(publisher_seam)), queue(), kUrn);
    EXPECT_TRUE(producer.wait_for_more(200, kRecover));
    published = producer.stop();
    EXPECT_EQ(producer.permanent_failures(), std::vector<std::string>{});
  }
  EXPECT_TRUE(eventually([&] { return handled.missing(published).empty(); }, kRecover))
      << describe_missing(handled.missing(published));
  EXPECT_TRUE(eventually([&] { return raw().empty(queue()); }, kRecover))
      << raw().visible(queue()) << " visible, " << raw().not_visible(queue()) << " in flight";
  const Status consumed = worker.stop();
  EXPECT_TRUE(consumed.ok()) << consumed.error().what();
  EXPECT_GT(publisher_seam->injected(), 0U);
  EXPECT_GT(consumer_seam->injected(), 0U);
  std::cout << "[ sqs ] injected " << publisher_seam->injected() << " faults into "
            << publisher_seam->total() << " publisher requests and " << consumer_seam->injected()
            << " into " << consumer_seam->total() << " consumer requests ("
            << describe_counts(consumer_seam->counts()) << "); " << consume_errors.load()
            << " consume errors ridden out\n";
}

// A seam that turns the answer of the first SendMessageBatch's entry `index` into a failure
// (`sender_fault` true: permanent) after the emulator accepted it.
std::shared_ptr<SeamClient> failing_batch_entry(std::size_t index, bool sender_fault) {
  auto seam = std::make_shared<SeamClient>();
  auto done = std::make_shared<std::atomic<bool>>(false);
  seam->set_rewrite([=](const HttpRequest& request, HttpResponse& response) {
    if (request.action != "SendMessageBatch" || response.status != 200 || done->exchange(true))
      return;
    const std::string id =
        Json::parse(request.body).find("Entries")->as_array().at(index).find("Id")->as_string();
    Json body = Json::parse(response.body);
    JsonArray& successful = body["Successful"].as_array();
    std::erase_if(successful, [&](const Json& e) { return e.find("Id")->as_string() == id; });
    body["Failed"].push_back(
        Json::object({{"Id", id},
                      {"SenderFault", sender_fault},
                      {"Code", sender_fault ? "InvalidParameterValue" : "InternalError"},
                      {"Message", "injected entry failure"}}));
    response.body = body.dump();
  });
  return seam;
}

// The bodies received from `queue` until `n` came, with how often each came.
std::map<std::string, int> bodies_received(RawQueues& raw, const std::string& queue,
                                           std::size_t n) {
  std::map<std::string, int> got;
  for (const Json& m : raw.receive_at_least(queue, n))
    ++got[m.find("Body")->as_string()];
  return got;
}

// D-11: an entry of a SendMessageBatch that fails transiently (InternalError, SenderFault
// false) is resent: the call succeeds and the entry's body is in the queue (twice here: the
// seam failed it after the emulator took it), every other body once.
TEST_F(SqsFaultTest, D11_ABatchEntryThatFailsTransientlyIsResent) {
  create_queue();
  auto seam = failing_batch_entry(3, false);
  auto t = transport(options(seam));
  std::set<std::string> ids;
  const std::vector<std::string> bodies = envelopes(10, ids);
  const Status st = t->publish_batch(queue(), bodies);
  ASSERT_TRUE(st.ok()) << st.error().what();
  const auto got = bodies_received(raw(), queue(), bodies.size() + 1);
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    SCOPED_TRACE("entry " + std::to_string(i));
    ASSERT_TRUE(got.contains(bodies[i])) << "lost";
    EXPECT_EQ(got.at(bodies[i]), i == 3 ? 2 : 1);
  }
  EXPECT_EQ(got.size(), bodies.size());
}

// D-11: an entry that fails permanently (SenderFault true) makes publish_batch fail, saying so:
// nothing is dropped silently.
TEST_F(SqsFaultTest, D11_ABatchEntryThatFailsPermanentlyIsReported) {
  create_queue();
  auto seam = failing_batch_entry(7, true);
  auto t = transport(options(seam));
  std::set<std::string> ids;
  const Status st = t->publish_batch(queue(), envelopes(10, ids));
  ASSERT_FALSE(st.ok()) << "a failed entry was dropped silently";
  EXPECT_FALSE(st.error().is_transient()) << st.error().what();
  EXPECT_NE(std::string(st.error().what()).find("InvalidParameterValue"), std::string::npos)
      << st.error().what();
}

// D-11: a handler that runs 5 s on a queue whose visibility timeout is 2 s: the transport
// extends the visibility while it runs (ChangeMessageVisibility), so the second worker never
// receives the message again: handled once, receive count 1, deleted after.
TEST_F(SqsFaultTest, D11_AHandlerSlowerThanTheVisibilityTimeoutIsExtendedNotRedelivered) {
  create_queue({{"VisibilityTimeout", "2"}});
  auto seam = std::make_shared<SeamClient>();
  auto t = transport(options(seam));
  ASSERT_TRUE(t->publish(queue(), encode(make(kUrn))).ok());
  std::mutex mu;
  std::vector<std::int64_t> counts;
  std::atomic<bool> finished{false};
  {
    Worker worker(t, queue(), {.concurrency = 2}, [&](Context& ctx, const Envelope&) {
      {
        std::lock_guard lock(mu);
        counts.push_back(ctx.message().delivery_count);
      }
      std::this_thread::sleep_for(5s);  // the scenario: two and a half visibility windows
      finished = true;
      return Status();
    });
    ASSERT_TRUE(eventually([&] { return finished.load(); }, kWithin));
    EXPECT_TRUE(eventually([&] { return raw().empty(queue()); })) << "the message was not deleted";
    EXPECT_TRUE(worker.stop().ok());
  }
  std::lock_guard lock(mu);
  EXPECT_EQ(counts, std::vector<std::int64_t>{1}) << "redelivered behind the handler's back";
  EXPECT_GE(seam->count("ChangeMessageVisibility") + seam->count("ChangeMessageVisibilityBatch"),
            1U)
      << describe_counts(seam->counts());
}

}  // namespace
}  // namespace babelqueue::sqs::test
