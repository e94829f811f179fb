// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/in_memory_transport.hpp>
#include <babelqueue/redrive.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using babelqueue::Envelope;
using babelqueue::ErrorCode;
using babelqueue::Headers;
using babelqueue::InMemoryTransport;
using babelqueue::ReceivedMessage;
using babelqueue::RedriveItem;
using babelqueue::RedriveOptions;
using babelqueue::RedriveResult;
using babelqueue::Result;
using babelqueue::Status;
using babelqueue::Transport;
using babelqueue::TransportError;

constexpr std::chrono::milliseconds kNoWait{0};

// Options that never block on the empty queue at the end of the drain.
RedriveOptions quick(RedriveOptions options = {}) {
  options.timeout = kNoWait;
  return options;
}

// A dead-lettered envelope (reason failed, attempts 3) put on `dlq`; returns its exact bytes.
std::string dead_lettered(InMemoryTransport& t, std::string_view dlq, std::string_view urn,
                          std::string_view original_queue,
                          babelqueue::Json data = babelqueue::Json::object()) {
  const Envelope env = babelqueue::make(urn, std::move(data), {.queue = original_queue});
  const Envelope dl = babelqueue::annotate(env, babelqueue::reason::failed, original_queue, 3,
                                           babelqueue::FailureCause{"boom", "std::runtime_error"});
  std::string body = babelqueue::encode(dl);
  EXPECT_TRUE(t.publish(dlq, body).ok());
  return body;
}

Envelope decoded(const std::string& body) {
  return babelqueue::decode(body);
}

void expect_invariant(const RedriveResult& res) {
  EXPECT_EQ(res.redriven + res.skipped, res.items.size());
}

// ---- Test doubles (capabilities are found with dynamic_cast, so each set is its own class) ----

// Delegates the core contract to an InMemoryTransport, with fault injection and a call log.
// Capabilities: none (not a HeaderPublisher).
class Plain : public Transport {
 public:
  explicit Plain(InMemoryTransport& base) : base_(base) {}

  std::set<std::string, std::less<>> fail_writes_to;  // every write to these queues fails
  std::optional<std::size_t> fail_pop_number;         // this 0-based pop call fails
  bool fail_acks = false;
  std::vector<std::string> acked;   // bodies, in ack order
  std::vector<std::string> writes;  // target queue of every write attempt
  std::size_t pops = 0;

  Status publish(std::string_view queue, std::string body) override {
    if (Status st = write(queue); !st.ok()) return st;
    return base_.publish(queue, std::move(body));
  }
  Result<std::optional<ReceivedMessage>> pop(std::string_view queue,
                                             std::chrono::milliseconds timeout) override {
    const std::size_t number = pops++;
    if (fail_pop_number && number == *fail_pop_number) return TransportError("pop failed");
    return base_.pop(queue, timeout);
  }
  Status ack(const ReceivedMessage& msg) override {
    acked.push_back(msg.body);
    if (fail_acks) return TransportError("ack failed");
    return base_.ack(msg);
  }
  void close() override { base_.close(); }

 protected:
  Status write(std::string_view queue) {
    writes.emplace_back(queue);
    if (fail_writes_to.count(queue) != 0) return TransportError("write refused");
    return {};
  }
  InMemoryTransport& base_;
};

// Plain + HeaderPublisher + Rewinder (records rewinds).
class WithHeaders : public Plain, public babelqueue::HeaderPublisher, public babelqueue::Rewinder {
 public:
  using Plain::Plain;
  std::vector<std::string> rewound;  // bodies

  Status publish_with_headers(std::string_view queue, std::string body,
                              const Headers& headers) override {
    if (Status st = write(queue); !st.ok()) return st;
    return base_.publish_with_headers(queue, std::move(body), headers);
  }
  Status rewind(const ReceivedMessage& msg) override {
    rewound.push_back(msg.body);
    return {};
  }
};

// Plain + KeyedRepublisher: keys ride beside the in-memory entries (queue -> keys in order).
class Keyed : public Plain, public babelqueue::KeyedRepublisher {
 public:
  using Plain::Plain;
  std::map<std::string, std::vector<std::optional<std::string>>, std::less<>> keys;

  Status republish(std::string_view queue, std::string body,
                   const ReceivedMessage& source) override {
    if (Status st = write(queue); !st.ok()) return st;
    keys[std::string(queue)].push_back(source.key);
    return base_.publish(queue, std::move(body));
  }
};

// Plain + Restorer (records restores, writes nothing itself).
class Restoring : public Plain, public babelqueue::Restorer {
 public:
  using Plain::Plain;
  std::vector<ReceivedMessage> restored;

  Status restore(const ReceivedMessage& source) override {
    restored.push_back(source);
    return {};
  }
};

// ---- HLP-24 "Tests (Go)" ----

TEST(Redrive, HLP24_ToSource) {
  InMemoryTransport t;
  const std::string body = dead_lettered(t, "orders.dlq", "urn:babel:orders:created", "orders",
                                         babelqueue::Json::object({{"order_id", 1}}));
  const Envelope orig = decoded(body);

  const RedriveResult res = babelqueue::redrive(t, "orders.dlq", quick());
  ASSERT_TRUE(res.ok()) << res.status.error().what();
  EXPECT_EQ(res.redriven, 1U);
  EXPECT_EQ(res.skipped, 0U);
  expect_invariant(res);
  ASSERT_EQ(res.items.size(), 1U);
  const RedriveItem want{std::string(orig.meta().id),
                         std::string(orig.trace_id()),
                         "urn:babel:orders:created",
                         "failed",
                         "orders.dlq",
                         "orders",
                         true,
                         false};
  EXPECT_EQ(res.items[0], want);

  const std::vector<babelqueue::InMemoryTransport::StoredEntry> out = t.peek_entries("orders");
  ASSERT_EQ(out.size(), 1U);
  EXPECT_TRUE(out[0].headers.empty());
  const Envelope got = decoded(out[0].body);
  EXPECT_FALSE(got.dead_letter().has_value());
  EXPECT_EQ(got.attempts(), 0);
  EXPECT_EQ(got.trace_id(), orig.trace_id());
  EXPECT_EQ(got.meta().id, orig.meta().id);
  EXPECT_EQ(got.meta().created_at, orig.meta().created_at);
  EXPECT_EQ(got.urn(), "urn:babel:orders:created");
  EXPECT_EQ(got.data(), babelqueue::Json::object({{"order_id", 1}}));
  EXPECT_EQ(t.size("orders.dlq"), 0U);
}

TEST(Redrive, HLP24_ToSandbox) {
  InMemoryTransport t;
  dead_lettered(t, "orders.dlq", "urn:babel:orders:created", "orders");

  const RedriveResult res = babelqueue::redrive(t, "orders.dlq", quick({.to_queue = "sandbox"}));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.redriven, 1U);
  ASSERT_EQ(res.items.size(), 1U);
  EXPECT_EQ(res.items[0].to, "sandbox");
  EXPECT_EQ(t.size("orders"), 0U) << "a sandbox replay must not touch the source queue";
  EXPECT_EQ(t.size("sandbox"), 1U);
  EXPECT_EQ(t.size("orders.dlq"), 0U);
}

TEST(Redrive, HLP24_DryRunRestoresAndReportsThePlan) {
  InMemoryTransport t;
  const std::string body = dead_lettered(t, "orders.dlq", "urn:babel:orders:created", "orders");

  const RedriveResult res = babelqueue::redrive(t, "orders.dlq", quick({.dry_run = true}));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.redriven, 0U);
  EXPECT_EQ(res.skipped, 1U);
  expect_invariant(res);
  ASSERT_EQ(res.items.size(), 1U);
  EXPECT_EQ(res.items[0].to, "orders");
  EXPECT_FALSE(res.items[0].redriven);
  EXPECT_EQ(res.items[0].reason, "failed");
  EXPECT_EQ(t.size("orders"), 0U) << "a dry run touched the source queue";
  EXPECT_EQ(t.peek_all("orders.dlq"), std::vector<std::string>{body}) << "dry run altered the DLQ";
}

TEST(Redrive, HLP24_SelectRedrivesOnlyTheChosenAndRestoresTheRest) {
  InMemoryTransport t;
  dead_lettered(t, "dlq", "urn:babel:orders:created", "orders");
  const std::string welcome = dead_lettered(t, "dlq", "urn:babel:emails:welcome", "emails");

  std::vector<std::string> offered;
  const RedriveResult res = babelqueue::redrive(t, "dlq", quick({.select = [&](const Envelope& e) {
                                                  offered.emplace_back(e.urn());
                                                  // select sees the dead_letter block
                                                  EXPECT_TRUE(e.dead_letter().has_value());
                                                  return e.urn() == "urn:babel:orders:created";
                                                }}));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.redriven, 1U);
  EXPECT_EQ(res.skipped, 1U);
  expect_invariant(res);
  EXPECT_EQ(offered,
            (std::vector<std::string>{"urn:babel:orders:created", "urn:babel:emails:welcome"}));
  ASSERT_EQ(res.items.size(), 2U);
  EXPECT_TRUE(res.items[0].redriven);
  EXPECT_FALSE(res.items[1].redriven);
  EXPECT_EQ(res.items[1].to, "") << "an unselected message has no target";
  EXPECT_EQ(t.size("orders"), 1U);
  EXPECT_EQ(t.size("emails"), 0U) << "an unselected message was redriven";
  EXPECT_EQ(t.peek_all("dlq"), std::vector<std::string>{welcome});
}

TEST(Redrive, HLP24_MaxCapsHowManyArePopped) {
  InMemoryTransport t;
  std::vector<std::string> bodies;
  for (int i = 0; i < 3; ++i) {
    bodies.push_back(dead_lettered(t, "dlq", "urn:babel:orders:created", "orders"));
  }
  const RedriveResult res = babelqueue::redrive(t, "dlq", quick({.max = 2}));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.redriven, 2U);
  EXPECT_EQ(res.items.size(), 2U);
  EXPECT_EQ(t.size("orders"), 2U);
  EXPECT_EQ(t.peek_all("dlq"), std::vector<std::string>{bodies[2]})
      << "max was not respected: the third message must stay untouched";
}

TEST(Redrive, HLP24_PublishFailureRestoresTheRestAndReturnsTheError) {
  InMemoryTransport base;
  const std::string first = dead_lettered(base, "dlq", "urn:babel:emails:welcome", "emails");
  const std::string second = dead_lettered(base, "dlq", "urn:babel:orders:created", "orders");
  const std::string third = dead_lettered(base, "dlq", "urn:babel:emails:welcome", "emails");
  Plain t(base);
  t.fail_writes_to = {"orders"};

  const RedriveResult res = babelqueue::redrive(t, "dlq", quick());
  ASSERT_FALSE(res.ok()) << "the publish error must surface";
  EXPECT_EQ(res.status.error().code(), ErrorCode::Transport);
  EXPECT_NE(std::string(res.status.error().what()).find("write refused"), std::string::npos);
  EXPECT_EQ(res.redriven, 1U);
  EXPECT_EQ(res.skipped, 2U);
  expect_invariant(res);
  ASSERT_EQ(res.items.size(), 3U);
  EXPECT_TRUE(res.items[0].redriven);
  EXPECT_FALSE(res.items[1].redriven);
  EXPECT_EQ(res.items[1].to, "orders");
  EXPECT_FALSE(res.items[2].redriven);
  EXPECT_EQ(res.items[2].to, "") << "the rest of the batch is restored, not processed";

  EXPECT_EQ(base.size("orders"), 0U);
  EXPECT_EQ(base.size("emails"), 1U) << "only the message before the failure was redriven";
  EXPECT_EQ(base.peek_all("dlq"), (std::vector<std::string>{second, third}));
  EXPECT_EQ(t.acked, (std::vector<std::string>{first, second, third}));
}

TEST(Redrive, HLP24_NoDeadLetterFallsBackToMetaQueue) {
  InMemoryTransport t;
  // A plain (never dead-lettered) envelope, and one whose dead_letter has no original_queue.
  ASSERT_TRUE(t.publish("dlq", babelqueue::encode(babelqueue::make("urn:babel:orders:created",
                                                                   babelqueue::Json::object(),
                                                                   {.queue = "orders"})))
                  .ok());
  const Envelope env =
      babelqueue::make("urn:babel:orders:created", babelqueue::Json::object(), {.queue = "orders"});
  ASSERT_TRUE(
      t.publish("dlq", babelqueue::encode(babelqueue::annotate(env, "failed", "", 3))).ok());

  const RedriveResult res = babelqueue::redrive(t, "dlq", quick());
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.redriven, 2U);
  ASSERT_EQ(res.items.size(), 2U);
  EXPECT_EQ(res.items[0].to, "orders");
  EXPECT_EQ(res.items[1].to, "orders");
  EXPECT_EQ(t.size("orders"), 2U) << "a message without original_queue goes to its meta.queue";
}

TEST(Redrive, HLP24_UndecodableRestoredByteIdentical) {
  InMemoryTransport base;
  const std::string not_json = "not-json{{{";
  const std::string bad_utf8 = std::string("{\"job\":\"\xFF\xFE\"}");
  ASSERT_TRUE(base.publish("dlq", not_json).ok());
  ASSERT_TRUE(base.publish_with_headers("dlq", bad_utf8, {{"traceparent", "00-abc-def-01"}}).ok());
  WithHeaders t(base);

  const RedriveResult res = babelqueue::redrive(t, "dlq", quick());
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.redriven, 0U);
  EXPECT_EQ(res.skipped, 2U);
  expect_invariant(res);
  ASSERT_EQ(res.items.size(), 2U);
  RedriveItem only_from;
  only_from.from = "dlq";
  EXPECT_EQ(res.items[0], only_from);
  EXPECT_EQ(res.items[1], only_from);

  const auto entries = base.peek_entries("dlq");
  ASSERT_EQ(entries.size(), 2U);
  EXPECT_EQ(entries[0].body, not_json);
  EXPECT_TRUE(entries[0].headers.empty());
  EXPECT_EQ(entries[1].body, bad_utf8);
  EXPECT_EQ(entries[1].headers, (Headers{{"traceparent", "00-abc-def-01"}}))
      << "a restore keeps the original headers";
  EXPECT_TRUE(t.rewound.empty());
}

TEST(Redrive, HLP25_BypassStampsHeaderAndTheConsumerSkipsEffects) {
  auto t = std::make_shared<InMemoryTransport>();
  dead_lettered(*t, "orders.dlq", "urn:babel:orders:created", "orders",
                babelqueue::Json::object({{"order_id", 1}}));

  const RedriveResult res = babelqueue::redrive(*t, "orders.dlq", quick({.bypass = true}));
  ASSERT_TRUE(res.ok());
  ASSERT_EQ(res.redriven, 1U);
  ASSERT_EQ(res.items.size(), 1U);
  EXPECT_TRUE(res.items[0].bypassed);
  const auto entries = t->peek_entries("orders");
  ASSERT_EQ(entries.size(), 1U);
  EXPECT_EQ(entries[0].headers, (Headers{{"bq-replay-bypass", "1"}}));

  babelqueue::App app(t, {.default_queue = "orders", .poll_timeout = kNoWait});
  int handled = 0;
  int emailed = 0;
  bool replay = false;
  app.handle("urn:babel:orders:created", [&](babelqueue::Context& ctx, const Envelope&) -> Status {
    ++handled;
    replay = ctx.is_replay();
    return babelqueue::bypass_external_effects(ctx, [&]() -> Status {
      ++emailed;
      return {};
    });
  });
  const babelqueue::DrainResult drained = app.drain("orders");
  EXPECT_TRUE(drained.status.ok());
  EXPECT_EQ(drained.count, 1U);
  EXPECT_EQ(handled, 1);
  EXPECT_TRUE(replay) << "the handler must see the delivery as a replay";
  EXPECT_EQ(emailed, 0) << "the external effect must be skipped on a bypassed replay";
  EXPECT_EQ(t->size("orders"), 0U) << "a bypassed replay is acked";

  // Control: the same message redriven without bypass runs the effect.
  dead_lettered(*t, "orders.dlq", "urn:babel:orders:created", "orders");
  const RedriveResult plain = babelqueue::redrive(*t, "orders.dlq", quick());
  ASSERT_EQ(plain.redriven, 1U);
  EXPECT_FALSE(plain.items[0].bypassed);
  EXPECT_EQ(app.drain("orders").count, 1U);
  EXPECT_EQ(handled, 2);
  EXPECT_FALSE(replay);
  EXPECT_EQ(emailed, 1);
}

TEST(Redrive, HLP25_BypassWithoutHeaderSupportIsRedrivenButNotBypassed) {
  InMemoryTransport base;
  dead_lettered(base, "dlq", "urn:babel:orders:created", "orders");
  Plain t(base);  // deliberately not a HeaderPublisher

  const RedriveResult res = babelqueue::redrive(t, "dlq", quick({.bypass = true}));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.redriven, 1U);
  ASSERT_EQ(res.items.size(), 1U);
  EXPECT_TRUE(res.items[0].redriven);
  EXPECT_FALSE(res.items[0].bypassed) << "bypass is a no-op without HeaderPublisher (RT-51)";
  const auto entries = base.peek_entries("orders");
  ASSERT_EQ(entries.size(), 1U);
  EXPECT_TRUE(entries[0].headers.empty());
}

// EX-5 (01-envelope): unknown top-level and meta members plus forbidden `timestamp` / `meta.ts`.
constexpr std::string_view kEx5Input =
    R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",)"
    R"("data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567",)"
    R"("queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000,)"
    R"("vendor_flag":true,"vendor_ctx":{"region":"eu-west-1","hops":[1,2]},"ts":5},"attempts":0,)"
    R"("extra_top":{"k":"<v&>"},"timestamp":1})";
// EX-5's canonical re-emit: what a redrive must publish (attempts is 0 again).
constexpr std::string_view kEx5Output =
    R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",)"
    R"("data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567",)"
    R"("queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000,)"
    R"("vendor_ctx":{"region":"eu-west-1","hops":[1,2]},"vendor_flag":true},"attempts":0,)"
    R"("extra_top":{"k":"<v&>"}})";

TEST(Redrive, HLP24_RedriveKeepsUnknownMembers) {
  InMemoryTransport t;
  // As Go: decode EX-5, annotate (attempts 3), encode, dead-letter.
  const Envelope annotated = babelqueue::annotate(babelqueue::decode(kEx5Input), "failed", "orders",
                                                  3, babelqueue::FailureCause{"boom", "E"});
  ASSERT_TRUE(t.publish("orders.dlq", babelqueue::encode(annotated)).ok());
  // And the raw EX-5 bytes (forbidden members still present) with a dead_letter block spliced in.
  std::string raw(kEx5Input);
  raw.insert(raw.size() - 1,
             R"(,"dead_letter":{"reason":"failed","error":"boom","exception":"E",)"
             R"("failed_at":1749132730000,"original_queue":"orders","attempts":3,"lang":"go"})");
  raw.replace(raw.find(R"("attempts":0)"), 12, R"("attempts":3)");
  ASSERT_TRUE(babelqueue::decode(raw).dead_letter().has_value());
  ASSERT_TRUE(t.publish("orders.dlq", raw).ok());

  const RedriveResult res = babelqueue::redrive(t, "orders.dlq", quick());
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.redriven, 2U);
  const std::vector<std::string> out = t.peek_all("orders");
  ASSERT_EQ(out.size(), 2U);
  for (const std::string& body : out) {
    EXPECT_EQ(body, kEx5Output) << "extra_top and meta extras kept, no timestamp/ts, attempts 0";
    const Envelope env = decoded(body);
    EXPECT_EQ(env.attempts(), 0);
    EXPECT_FALSE(env.dead_letter().has_value());
  }
}

// ---- HLP-20: C++ decisions and failure handling ----

TEST(Redrive, HLP20_PoisonRecordsAndIdentityLessEntriesAreRestoredUntouched) {
  InMemoryTransport t;
  // An ADR-0035 `raw` wrapper: decodes as an identity-less envelope with reason poison.
  const std::string wrapped =
      babelqueue::poison_record("not json", "invalid JSON at offset 0", "orders", 1749132730000);
  ASSERT_TRUE(babelqueue::try_decode(wrapped).has_value()) << "precondition: it decodes";
  // A spliced record that decodes, with a URN (reason poison wins).
  const std::string spliced =
      babelqueue::poison_record(R"({"job":"urn:babel:orders:created","meta":{"queue":"orders"}})",
                                "transport-flagged", "orders", 1749132730000);
  ASSERT_EQ(babelqueue::decode(spliced).urn(), "urn:babel:orders:created");
  // Identity-less envelopes without a dead_letter block.
  const std::string empty = "{}";
  const std::string no_urn = R"({"trace_id":"t","data":{},"meta":{"queue":"orders"}})";
  for (const std::string* b : {&wrapped, &spliced, &empty, &no_urn}) {
    ASSERT_TRUE(t.publish("dlq", *b).ok());
  }

  const RedriveResult res = babelqueue::redrive(t, "dlq", quick({.to_queue = "sandbox"}));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.redriven, 0U);
  EXPECT_EQ(res.skipped, 4U);
  expect_invariant(res);
  ASSERT_EQ(res.items.size(), 4U);
  EXPECT_EQ(res.items[0].reason, "poison");
  EXPECT_EQ(res.items[0].urn, "");
  EXPECT_EQ(res.items[1].reason, "poison");
  EXPECT_EQ(res.items[1].urn, "urn:babel:orders:created");
  EXPECT_EQ(res.items[3].trace_id, "t");
  for (const RedriveItem& item : res.items) {
    EXPECT_EQ(item.to, "");
    EXPECT_FALSE(item.redriven);
  }
  EXPECT_EQ(t.size("sandbox"), 0U);
  EXPECT_EQ(t.size("orders"), 0U);
  EXPECT_EQ(t.peek_all("dlq"), (std::vector<std::string>{wrapped, spliced, empty, no_urn}));
}

TEST(Redrive, HLP20_NoTargetIsRestored) {
  InMemoryTransport t;
  const std::string body = R"({"job":"urn:babel:orders:created","trace_id":"t","data":{},)"
                           R"("meta":{"id":"m1","schema_version":1},"attempts":2})";
  ASSERT_TRUE(t.publish("dlq", body).ok());

  const RedriveResult res = babelqueue::redrive(t, "dlq", quick());
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.redriven, 0U);
  EXPECT_EQ(res.skipped, 1U);
  ASSERT_EQ(res.items.size(), 1U);
  EXPECT_EQ(res.items[0].message_id, "m1");
  EXPECT_EQ(res.items[0].to, "");
  EXPECT_EQ(t.peek_all("dlq"), std::vector<std::string>{body});

  // With an explicit target it goes (a blank to_queue does not count).
  const RedriveResult blank = babelqueue::redrive(t, "dlq", quick({.to_queue = " \t"}));
  EXPECT_EQ(blank.redriven, 0U);
  const RedriveResult to = babelqueue::redrive(t, "dlq", quick({.to_queue = "sandbox"}));
  EXPECT_EQ(to.redriven, 1U);
  ASSERT_EQ(t.size("sandbox"), 1U);
  EXPECT_EQ(decoded(t.peek_all("sandbox")[0]).attempts(), 0);
}

TEST(Redrive, HLP20_RestoreFailureRewindsAndStops) {
  InMemoryTransport base;
  ASSERT_TRUE(base.publish("dlq", "not json").ok());
  dead_lettered(base, "dlq", "urn:babel:orders:created", "orders");
  dead_lettered(base, "dlq", "urn:babel:orders:created", "orders");
  WithHeaders t(base);
  t.fail_writes_to = {"dlq"};

  const RedriveResult res = babelqueue::redrive(t, "dlq", quick());
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status.error().code(), ErrorCode::Transport);
  EXPECT_NE(std::string(res.status.error().what()).find("restore"), std::string::npos);
  EXPECT_EQ(t.rewound, std::vector<std::string>{"not json"}) << "the failed restore is rewound";
  EXPECT_TRUE(t.acked.empty()) << "nothing may be acked after a failed restore";
  EXPECT_EQ(res.redriven, 0U);
  EXPECT_EQ(res.skipped, 0U);
  EXPECT_TRUE(res.items.empty());
  EXPECT_EQ(t.writes, std::vector<std::string>{"dlq"}) << "the run stops at the failed write";
  EXPECT_EQ(base.size("orders"), 0U);
}

TEST(Redrive, HLP20_PublishThenRestoreFailureReportsBoth) {
  InMemoryTransport base;
  const std::string body = dead_lettered(base, "dlq", "urn:babel:orders:created", "orders");
  WithHeaders t(base);
  t.fail_writes_to = {"orders", "dlq"};

  const RedriveResult res = babelqueue::redrive(t, "dlq", quick());
  ASSERT_FALSE(res.ok());
  const std::string what = res.status.error().what();
  EXPECT_NE(what.find("restore to dlq"), std::string::npos) << what;
  EXPECT_NE(what.find("publish to orders"), std::string::npos) << what;
  EXPECT_EQ(t.rewound, std::vector<std::string>{body});
  EXPECT_TRUE(t.acked.empty());
  EXPECT_TRUE(res.items.empty());
}

TEST(Redrive, HLP20_PopFailureRestoresTheDrainedBatch) {
  InMemoryTransport base;
  const std::string a = dead_lettered(base, "dlq", "urn:babel:orders:created", "orders");
  const std::string b = dead_lettered(base, "dlq", "urn:babel:orders:created", "orders");
  const std::string c = dead_lettered(base, "dlq", "urn:babel:orders:created", "orders");
  Plain t(base);
  t.fail_pop_number = 2;

  const RedriveResult res = babelqueue::redrive(t, "dlq", quick());
  ASSERT_FALSE(res.ok());
  EXPECT_NE(std::string(res.status.error().what()).find("pop failed"), std::string::npos);
  EXPECT_TRUE(res.status.error().is_transient());
  EXPECT_EQ(res.redriven, 0U);
  EXPECT_EQ(res.skipped, 2U);
  expect_invariant(res);
  EXPECT_EQ(base.size("orders"), 0U);
  EXPECT_EQ(base.peek_all("dlq"), (std::vector<std::string>{c, a, b}));
}

TEST(Redrive, HLP20_ThrowingSelectStopsAndRestores) {
  InMemoryTransport t;
  const std::string a = dead_lettered(t, "dlq", "urn:babel:orders:created", "orders");
  const std::string b = dead_lettered(t, "dlq", "urn:babel:orders:created", "orders");

  const RedriveResult res = babelqueue::redrive(
      t, "dlq",
      quick({.select = [](const Envelope&) -> bool { throw std::runtime_error("bad filter"); }}));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status.error().code(), ErrorCode::Usage);
  EXPECT_NE(std::string(res.status.error().what()).find("bad filter"), std::string::npos);
  EXPECT_EQ(res.skipped, 2U);
  EXPECT_EQ(t.size("orders"), 0U);
  EXPECT_EQ(t.peek_all("dlq"), (std::vector<std::string>{a, b}));
}

TEST(Redrive, HLP20_KeyedTransportKeepsTheRecordKey) {
  InMemoryTransport base;
  dead_lettered(base, "dlq", "urn:babel:orders:created", "orders");
  const std::string welcome = dead_lettered(base, "dlq", "urn:babel:emails:welcome", "emails");
  // The in-memory transport has no keys: stamp them on the way out.
  class KeyStamper final : public Keyed {
   public:
    using Keyed::Keyed;
    std::vector<std::optional<std::string>> next_keys{std::string("k1"), std::string()};
    Result<std::optional<ReceivedMessage>> pop(std::string_view queue,
                                               std::chrono::milliseconds timeout) override {
      Result<std::optional<ReceivedMessage>> r = Keyed::pop(queue, timeout);
      if (r && r->has_value() && !next_keys.empty()) {
        (*r)->key = next_keys.front();
        next_keys.erase(next_keys.begin());
      }
      return r;
    }
  } keyed(base);

  const RedriveResult res = babelqueue::redrive(
      keyed, "dlq",
      quick({.select = [](const Envelope& e) { return e.urn() == "urn:babel:orders:created"; }}));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.redriven, 1U);
  EXPECT_EQ(keyed.keys["orders"], (std::vector<std::optional<std::string>>{"k1"}));
  EXPECT_EQ(keyed.keys["dlq"], (std::vector<std::optional<std::string>>{std::string()}))
      << "the restore keeps an empty key empty";
  EXPECT_EQ(base.peek_all("dlq"), std::vector<std::string>{welcome});
  EXPECT_EQ(base.size("orders"), 1U);
}

TEST(Redrive, HLP20_RestorerIsPreferredForRestores) {
  InMemoryTransport base;
  ASSERT_TRUE(base.publish_with_headers("dlq", "not json", {{"h", "v"}}).ok());
  Restoring t(base);

  const RedriveResult res = babelqueue::redrive(t, "dlq", quick());
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.skipped, 1U);
  ASSERT_EQ(t.restored.size(), 1U);
  EXPECT_EQ(t.restored[0].body, "not json");
  EXPECT_EQ(t.restored[0].queue, "dlq");
  EXPECT_EQ(t.restored[0].headers, (Headers{{"h", "v"}}));
  EXPECT_TRUE(t.writes.empty()) << "no ordinary publish when the transport restores itself";
  EXPECT_EQ(t.acked, std::vector<std::string>{"not json"});
}

// A Restorer that puts the delivery itself back (Service Bus abandons a $DeadLetterQueue message):
// the restored delivery is not acknowledged; a redriven one is.
TEST(Redrive, HLP20_ARestoreInPlaceIsNotAcknowledged) {
  class InPlace : public Restoring {
   public:
    using Restoring::Restoring;
    [[nodiscard]] bool restores_in_place(const ReceivedMessage& source) const override {
      return source.queue == "dlq";
    }
  };
  InMemoryTransport base;
  ASSERT_TRUE(base.publish("dlq", "not json").ok());
  const std::string record = dead_lettered(base, "dlq", "urn:babel:orders:created", "orders");
  InPlace t(base);

  const RedriveResult res = babelqueue::redrive(t, "dlq", quick());
  ASSERT_TRUE(res.ok()) << res.status.error().what();
  EXPECT_EQ(res.skipped, 1U);
  EXPECT_EQ(res.redriven, 1U);
  ASSERT_EQ(t.restored.size(), 1U);
  EXPECT_EQ(t.restored[0].body, "not json");
  EXPECT_EQ(t.acked, std::vector<std::string>{record}) << "the restored delivery was acknowledged";
}

TEST(Redrive, HLP20_AckFailureIsReportedAndTheRunGoesOn) {
  InMemoryTransport base;
  dead_lettered(base, "dlq", "urn:babel:orders:created", "orders");
  dead_lettered(base, "dlq", "urn:babel:orders:created", "orders");
  Plain t(base);
  t.fail_acks = true;
  int reported = 0;

  const RedriveResult res = babelqueue::redrive(
      t, "dlq", quick({.on_ack_error = [&](const ReceivedMessage& msg, const babelqueue::Error& e) {
        EXPECT_EQ(msg.queue, "dlq");
        EXPECT_STREQ(e.what(), "ack failed");
        ++reported;
      }}));
  EXPECT_TRUE(res.ok());
  EXPECT_EQ(res.redriven, 2U);
  EXPECT_EQ(reported, 2);
  EXPECT_EQ(base.size("orders"), 2U);
}

TEST(Redrive, HLP20_BlankDeadLetterQueueIsAUsageError) {
  InMemoryTransport base;
  dead_lettered(base, "dlq", "urn:babel:orders:created", "orders");
  Plain t(base);
  const RedriveResult res = babelqueue::redrive(t, " ", quick());
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status.error().code(), ErrorCode::Usage);
  EXPECT_EQ(t.pops, 0U);
  EXPECT_EQ(base.size("dlq"), 1U);
}

TEST(Redrive, HLP20_BlockingPopWaitsOnlyAtTheEnd) {
  InMemoryTransport t;
  dead_lettered(t, "dlq", "urn:babel:orders:created", "orders");
  const auto started = std::chrono::steady_clock::now();
  const RedriveResult res =
      babelqueue::redrive(t, "dlq", {.timeout = std::chrono::milliseconds(50)});
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_TRUE(res.ok());
  EXPECT_EQ(res.redriven, 1U);
  EXPECT_GE(took, std::chrono::milliseconds(50)) << "the last pop waits for the timeout";
  EXPECT_LT(took, std::chrono::seconds(1)) << "the timeout option was not used";
}

}  // namespace
