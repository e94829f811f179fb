// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The shared cross-SDK conformance suite (../shared/conformance, or $BABELQUEUE_CONFORMANCE_DIR)
// run through the conformance runner: every case of every manifest block must pass, and the
// runner must have run at least as many cases as the manifest holds (counted here, independently
// of the runner). The transport blocks are skipped without a transport and run live against
// memory:// here (a transport's integration tests call run_transport_blocks), where a transport
// that changes one byte must fail them.

#include <gtest/gtest.h>
#include <babelqueue/errors.hpp>
#include <babelqueue/in_memory_transport.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/open.hpp>
#include <babelqueue/transport.hpp>

#include "decode_internal.hpp"
#include "runner.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bq = babelqueue;
namespace fs = std::filesystem;

#ifndef BABELQUEUE_DEFAULT_CONFORMANCE_DIR
#define BABELQUEUE_DEFAULT_CONFORMANCE_DIR ""
#endif

namespace {

fs::path suite_dir() {
  if (const char* env = std::getenv("BABELQUEUE_CONFORMANCE_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return BABELQUEUE_DEFAULT_CONFORMANCE_DIR;
}

std::string missing_suite_message() {
  return "the conformance suite was not found: " + (suite_dir() / "manifest.json").string() +
         " does not exist. Check out the shared suite next to the repository (../shared) or set "
         "BABELQUEUE_CONFORMANCE_DIR (at configure or run time).";
}

bool suite_present() {
  return fs::is_regular_file(suite_dir() / "manifest.json");
}

const bq::Json& manifest() {
  static const bq::Json parsed = [] {
    std::ifstream in(suite_dir() / "manifest.json", std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return bq::Json::parse(text);
  }();
  return parsed;
}

const bq::conformance::Report& report() {
  static const bq::conformance::Report r = bq::conformance::run(suite_dir());
  return r;
}

// ---- The manifest's case count, computed from the JSON alone ----

std::size_t array_size(const bq::Json& obj, std::string_view key) {
  const bq::Json* v = obj.find(key);
  return v != nullptr && v->is_array() ? v->size() : 0;
}

// One case per projected entry: each member of a map (properties, headers, attributes, ...) and
// each single-valued member (artemis jms_type, correlation_id, ...).
std::size_t projection_entries(const bq::Json& projection) {
  std::size_t n = 0;
  for (const auto& [key, value] : projection.as_object()) {
    if (key == "description" || key == "envelope_file") continue;
    n += value.is_object() ? value.size() : 1;
  }
  return n;
}

std::size_t expected_cases(std::string_view block, const bq::Json& value) {
  if (block == "cases") return value.size();
  if (block == "idempotency") {
    const bq::Json* sequences = value.find("sequences");
    return (value.find("dedup_key") != nullptr ? 1 : 0) +
           (sequences != nullptr ? array_size(*sequences, "cases") : 0);
  }
  if (block == "redis") return value.find("payload_identity") != nullptr ? 1 : 0;
  if (block == "sqs" || block == "asb" || block == "pulsar" || block == "kafka" ||
      block == "artemis" || block == "rabbitmq") {
    std::size_t n = 0;
    for (const auto& [key, sub] : value.as_object()) {
      if (key == "description") continue;
      if (key.ends_with("_projection")) {
        n += projection_entries(sub);
      } else {
        n += array_size(sub, "cases");  // attempts_reconciliation, schema_version_gate
      }
    }
    return n;
  }
  if (value.is_object() && value.find("cases") != nullptr) return array_size(value, "cases");
  return 1;  // a block this test does not know: the runner must still report (fail) it
}

std::size_t expected_total() {
  std::size_t n = 0;
  for (const auto& [key, value] : manifest().as_object()) {
    if (key == "description" || key == "schema_version") continue;
    n += expected_cases(key, value);
  }
  return n;
}

// The manifest blocks of today's suite, one parameterized test each.
const std::vector<std::string>& known_blocks() {
  static const std::vector<std::string> blocks = {"cases",
                                                  "idempotency",
                                                  "sqs",
                                                  "asb",
                                                  "pulsar",
                                                  "kafka",
                                                  "artemis",
                                                  "redis",
                                                  "rabbitmq",
                                                  "payload_schema",
                                                  "roundtrip",
                                                  "data_shape",
                                                  "forbidden_keys",
                                                  "payload_schema_unicode"};
  return blocks;
}

std::string describe(const bq::conformance::CaseResult& c) {
  return c.block + "/" + c.name + ": " + c.message;
}

// ---- Whole suite ----

TEST(ConformanceSuite, IsPresent) {
  ASSERT_TRUE(suite_present()) << missing_suite_message();
}

TEST(ConformanceSuite, EveryCasePasses) {
  ASSERT_TRUE(suite_present()) << missing_suite_message();
  const auto& r = report();
  for (const auto& c : r.cases) {
    if (!c.passed() && !c.skipped()) ADD_FAILURE() << "FAIL " << describe(c);
  }
  EXPECT_EQ(r.failed(), 0U) << r.passed() << " passed, " << r.failed() << " failed";
}

// try_decode agrees with its general decoder on every fixture (pretty-printed, so decoded
// there) and on the canonical encoding of each that decodes, which takes the fast path unless it
// has members outside the ENV-12 layout or a string that needs an escape.
TEST(ConformanceSuite, FixturesAndTheirCanonicalBodiesDecodeAlikeOnBothPaths) {
  ASSERT_TRUE(suite_present()) << missing_suite_message();
  int fast = 0;
  for (const auto& entry : fs::directory_iterator(suite_dir() / "fixtures")) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(bq::detail::decode_paths_difference(text), "") << entry.path();
    EXPECT_FALSE(bq::detail::try_decode_canonical(text).has_value()) << entry.path();
    const auto decoded = bq::detail::try_decode_general(text);
    if (!decoded) continue;
    const std::string body = bq::encode(*decoded);
    EXPECT_EQ(bq::detail::decode_paths_difference(body), "") << body;
    const bool extras = decoded->dead_letter() || !decoded->unknown().empty() ||
                        !decoded->meta_unknown().empty() || body.find('\\') != std::string::npos;
    EXPECT_EQ(bq::detail::try_decode_canonical(body).has_value(), !extras) << body;
    fast += extras ? 0 : 1;
  }
  EXPECT_GE(fast, 8);
}

TEST(ConformanceSuite, RunsAtLeastEveryManifestCase) {
  ASSERT_TRUE(suite_present()) << missing_suite_message();
  const std::size_t want = expected_total();
  EXPECT_GT(want, 0U);
  EXPECT_GE(report().cases.size(), want)
      << "the manifest holds " << want << " cases; the runner ran " << report().cases.size();
}

// ---- Per block ----

class ConformanceBlock : public testing::TestWithParam<std::string> {};

TEST_P(ConformanceBlock, PassesEveryCase) {
  ASSERT_TRUE(suite_present()) << missing_suite_message();
  const std::string& block = GetParam();
  const bq::Json* value = manifest().find(block);
  if (value == nullptr) GTEST_SKIP() << "the manifest has no block " << block;
  std::size_t ran = 0;
  for (const auto& c : report().cases) {
    if (c.block != block) continue;
    ++ran;
    if (c.skipped()) {
      EXPECT_EQ(block, "redis") << "only transport blocks may skip: " << describe(c);
      continue;
    }
    if (!c.passed()) ADD_FAILURE() << "FAIL " << describe(c);
  }
  EXPECT_GE(ran, expected_cases(block, *value)) << "block " << block;
}

INSTANTIATE_TEST_SUITE_P(Manifest, ConformanceBlock, testing::ValuesIn(known_blocks()),
                         [](const testing::TestParamInfo<std::string>& block) {
                           return block.param;
                         });

TEST(ConformanceSuite, EveryManifestBlockHasAPerBlockTest) {
  ASSERT_TRUE(suite_present()) << missing_suite_message();
  const std::set<std::string, std::less<>> covered(known_blocks().begin(), known_blocks().end());
  for (const auto& [key, value] : manifest().as_object()) {
    if (key == "description" || key == "schema_version") continue;
    EXPECT_TRUE(covered.contains(key))
        << "new manifest block " << key << ": implement it in the runner and list it here";
  }
}

// ---- The runner's guard against newer manifests ----

class TempSuite {
 public:
  explicit TempSuite(std::string_view manifest_text) {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("babelqueue-conformance-test-" +
            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "-" +
            std::to_string(counter++));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "manifest.json", std::ios::binary) << manifest_text;
  }
  TempSuite(const TempSuite&) = delete;
  TempSuite& operator=(const TempSuite&) = delete;
  ~TempSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  [[nodiscard]] const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

std::optional<bq::conformance::CaseResult> find_case(const bq::conformance::Report& r,
                                                     std::string_view block) {
  for (const auto& c : r.cases) {
    if (c.block == block) return c;
  }
  return std::nullopt;
}

TEST(ConformanceRunner, UnknownTopLevelBlockFails) {
  const TempSuite suite(R"({"schema_version":1,"description":"x","future_block":{"cases":[]}})");
  const auto r = bq::conformance::run(suite.dir());
  const auto c = find_case(r, "future_block");
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->passed());
  EXPECT_NE(c->message.find("not implemented"), std::string::npos) << c->message;
  EXPECT_FALSE(r.ok());
}

TEST(ConformanceRunner, UnknownSubBlockFails) {
  const TempSuite suite(R"({"redis":{"description":"x","stream_identity":{}}})");
  const auto r = bq::conformance::run(suite.dir());
  ASSERT_EQ(r.cases.size(), 1U);
  EXPECT_EQ(r.cases[0].block, "redis");
  EXPECT_EQ(r.cases[0].name, "stream_identity");
  EXPECT_FALSE(r.cases[0].passed());
}

TEST(ConformanceRunner, MissingFixtureFailsThatCaseOnly) {
  const TempSuite suite(
      R"({"cases":[{"name":"gone","file":"fixtures/gone.json","valid":true,"expect":{}}],)"
      R"("payload_schema":{"schema":{"type":"object"},"cases":[{"name":"ok","valid":true,"data":{}}]}})");
  const auto r = bq::conformance::run(suite.dir());
  ASSERT_EQ(r.cases.size(), 2U);
  EXPECT_FALSE(r.cases[0].passed());
  EXPECT_NE(r.cases[0].message.find("fixtures/gone.json"), std::string::npos);
  EXPECT_TRUE(r.cases[1].passed()) << r.cases[1].message;
  EXPECT_EQ(r.failed(), 1U);
}

TEST(ConformanceRunner, UnreadableManifestThrowsConfigError) {
  EXPECT_THROW((void)bq::conformance::run(fs::path("/nonexistent/babelqueue/suite")),
               bq::ConfigError);
  const TempSuite suite("[1,2]");
  EXPECT_THROW((void)bq::conformance::run(suite.dir()), bq::ConfigError);
}

// ---- The transport blocks (RDS-70: payload identity, live) ----

// Only the cases of the transport blocks.
std::vector<bq::conformance::CaseResult> transport_cases(const bq::conformance::Report& r) {
  std::vector<bq::conformance::CaseResult> out;
  for (const auto& c : r.cases) {
    if (c.block == "redis") out.push_back(c);
  }
  return out;
}

TEST(ConformanceTransport, SkippedWithoutATransportNeverPassed) {
  ASSERT_TRUE(suite_present()) << missing_suite_message();
  const auto cases = transport_cases(report());
  ASSERT_EQ(cases.size(), expected_cases("redis", *manifest().find("redis")));
  for (const auto& c : cases) {
    EXPECT_TRUE(c.skipped()) << describe(c);
    EXPECT_NE(c.message.find("--url"), std::string::npos) << c.message;
  }
  EXPECT_EQ(report().skipped(), cases.size());
  EXPECT_TRUE(report().ok());
}

TEST(ConformanceTransport, PassesLiveAgainstMemory) {
  ASSERT_TRUE(suite_present()) << missing_suite_message();
  const auto r =
      bq::conformance::run_transport_blocks(suite_dir(), bq::open_transport("memory://"));
  EXPECT_EQ(r.cases.size(), expected_cases("redis", *manifest().find("redis")));
  for (const auto& c : r.cases) {
    EXPECT_EQ(c.block, "redis");
    EXPECT_TRUE(c.passed()) << describe(c);
  }
  EXPECT_TRUE(r.ok());
}

TEST(ConformanceTransport, AFullRunWithATransportSkipsNothing) {
  ASSERT_TRUE(suite_present()) << missing_suite_message();
  const auto r = bq::conformance::run(suite_dir(), bq::open_transport("memory://"));
  EXPECT_EQ(r.skipped(), 0U);
  EXPECT_EQ(r.failed(), 0U);
  EXPECT_EQ(r.passed(), report().passed() + report().skipped());
}

TEST(ConformanceTransport, NeedsATransport) {
  EXPECT_THROW((void)bq::conformance::run_transport_blocks(suite_dir(), nullptr), bq::ConfigError);
}

// A transport in front of an InMemoryTransport that betrays payload identity on purpose. It is
// an Inspector, so the runner also checks what is stored.
class Tampering final : public bq::Transport, public bq::Inspector {
 public:
  enum class Fault { None, FlipOneByte, Duplicate };
  explicit Tampering(Fault fault) : fault_(fault) {}

  bq::Status publish(std::string_view queue, std::string body) override {
    if (fault_ == Fault::FlipOneByte) body[body.size() / 2] ^= 0x01;
    if (fault_ == Fault::Duplicate) {
      if (bq::Status st = inner_->publish(queue, body); !st) return st;
    }
    return inner_->publish(queue, std::move(body));
  }
  bq::Result<std::optional<bq::ReceivedMessage>> pop(std::string_view queue,
                                                     std::chrono::milliseconds timeout) override {
    return inner_->pop(queue, timeout);
  }
  bq::Status ack(const bq::ReceivedMessage& msg) override { return inner_->ack(msg); }
  void close() override { inner_->close(); }

  bq::Result<bq::QueueStats> stats(std::string_view queue,
                                   std::string_view /*dead_letter_queue*/) override {
    bq::QueueStats s;
    s.ready = static_cast<std::int64_t>(inner_->size(queue));
    s.in_flight = 0;  // the in-memory pop removes the entry
    return s;
  }
  bq::Result<std::vector<bq::PeekedMessage>> peek(std::string_view queue,
                                                  std::size_t /*max*/) override {
    std::vector<bq::PeekedMessage> out;
    for (auto& e : inner_->peek_entries(queue)) {
      out.push_back({std::move(e.body), std::move(e.headers)});
    }
    return out;
  }

  [[nodiscard]] const bq::InMemoryTransport& inner() const { return *inner_; }

 private:
  Fault fault_;
  std::shared_ptr<bq::InMemoryTransport> inner_ = std::make_shared<bq::InMemoryTransport>();
};

TEST(ConformanceTransport, AFaithfulInspectorPasses) {
  ASSERT_TRUE(suite_present()) << missing_suite_message();
  auto t = std::make_shared<Tampering>(Tampering::Fault::None);
  const auto r = bq::conformance::run_transport_blocks(suite_dir(), t);
  ASSERT_FALSE(r.cases.empty());
  for (const auto& c : r.cases) {
    EXPECT_TRUE(c.passed()) << describe(c);
  }
  EXPECT_TRUE(t->inner().queues().empty());
}

TEST(ConformanceTransport, ATransportThatChangesOneByteFails) {
  ASSERT_TRUE(suite_present()) << missing_suite_message();
  auto t = std::make_shared<Tampering>(Tampering::Fault::FlipOneByte);
  const auto r = bq::conformance::run_transport_blocks(suite_dir(), t);
  ASSERT_EQ(r.cases.size(), 1U);
  const auto& c = r.cases[0];
  EXPECT_EQ(c.name, "payload_identity");
  EXPECT_EQ(c.verdict, bq::conformance::Verdict::Failed);
  EXPECT_NE(c.message.find("the stored element is not the produced envelope byte for byte"),
            std::string::npos)
      << c.message;
  EXPECT_NE(c.message.find("the reserved element is not the produced envelope byte for byte"),
            std::string::npos)
      << c.message;
  EXPECT_NE(c.message.find("first difference at byte"), std::string::npos) << c.message;
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(t->inner().queues().empty()) << "the failed case left its message behind";
}

TEST(ConformanceTransport, ADuplicateFailsAndIsCleanedUp) {
  ASSERT_TRUE(suite_present()) << missing_suite_message();
  auto t = std::make_shared<Tampering>(Tampering::Fault::Duplicate);
  const auto r = bq::conformance::run_transport_blocks(suite_dir(), t);
  ASSERT_EQ(r.cases.size(), 1U);
  EXPECT_FALSE(r.cases[0].passed());
  EXPECT_NE(r.cases[0].message.find("holds 2 messages, expected 1"), std::string::npos)
      << r.cases[0].message;
  EXPECT_TRUE(t->inner().queues().empty()) << "the duplicate was not popped and acknowledged";
}

// A suite whose redis case carries headers, for the HeaderPublisher path.
std::string manifest_with_headers() {
  const std::string fixture = (suite_dir() / "fixtures" / "order-created.json").string();
  return R"({"schema_version":1,"redis":{"payload_identity":{"envelope_file":)" +
         bq::Json(fixture).dump() + R"(,"headers":{"traceparent":"00-abc-def-01"}}}})";
}

TEST(ConformanceTransport, HeadersGoThroughHeaderPublisher) {
  ASSERT_TRUE(suite_present()) << missing_suite_message();
  const TempSuite suite(manifest_with_headers());
  const auto live =
      bq::conformance::run_transport_blocks(suite.dir(), bq::open_transport("memory://"));
  ASSERT_EQ(live.cases.size(), 1U);
  EXPECT_TRUE(live.cases[0].passed()) << describe(live.cases[0]);

  // Tampering is no HeaderPublisher: the case cannot be run as the manifest asks.
  const auto without = bq::conformance::run_transport_blocks(
      suite.dir(), std::make_shared<Tampering>(Tampering::Fault::None));
  ASSERT_EQ(without.cases.size(), 1U);
  EXPECT_FALSE(without.cases[0].passed());
  EXPECT_NE(without.cases[0].message.find("HeaderPublisher"), std::string::npos)
      << without.cases[0].message;
}

TEST(ConformanceTransport, AMalformedCaseFailsEvenWithoutATransport) {
  const TempSuite suite(R"({"redis":{"payload_identity":{"envelope_file":"x","stream":true}}})");
  const auto r = bq::conformance::run(suite.dir());
  ASSERT_EQ(r.cases.size(), 1U);
  EXPECT_EQ(r.cases[0].verdict, bq::conformance::Verdict::Failed);
  EXPECT_NE(r.cases[0].message.find("'stream'"), std::string::npos) << r.cases[0].message;
}

}  // namespace
