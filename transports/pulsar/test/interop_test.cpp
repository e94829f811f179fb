// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Interop with an independent client on the shared broker (issue 13): the official Python
// `pulsar-client` wheel (PyPI; the Pulsar C++ library inside) in the venv of the testing kit's
// python_peer_env.sh, run as a subprocess (support/python_interop_peer.py). What it produces in
// LZ4-compressed batches arrives through `pop` as the same bytes with its properties; what the
// transport publishes arrives at it with the PLS-5 properties and the same bytes.

#include <babelqueue/binding/pulsar.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/command.hpp>

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "transport_test.hpp"

namespace babelqueue::pulsar::test {
namespace {

using babelqueue::testing::from_hex;
using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;
using babelqueue::testing::run_command;
using babelqueue::testing::tagged_lines;
using babelqueue::testing::to_hex;

constexpr char kUrn[] = "urn:babel:orders:created";

// The venv's python, or why there is none (made once per test binary).
const std::optional<std::string>& peer_python(std::string& why) {
  static std::string reason;
  static const std::optional<std::string> python = []() -> std::optional<std::string> {
    const auto r = run_command(
        {"/bin/bash", BABELQUEUE_PULSAR_PYTHON_PEER_ENV, BABELQUEUE_PULSAR_PYTHON_PEER_VENV},
        {{"BABELQUEUE_PEER_REQUIREMENTS", "pulsar-client==3.13.0"},
         {"BABELQUEUE_PEER_IMPORTS", "pulsar"}});
    std::string out = r.output;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
      out.pop_back();
    const std::size_t last = out.rfind('\n');
    const std::string line = last == std::string::npos ? out : out.substr(last + 1);
    if (r.exit_code == 0 && line.ends_with("/bin/python")) return line;
    reason = "the Python pulsar-client peer cannot run here (python_peer_env.sh exit " +
             std::to_string(r.exit_code) + "): " + out;
    return std::nullopt;
  }();
  why = reason;
  return python;
}

class PulsarInterop : public SharedBrokerTest {
 protected:
  void SetUp() override {
    SharedBrokerTest::SetUp();
    if (IsSkipped()) return;
    std::string why;
    const auto& python = peer_python(why);
    if (!python) BABELQUEUE_REQUIRE_BROKER(std::optional<std::string>(why));
    python_ = *python;
  }
  babelqueue::testing::CommandResult peer(const std::vector<std::string>& args,
                                          const std::string& input = {}) {
    std::vector<std::string> argv = {python_, BABELQUEUE_PULSAR_PYTHON_PEER};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, {}, input);
  }

 private:
  std::string python_;
};

// The Python client's batched, LZ4-compressed messages arrive as the same bytes, one per entry,
// with its property; acked, nothing is left.
TEST_F(PulsarInterop, PythonBatchesArriveAsTheSameBytes) {
  std::map<std::string, std::string> sent;  // meta.id -> body
  std::string input;
  for (int i = 0; i < 25; ++i) {
    const std::string body = encode(make(kUrn, Json::object({{"i", i}}), {.queue = queue()}));
    sent.emplace(std::string(decode(body).meta().id), body);
    input += to_hex(body) + "\n";
  }
  // The subscription first (a pop makes it): nothing is kept for a topic without one.
  PulsarTransport t(url());
  ASSERT_TRUE(t.pop(queue(), std::chrono::milliseconds(1)).has_value());
  const auto produced = peer({"produce", server().service_url(), topic_for(queue())}, input);
  ASSERT_EQ(produced.exit_code, 0) << produced;
  ASSERT_EQ(tagged_lines(produced.output, "SENT "), std::vector<std::string>{"25"}) << produced;
  std::set<std::string> got;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    const auto m = pop_message(t, queue(), kWithin);
    ASSERT_TRUE(m.has_value()) << "after " << i;
    const std::string id(decode(m->body).meta().id);
    ASSERT_TRUE(sent.contains(id));
    EXPECT_EQ(m->body, sent.at(id)) << "the bytes changed";
    EXPECT_EQ(m->headers.at("peer"), "python");
    EXPECT_EQ(m->delivery_count, 1);
    got.insert(id);
    ASSERT_TRUE(t.ack(*m).ok());
  }
  EXPECT_EQ(got.size(), sent.size());
  t.close();
  EXPECT_TRUE(nothing_left(queue()));
}

// What the transport publishes reaches the Python client with the same bytes and the PLS-5
// properties.
TEST_F(PulsarInterop, OurMessagesReachThePythonClient) {
  std::map<std::string, std::string> sent;
  {
    PulsarTransport t(url());
    for (int i = 0; i < 5; ++i) {
      const std::string body = encode(make(kUrn, Json::object({{"i", i}}), {.queue = queue()}));
      sent.emplace(std::string(decode(body).meta().id), body);
      ASSERT_TRUE(t.publish(queue(), body).ok());
    }
  }
  const auto consumed =
      peer({"consume", server().service_url(), topic_for(queue()), "babelqueue", "5"});
  ASSERT_EQ(consumed.exit_code, 0) << consumed;
  const std::vector<std::string> lines = tagged_lines(consumed.output, "MSG ");
  ASSERT_EQ(lines.size(), 5U) << consumed;
  for (const std::string& line : lines) {
    const Json m = Json::parse(line);
    const std::string body = from_hex(m.find("payload")->as_string());
    const std::string id(decode(body).meta().id);
    ASSERT_TRUE(sent.contains(id));
    EXPECT_EQ(body, sent.at(id));
    std::map<std::string, std::string> properties;
    for (const auto& [key, value] : m.find("properties")->as_object())
      properties.emplace(key, value.as_string());
    EXPECT_EQ(properties, binding::pulsar::properties(body));
    EXPECT_EQ(m.find("redelivery_count")->as_int64(), std::optional<std::int64_t>(0));
  }
  EXPECT_TRUE(nothing_left(queue()));
}

}  // namespace
}  // namespace babelqueue::pulsar::test
