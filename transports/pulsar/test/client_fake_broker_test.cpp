// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The Pulsar client against a scripted fake broker on loopback (issue 13): what a real broker
// does not do on demand (a redirect, a silent peer, receipts out of order, a SEND_ERROR).

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>

#include "client.hpp"
#include "frame.hpp"

namespace babelqueue::pulsar {
namespace {

namespace pb = proto;
using std::chrono::milliseconds;

// One accepted connection of the fake broker: frames in and out, blocking, 10 s per read.
class FakeConnection {
 public:
  explicit FakeConnection(int fd) : fd_(fd) {}
  ~FakeConnection() { ::close(fd_); }
  FakeConnection(const FakeConnection&) = delete;
  FakeConnection& operator=(const FakeConnection&) = delete;

  // The next frame; nullopt when the client closed the connection.
  std::optional<wire::Frame> read() {
    while (true) {
      if (std::optional<wire::Frame> frame = reader_.next()) {
        if (frame->command.type() == pb::BaseCommand::PONG) ++pongs_;
        return frame;
      }
      pollfd readable{fd_, POLLIN, 0};
      if (::poll(&readable, 1, 10'000) <= 0)
        throw std::runtime_error("fake broker: no frame in 10 s");
      char buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) return std::nullopt;
      reader_.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    }
  }
  // The next frame that is not a PING or PONG (PINGs are answered).
  wire::Frame expect(pb::BaseCommand::Type type) {
    while (true) {
      std::optional<wire::Frame> frame = read();
      if (!frame) throw std::runtime_error("fake broker: the client closed the connection");
      if (frame->command.type() == pb::BaseCommand::PONG) continue;
      if (frame->command.type() == pb::BaseCommand::PING) {
        pb::BaseCommand pong;
        pong.set_type(pb::BaseCommand::PONG);
        pong.mutable_pong();
        write(pong);
        continue;
      }
      if (frame->command.type() != type) {
        throw std::runtime_error("fake broker: expected " + pb::BaseCommand::Type_Name(type) +
                                 ", got " + pb::BaseCommand::Type_Name(frame->command.type()));
      }
      return std::move(*frame);
    }
  }
  // PONGs read so far.
  [[nodiscard]] int pongs() const { return pongs_; }
  void write(const pb::BaseCommand& command) {
    const std::string frame = wire::encode_command(command);
    if (::send(fd_, frame.data(), frame.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(frame.size()))
      throw std::runtime_error("fake broker: send failed");
  }
  // CONNECT answered with CONNECTED of `protocol_version`.
  void handshake(int protocol_version = 21) {
    const wire::Frame connect = expect(pb::BaseCommand::CONNECT);
    EXPECT_EQ(connect.command.connect().protocol_version(), 21);
    pb::BaseCommand connected;
    connected.set_type(pb::BaseCommand::CONNECTED);
    connected.mutable_connected()->set_server_version("fake");
    connected.mutable_connected()->set_protocol_version(protocol_version);
    write(connected);
  }
  void lookup_answer(std::uint64_t request_id, pb::CommandLookupTopicResponse::LookupType type,
                     const std::string& url, bool authoritative) {
    pb::BaseCommand answer;
    answer.set_type(pb::BaseCommand::LOOKUP_RESPONSE);
    auto* response = answer.mutable_lookuptopicresponse();
    response->set_request_id(request_id);
    response->set_response(type);
    response->set_brokerserviceurl(url);
    response->set_authoritative(authoritative);
    write(answer);
  }

 private:
  int fd_;
  int pongs_ = 0;
  wire::FrameReader reader_;
};

// A listener on 127.0.0.1 and a free port whose one connection runs `script` on a thread.
class FakeBroker {
 public:
  explicit FakeBroker(std::function<void(FakeConnection&, const std::string& url)> script) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        ::listen(listener_, 4) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      throw std::runtime_error("fake broker: cannot listen on 127.0.0.1");
    }
    port_ = ntohs(address.sin_port);
    done_ = std::async(std::launch::async, [this, script = std::move(script)] {
      pollfd readable{listener_, POLLIN, 0};
      if (::poll(&readable, 1, 10'000) <= 0) throw std::runtime_error("fake broker: no client");
      FakeConnection connection(::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC));
      script(connection, url());
    });
  }
  ~FakeBroker() { ::close(listener_); }
  FakeBroker(const FakeBroker&) = delete;
  FakeBroker& operator=(const FakeBroker&) = delete;

  [[nodiscard]] std::string url() const { return "pulsar://127.0.0.1:" + std::to_string(port_); }
  // Rethrows what the script threw (its failed expectations).
  void finish() { done_.get(); }

 private:
  int listener_ = -1;
  int port_ = 0;
  std::future<void> done_;
};

ClientOptions options_for(const FakeBroker& broker) {
  ClientOptions options;
  options.service_url = broker.url();
  options.operation_timeout = milliseconds(10'000);
  return options;
}

TEST(PulsarClientFake, NegotiatesTheLowerVersionAnswersPingsAndFollowsRedirects) {
  FakeBroker broker([](FakeConnection& connection, const std::string& url) {
    connection.handshake(15);
    pb::BaseCommand ping;
    ping.set_type(pb::BaseCommand::PING);
    ping.mutable_ping();
    connection.write(ping);
    // The first LOOKUP (sent once CONNECTED arrived) and the PONG come in either order.
    const wire::Frame first = connection.expect(pb::BaseCommand::LOOKUP);
    EXPECT_FALSE(first.command.lookuptopic().authoritative());
    connection.lookup_answer(first.command.lookuptopic().request_id(),
                             pb::CommandLookupTopicResponse::Redirect, url, true);
    const wire::Frame again = connection.expect(pb::BaseCommand::LOOKUP);
    EXPECT_TRUE(again.command.lookuptopic().authoritative()) << "the redirect's flag is kept";
    connection.lookup_answer(again.command.lookuptopic().request_id(),
                             pb::CommandLookupTopicResponse::Connect, url, true);
    // A redirect to another broker, which is not there (nothing listens on port 1).
    const wire::Frame other = connection.expect(pb::BaseCommand::LOOKUP);
    connection.lookup_answer(other.command.lookuptopic().request_id(),
                             pb::CommandLookupTopicResponse::Redirect, "pulsar://127.0.0.1:1",
                             false);
    while (connection.read()) {
    }
    EXPECT_EQ(connection.pongs(), 1) << "one PONG for the broker's one PING";
  });
  Client client(options_for(broker));
  const LookupResult result = client.lookup("persistent://public/default/t");
  EXPECT_EQ(result.broker_url, broker.url());
  EXPECT_EQ(result.redirects, 1);
  EXPECT_EQ(client.protocol_version(), 15);
  try {
    static_cast<void>(client.lookup("persistent://public/default/elsewhere"));
    ADD_FAILURE() << "a redirect to a broker that is not there succeeded";
  } catch (const TransportError& e) {
    EXPECT_TRUE(e.is_transient());
    EXPECT_NE(std::string(e.what()).find("redirected to pulsar://127.0.0.1:1"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("persistent://public/default/elsewhere"),
              std::string::npos)
        << e.what();
  }
  client.close();
  EXPECT_NO_THROW(broker.finish());
}

TEST(PulsarClientFake, SendsTheTokenInConnectAndAnswersAnAuthChallengeWithIt) {
  FakeBroker broker([](FakeConnection& connection, const std::string& url) {
    const wire::Frame connect = connection.expect(pb::BaseCommand::CONNECT);
    EXPECT_EQ(connect.command.connect().auth_method_name(), "token");
    EXPECT_EQ(connect.command.connect().auth_data(), "the-token");
    pb::BaseCommand connected;
    connected.set_type(pb::BaseCommand::CONNECTED);
    connected.mutable_connected()->set_protocol_version(21);
    connection.write(connected);
    // A broker refreshing the authentication: the same token comes back.
    pb::BaseCommand challenge;
    challenge.set_type(pb::BaseCommand::AUTH_CHALLENGE);
    challenge.mutable_authchallenge()->mutable_challenge()->set_auth_method_name("token");
    challenge.mutable_authchallenge()->mutable_challenge()->set_auth_data("refresh");
    connection.write(challenge);
    // The first LOOKUP (sent once CONNECTED arrived) and the AUTH_RESPONSE come in either order.
    int responses = 0;
    while (std::optional<wire::Frame> frame = connection.read()) {
      const pb::BaseCommand& command = frame->command;
      if (command.type() == pb::BaseCommand::AUTH_RESPONSE) {
        ++responses;
        EXPECT_EQ(command.authresponse().response().auth_method_name(), "token");
        EXPECT_EQ(command.authresponse().response().auth_data(), "the-token");
      } else if (command.type() == pb::BaseCommand::LOOKUP) {
        connection.lookup_answer(command.lookuptopic().request_id(),
                                 pb::CommandLookupTopicResponse::Connect, url, true);
      }
    }
    EXPECT_EQ(responses, 1);
  });
  ClientOptions options = options_for(broker);
  options.token = "the-token";
  Client client(options);
  EXPECT_EQ(client.lookup("persistent://public/default/t").broker_url, broker.url());
  client.close();
  EXPECT_NO_THROW(broker.finish());
}

TEST(PulsarClientFake, APeerSilentForTwoKeepAliveIntervalsIsDead) {
  FakeBroker broker([](FakeConnection& connection, const std::string&) {
    connection.handshake();
    static_cast<void>(connection.expect(pb::BaseCommand::LOOKUP));
    // Never answers, never PONGs: reads until the client gives the connection up.
    while (connection.read()) {
    }
  });
  ClientOptions options = options_for(broker);
  options.keepalive = milliseconds(100);
  Client client(options);
  const auto started = std::chrono::steady_clock::now();
  try {
    static_cast<void>(client.lookup("persistent://public/default/t"));
    ADD_FAILURE() << "a lookup without an answer succeeded";
  } catch (const TimeoutError& e) {
    ADD_FAILURE() << "the silent peer was not found dead: " << e.what();
  } catch (const TransportError& e) {
    EXPECT_TRUE(e.is_transient());
    EXPECT_NE(std::string(e.what()).find("keep-alive"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, options.operation_timeout);
  client.close();
  EXPECT_NO_THROW(broker.finish());
}

TEST(PulsarClientFake, ReceiptsAndSendErrorsMatchTheirSequenceIds) {
  const std::string topic = "persistent://public/default/t";
  FakeBroker broker([&topic](FakeConnection& connection, const std::string& url) {
    connection.handshake();
    const wire::Frame lookup = connection.expect(pb::BaseCommand::LOOKUP);
    connection.lookup_answer(lookup.command.lookuptopic().request_id(),
                             pb::CommandLookupTopicResponse::Connect, url, true);
    const wire::Frame producer = connection.expect(pb::BaseCommand::PRODUCER);
    EXPECT_EQ(producer.command.producer().topic(), topic);
    pb::BaseCommand success;
    success.set_type(pb::BaseCommand::PRODUCER_SUCCESS);
    success.mutable_producer_success()->set_request_id(producer.command.producer().request_id());
    success.mutable_producer_success()->set_producer_name("fake-producer");
    connection.write(success);
    const std::uint64_t producer_id = producer.command.producer().producer_id();
    const wire::Frame first = connection.expect(pb::BaseCommand::SEND);
    const wire::Frame second = connection.expect(pb::BaseCommand::SEND);
    EXPECT_EQ(wire::decode_message(first.payload_section).metadata.producer_name(),
              "fake-producer");
    EXPECT_EQ(wire::decode_message(second.payload_section).payload, "two");
    // The second's receipt first, then a SEND_ERROR for the first.
    pb::BaseCommand receipt;
    receipt.set_type(pb::BaseCommand::SEND_RECEIPT);
    receipt.mutable_send_receipt()->set_producer_id(producer_id);
    receipt.mutable_send_receipt()->set_sequence_id(second.command.send().sequence_id());
    receipt.mutable_send_receipt()->mutable_message_id()->set_ledgerid(3);
    receipt.mutable_send_receipt()->mutable_message_id()->set_entryid(8);
    connection.write(receipt);
    pb::BaseCommand error;
    error.set_type(pb::BaseCommand::SEND_ERROR);
    error.mutable_send_error()->set_producer_id(producer_id);
    error.mutable_send_error()->set_sequence_id(first.command.send().sequence_id());
    error.mutable_send_error()->set_error(pb::TopicTerminatedError);
    error.mutable_send_error()->set_message("terminated");
    connection.write(error);
    while (connection.read()) {
    }
  });
  Client client(options_for(broker));
  auto producer = client.create_producer(topic);
  std::future<SendResult> one = producer->send_async(OutgoingMessage{.payload = "one"});
  std::future<SendResult> two = producer->send_async(OutgoingMessage{.payload = "two"});
  const MessageId id = two.get().get();
  EXPECT_EQ(id.ledger, 3U);
  EXPECT_EQ(id.entry, 8U);
  try {
    static_cast<void>(one.get().get());
    ADD_FAILURE() << "a send with a SEND_ERROR succeeded";
  } catch (const TransportError& e) {
    EXPECT_FALSE(e.is_transient());
    EXPECT_NE(std::string(e.what()).find(topic), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("TopicTerminatedError"), std::string::npos) << e.what();
  }
  client.close();
  EXPECT_NO_THROW(broker.finish());
}

}  // namespace
}  // namespace babelqueue::pulsar
