// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The Artemis test support itself (issue 12): the private broker (ArtemisServer) and the raw
// Proton C++ client (RawAmqp10) the AMQP 1.0 layer's and the Artemis transport's integration
// tests build on.

#include <gtest/gtest.h>

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "artemis_server.hpp"
#include "raw_amqp10.hpp"

namespace babelqueue::amqp10::test {
namespace {

using babelqueue::testing::read_file;
using babelqueue::testing::report_figure;
using babelqueue::testing::rss_kib;

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kShort{300};
constexpr milliseconds kWithin{30'000};

RawAmqp10 raw_client(const ArtemisServer& server) {
  return RawAmqp10(server.host_port(), std::string(ArtemisServer::kUser),
                   std::string(ArtemisServer::kPassword));
}

std::vector<std::string> bodies_of(const std::vector<RawMessage>& messages) {
  std::vector<std::string> bodies;
  for (const RawMessage& m : messages)
    bodies.push_back(m.body);
  return bodies;
}

TEST(ArtemisSmoke, SharedBrokerIsTheJvmOnLoopback) {
  BABELQUEUE_REQUIRE_ARTEMIS();
  const auto first_use = Clock::now();
  ArtemisServer& server = shared_artemis_server();
  report_figure("shared broker first use (start if this test runs first)",
                std::chrono::duration_cast<milliseconds>(Clock::now() - first_use).count());
  report_figure("shared broker start-up incl. artemis create", server.started_in().count());
  report_figure("broker JVM RSS", rss_kib(server.pid()) / 1024, "MiB");
  ASSERT_TRUE(server.running());
  // The PID BrokerProcess signals is the JVM's: the instance's bin/artemis exec'd java.
  EXPECT_EQ(read_file("/proc/" + std::to_string(server.pid()) + "/comm"), "java\n");
  EXPECT_EQ(server.host_port(), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_FALSE(server.anonymous());
  // The acceptor is the one of broker.xml's system property, on loopback only.
  EXPECT_NE(read_file(server.dir() + "/instance/etc/broker.xml").find("${babelqueue.amqp.port}"),
            std::string::npos);
  EXPECT_NE(server.log_tail(200).find("127.0.0.1:" + std::to_string(server.port())),
            std::string::npos);
}

TEST(ArtemisSmoke, RawRoundTripKeepsBodyAndProperties) {
  BABELQUEUE_REQUIRE_ARTEMIS();
  const RawAmqp10 raw = raw_client(shared_artemis_server());
  const std::string queue = "smoke-round-trip";
  raw.send(queue, RawMessage{.body = std::string("bin\0ary", 7),
                             .durable = false,
                             .delivery_count = 0,
                             .properties = {{"bq_a", "1"}, {"empty", ""}}});
  raw.send(queue, RawMessage{.body = "second"});
  const std::vector<RawMessage> got = raw.receive(queue, 2, kWithin);
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(got[0].body, std::string("bin\0ary", 7));
  EXPECT_FALSE(got[0].durable);
  EXPECT_EQ(got[0].delivery_count, 0U);
  EXPECT_EQ(got[0].properties, (std::map<std::string, std::string>{{"bq_a", "1"}, {"empty", ""}}));
  EXPECT_EQ(got[1].body, "second");
  EXPECT_TRUE(got[1].durable);
  // Both were accepted: the queue is empty.
  EXPECT_TRUE(raw.receive(queue, 1, kShort).empty());
  EXPECT_EQ(raw.message_count(queue), 0);
}

TEST(ArtemisSmoke, MessageCountThroughTheManagementAddress) {
  BABELQUEUE_REQUIRE_ARTEMIS();
  const RawAmqp10 raw = raw_client(shared_artemis_server());
  const std::string queue = "smoke-count";
  for (int i = 0; i < 3; ++i)
    raw.send(queue, RawMessage{.body = "m" + std::to_string(i)});
  EXPECT_EQ(raw.message_count(queue), 3);
  EXPECT_EQ(bodies_of(raw.receive(queue, 1, kWithin)), (std::vector<std::string>{"m0"}));
  EXPECT_EQ(raw.message_count(queue), 2);
  // A queue that does not exist: the management operation fails, naming it.
  try {
    static_cast<void>(raw.message_count("smoke-no-such-queue"));
    ADD_FAILURE() << "a count of a missing queue";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("smoke-no-such-queue"), std::string::npos) << e.what();
  }
}

TEST(ArtemisSmoke, WrongPasswordIsRefused) {
  BABELQUEUE_REQUIRE_ARTEMIS();
  const RawAmqp10 raw(shared_artemis_server().host_port(), std::string(ArtemisServer::kUser),
                      "not-the-password");
  EXPECT_THROW(raw.send("smoke-refused", RawMessage{.body = "x"}), std::runtime_error);
  const RawAmqp10 anonymous(shared_artemis_server().host_port(), "", "");
  EXPECT_THROW(anonymous.send("smoke-refused", RawMessage{.body = "x"}), std::runtime_error);
}

TEST(ArtemisSmoke, KilledBrokerRestartsWithItsDurableMessages) {
  BABELQUEUE_REQUIRE_ARTEMIS();
  ArtemisServer server(ArtemisServer::Config{.anonymous = true});
  report_figure("own broker start-up incl. artemis create", server.started_in().count());
  const RawAmqp10 raw(server.host_port(), "", "");  // SASL ANONYMOUS
  const std::string queue = "smoke-durable";
  for (int i = 0; i < 5; ++i)
    raw.send(queue, RawMessage{.body = "d" + std::to_string(i)});
  raw.send(queue, RawMessage{.body = "transient", .durable = false});
  EXPECT_EQ(raw.message_count(queue), 6);
  const pid_t first_pid = server.pid();
  const int port = server.port();
  server.kill();
  EXPECT_FALSE(server.running());
  EXPECT_NE(::kill(first_pid, 0), 0);
  server.restart();
  report_figure("restart after kill -9", server.started_in().count());
  report_figure("restarted broker JVM RSS", rss_kib(server.pid()) / 1024, "MiB");
  EXPECT_NE(server.pid(), first_pid);
  EXPECT_EQ(server.port(), port);
  // The durable ones survived the crash, in order; the non-durable one did not.
  EXPECT_EQ(raw.message_count(queue), 5);
  EXPECT_EQ(bodies_of(raw.receive(queue, 6, kShort * 3)),
            (std::vector<std::string>{"d0", "d1", "d2", "d3", "d4"}));
  const auto stop_started = Clock::now();
  server.stop();
  report_figure("SIGTERM stop",
                std::chrono::duration_cast<milliseconds>(Clock::now() - stop_started).count());
  EXPECT_FALSE(server.running());
}

}  // namespace
}  // namespace babelqueue::amqp10::test
