// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The shared cross-SDK conformance suite (../shared/conformance, or $BABELQUEUE_CONFORMANCE_DIR)
// run through the conformance runner: every case of every manifest block must pass, and the
// runner must have run at least as many cases as the manifest holds (counted here, independently
// of the runner).

#include <gtest/gtest.h>
#include <babelqueue/errors.hpp>
#include <babelqueue/json.hpp>

#include "runner.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <string_view>
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
    if (!c.passed) ADD_FAILURE() << "FAIL " << describe(c);
  }
  EXPECT_EQ(r.failed(), 0U) << r.passed() << " passed, " << r.failed() << " failed";
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
    if (!c.passed) ADD_FAILURE() << "FAIL " << describe(c);
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
  EXPECT_FALSE(c->passed);
  EXPECT_NE(c->message.find("not implemented"), std::string::npos) << c->message;
  EXPECT_FALSE(r.ok());
}

TEST(ConformanceRunner, UnknownSubBlockFails) {
  const TempSuite suite(R"({"redis":{"description":"x","stream_identity":{}}})");
  const auto r = bq::conformance::run(suite.dir());
  ASSERT_EQ(r.cases.size(), 1U);
  EXPECT_EQ(r.cases[0].block, "redis");
  EXPECT_EQ(r.cases[0].name, "stream_identity");
  EXPECT_FALSE(r.cases[0].passed);
}

TEST(ConformanceRunner, MissingFixtureFailsThatCaseOnly) {
  const TempSuite suite(
      R"({"cases":[{"name":"gone","file":"fixtures/gone.json","valid":true,"expect":{}}],)"
      R"("payload_schema":{"schema":{"type":"object"},"cases":[{"name":"ok","valid":true,"data":{}}]}})");
  const auto r = bq::conformance::run(suite.dir());
  ASSERT_EQ(r.cases.size(), 2U);
  EXPECT_FALSE(r.cases[0].passed);
  EXPECT_NE(r.cases[0].message.find("fixtures/gone.json"), std::string::npos);
  EXPECT_TRUE(r.cases[1].passed) << r.cases[1].message;
  EXPECT_EQ(r.failed(), 1U);
}

TEST(ConformanceRunner, UnreadableManifestThrowsConfigError) {
  EXPECT_THROW((void)bq::conformance::run(fs::path("/nonexistent/babelqueue/suite")),
               bq::ConfigError);
  const TempSuite suite("[1,2]");
  EXPECT_THROW((void)bq::conformance::run(suite.dir()), bq::ConfigError);
}

}  // namespace
