// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Interop with an independent AMQP 1.0 client on the same broker (issue 12): Qpid Proton's
// Python binding (Debian python3-qpid-proton, support/python_peer.py, no BabelQueue code) reads
// what ArtemisTransport publishes (the x-opt-jms-type annotation under a symbol key, the string
// correlation-id, the creation-time, the bq_ properties, the string body), and the App handles
// a message the Python peer publishes as another SDK would (ART-10: annotation optional, string
// properties).

#include <babelqueue/app.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/command.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "binding/fixtures.hpp"
#include "shared_broker_test.hpp"

namespace babelqueue::artemis::test {
namespace {

using babelqueue::testing::run_command;
using babelqueue::testing::tagged_lines;

constexpr const char* kPython = "/usr/bin/python3";

// Why the Python peer cannot run here (no python3-qpid-proton), or nullopt.
std::optional<std::string> python_peer_unavailable() {
  static const std::optional<std::string> why = []() -> std::optional<std::string> {
    try {
      const auto r = run_command({kPython, "-c", "import proton"});
      if (r.exit_code == 0) return std::nullopt;
      return "the Python peer needs python3-qpid-proton (apt): " + r.output;
    } catch (const std::exception& e) {
      return std::string("the Python peer cannot run: ") + e.what();
    }
  }();
  return why;
}

class ArtemisInterop : public SharedBrokerTest {
 protected:
  void SetUp() override {
    SharedBrokerTest::SetUp();
    if (IsSkipped()) return;
    BABELQUEUE_REQUIRE_BROKER(python_peer_unavailable());
  }
  // amqp://user:password@127.0.0.1:PORT for the peer.
  static std::string peer_url() {
    std::string u = "amqp://";
    u += ArtemisServer::kUser;
    u += ':';
    u += ArtemisServer::kPassword;
    u += '@';
    u += server().host_port();
    return u;
  }
  // python_peer.py with `args`; the lines it tagged `tag`, after expecting exit 0.
  static std::vector<std::string> peer(const std::vector<std::string>& args, std::string_view tag) {
    std::vector<std::string> argv = {kPython, BABELQUEUE_ARTEMIS_PYTHON_PEER};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run_command(argv);
    EXPECT_EQ(r.exit_code, 0) << "python_peer.py " << args.front() << ": " << r;
    return tagged_lines(r.output, tag);
  }
};

// ART-4 read by another client: exactly what the manifest says a JMS peer reads.
TEST_F(ArtemisInterop, APythonClientReadsTheProjection) {
  const std::string body = binding_test::order_created();
  auto t = transport();
  ASSERT_TRUE(t->publish_with_headers(queue(), body, {{"x-tenant", "acme"}}).ok());
  const auto lines = peer({"receive", peer_url(), queue(), "20"}, "MESSAGE ");
  ASSERT_EQ(lines.size(), 1U);
  const Json m = Json::parse(lines[0]);
  EXPECT_EQ(m.find("body")->as_string(), body);
  EXPECT_EQ(m.find("body_type")->as_string(), "string");
  EXPECT_EQ(m.find("annotations")->find("x-opt-jms-type")->as_string(), binding_test::kUrn);
  EXPECT_EQ(m.find("annotation_key_types")->dump(), R"(["symbol"])");
  EXPECT_EQ(m.find("correlation_id")->as_string(), binding_test::kTrace);
  EXPECT_EQ(m.find("correlation_id_type")->as_string(), "str");
  EXPECT_EQ(m.find("creation_time_ms")->as_int64(), binding_test::kCreatedAt);
  EXPECT_TRUE(m.find("durable")->as_bool());
  const Json* props = m.find("properties");
  ASSERT_NE(props, nullptr);
  EXPECT_EQ(props->find("bq_schema_version")->as_string(), "1");
  EXPECT_EQ(props->find("bq_source_lang")->as_string(), "php");
  EXPECT_EQ(props->find("bq_attempts")->as_string(), "0");
  EXPECT_EQ(props->find("bq_app_id")->as_string(), "babelqueue");
  EXPECT_EQ(props->find("x-tenant")->as_string(), "acme");
  t->close();
}

// ART-5, ART-10: a message another SDK published (string body, string bq_ properties, a
// correlation-id, no annotation) is handled by the App, its properties as headers.
TEST_F(ArtemisInterop, TheAppHandlesWhatAPythonClientPublished) {
  const std::string body = binding_test::order_created();
  const Json spec = Json::object(
      {{"body", body},
       {"correlation_id", std::string(binding_test::kTrace)},
       {"properties", Json::object({{"bq_schema_version", "1"}, {"bq_source_lang", "python"}})}});
  ASSERT_EQ(peer({"send", peer_url(), queue(), spec.dump()}, "ACCEPTED").size(), 1U);
  auto t = transport();
  App app(t, {.poll_timeout = std::chrono::milliseconds(500)});
  std::vector<std::string> ids;
  std::vector<std::string> langs;
  app.handle(binding_test::kUrn, [&](Context& ctx, const Envelope& env) {
    ids.emplace_back(env.meta().id);
    const Headers& h = ctx.headers();
    const auto it = h.find("bq_source_lang");
    langs.push_back(it == h.end() ? "" : it->second);
    return Status();
  });
  EXPECT_TRUE(app.drain(queue(), 1).status.ok());
  EXPECT_EQ(ids, std::vector<std::string>{std::string(binding_test::kId)});
  EXPECT_EQ(langs, std::vector<std::string>{"python"});
  t->close();
  EXPECT_EQ(count_becomes(queue(), 0), 0);
}

}  // namespace
}  // namespace babelqueue::artemis::test
