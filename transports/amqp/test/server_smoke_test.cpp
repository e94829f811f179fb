// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The RabbitMQ test fixture itself: a private node that serves AMQP, keeps durable queues and
// persistent messages across kill -9 and restart, and whose rabbitmqctl works.

#include <babelqueue/testing/contract.hpp>

#include <gtest/gtest.h>

#include <signal.h>

#include <string>

#include "rabbit_server.hpp"
#include "raw_client.hpp"

namespace babelqueue::amqp::test {
namespace {

TEST(AmqpServerSmoke, RawRoundTripKeepsEveryFieldTypeItWrote) {
  BABELQUEUE_REQUIRE_RABBITMQ();
  RabbitServer& server = shared_rabbit_server();
  RawClient raw(server.port());
  const std::string q = babelqueue::testing::unique_queue_name();
  raw.declare(q);
  RawProperties p;
  p.content_type = "application/json";
  p.delivery_mode = 2;
  p.headers = RawTable{{"b", RawField::of('b', -5)},
                       {"I", RawField::of('I', 7)},
                       {"l", RawField::of('l', 1LL << 40)},
                       {"S", RawField::str("text")},
                       {"t", RawField::of('t', 1)}};
  raw.publish(q, "{}", p);
  const auto m = raw.get(q);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->body, "{}");
  EXPECT_EQ(m->properties.delivery_mode, 2);
  ASSERT_EQ(m->headers.size(), 5u);
  EXPECT_EQ(m->headers[0], std::make_tuple(std::string("b"), 'b', std::string("-5")));
  EXPECT_EQ(m->headers[2], std::make_tuple(std::string("l"), 'l', std::to_string(1LL << 40)));
  EXPECT_EQ(m->headers[3], std::make_tuple(std::string("S"), 'S', std::string("text")));
  raw.delete_queue(q);
}

TEST(AmqpServerSmoke, PersistentMessagesSurviveKillAndRestart) {
  BABELQUEUE_REQUIRE_RABBITMQ();
  RabbitServer server;
  const pid_t beam = server.pid();
  const std::string q = babelqueue::testing::unique_queue_name();
  {
    RawClient raw(server.port());
    raw.declare(q);
    RawProperties p;
    p.delivery_mode = 2;
    for (int i = 0; i < 20; ++i)
      raw.publish(q, std::to_string(i), p);
  }
  server.kill();
  EXPECT_NE(::kill(beam, 0), 0) << "beam still runs after kill()";
  server.start();
  RawClient raw(server.port());
  EXPECT_EQ(raw.message_count(q), 20u);
  const auto first = raw.get(q);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->body, "0");
}

TEST(AmqpServerSmoke, RabbitmqctlSeesAndClosesConnections) {
  BABELQUEUE_REQUIRE_RABBITMQ();
  RabbitServer& server = shared_rabbit_server();
  RawClient raw(server.port());
  const std::string q = babelqueue::testing::unique_queue_name();
  raw.declare(q);
  EXPECT_GE(server.list_connections(), 1u);
  bool listed = false;
  for (const auto& row : server.list_queues())
    listed = listed || row.name == q;
  EXPECT_TRUE(listed);
  server.close_all_connections("smoke");
  EXPECT_THROW(raw.declare(q), std::runtime_error);
}

}  // namespace
}  // namespace babelqueue::amqp::test
