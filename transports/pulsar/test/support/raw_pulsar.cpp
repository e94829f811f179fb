// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "raw_pulsar.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <utility>

namespace babelqueue::pulsar::test {
namespace {

// The protocol version this client announces (21: the newest it knows).
constexpr int kProtocolVersion = 21;

std::runtime_error failure(const std::string& what) {
  return std::runtime_error("raw pulsar client: " + what);
}

pb::BaseCommand command_of(pb::BaseCommand::Type type) {
  pb::BaseCommand command;
  command.set_type(type);
  return command;
}

}  // namespace

RawPulsar::RawPulsar(int port, std::chrono::milliseconds timeout) : timeout_(timeout) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw failure(std::string("socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    throw failure("connect to 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(error));
  }
  const int on = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  pb::BaseCommand connect = command_of(pb::BaseCommand::CONNECT);
  connect.mutable_connect()->set_client_version("babelqueue-cpp-test");
  connect.mutable_connect()->set_protocol_version(kProtocolVersion);
  write(wire::encode_command(connect));
  const wire::Frame connected = await("CONNECT", [](const wire::Frame& frame) {
    return frame.command.type() == pb::BaseCommand::CONNECTED;
  });
  server_version_ = connected.command.connected().server_version();
  protocol_version_ = connected.command.connected().protocol_version();
}

RawPulsar::~RawPulsar() {
  if (fd_ >= 0) ::close(fd_);
}

void RawPulsar::write(const std::string& frame) {
  std::size_t sent = 0;
  while (sent < frame.size()) {
    const ssize_t n = ::send(fd_, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw failure(std::string("send: ") + std::strerror(errno));
    sent += static_cast<std::size_t>(n);
  }
}

wire::Frame RawPulsar::read_frame(Clock::time_point deadline) {
  while (true) {
    if (std::optional<wire::Frame> frame = reader_.next()) return std::move(*frame);
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) throw failure("no answer from the broker within the timeout");
    pollfd readable{fd_, POLLIN, 0};
    const int ready = ::poll(&readable, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw failure(std::string("poll: ") + std::strerror(errno));
    if (ready == 0) continue;
    char buffer[64 * 1024];
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw failure(std::string("recv: ") + std::strerror(errno));
    if (n == 0) throw failure("the broker closed the connection");
    reader_.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
  }
}

wire::Frame RawPulsar::await(const std::string& what,
                             const std::function<bool(const wire::Frame&)>& match) {
  // One deadline for the answer: the broker's PINGs on the way do not extend it.
  const auto deadline = Clock::now() + timeout_;
  while (true) {
    wire::Frame frame = read_frame(deadline);
    const pb::BaseCommand& command = frame.command;
    if (match(frame)) return frame;
    switch (command.type()) {
      case pb::BaseCommand::PING:
        write(wire::encode_command([] {
          pb::BaseCommand pong = command_of(pb::BaseCommand::PONG);
          pong.mutable_pong();
          return pong;
        }()));
        break;
      case pb::BaseCommand::MESSAGE:
        messages_.push_back(std::move(frame));
        break;
      case pb::BaseCommand::ERROR:
        throw failure(what + ": " + pb::ServerError_Name(command.error().error()) + ": " +
                      command.error().message());
      case pb::BaseCommand::SEND_ERROR:
        throw failure(what + ": " + pb::ServerError_Name(command.send_error().error()) + ": " +
                      command.send_error().message());
      default:
        break;  // ACTIVE_CONSUMER_CHANGE and the like: not for this client
    }
  }
}

pb::CommandLookupTopicResponse RawPulsar::lookup(const std::string& topic) {
  const std::uint64_t request = next_id();
  pb::BaseCommand command = command_of(pb::BaseCommand::LOOKUP);
  command.mutable_lookuptopic()->set_topic(topic);
  command.mutable_lookuptopic()->set_request_id(request);
  write(wire::encode_command(command));
  const wire::Frame answer = await("LOOKUP " + topic, [request](const wire::Frame& frame) {
    return frame.command.type() == pb::BaseCommand::LOOKUP_RESPONSE &&
           frame.command.lookuptopicresponse().request_id() == request;
  });
  const pb::CommandLookupTopicResponse& response = answer.command.lookuptopicresponse();
  if (response.response() == pb::CommandLookupTopicResponse::Failed) {
    throw failure("LOOKUP " + topic + ": " + pb::ServerError_Name(response.error()) + ": " +
                  response.message());
  }
  return response;
}

std::uint64_t RawPulsar::create_producer(const std::string& topic) {
  // A broker serves a topic once a lookup made it load the topic's namespace bundle.
  static_cast<void>(lookup(topic));
  const std::uint64_t id = next_id();
  pb::BaseCommand command = command_of(pb::BaseCommand::PRODUCER);
  command.mutable_producer()->set_topic(topic);
  command.mutable_producer()->set_producer_id(id);
  command.mutable_producer()->set_request_id(id);
  write(wire::encode_command(command));
  static_cast<void>(await("PRODUCER " + topic, [id](const wire::Frame& frame) {
    return frame.command.type() == pb::BaseCommand::PRODUCER_SUCCESS &&
           frame.command.producer_success().request_id() == id &&
           frame.command.producer_success().producer_ready();
  }));
  return id;
}

pb::MessageIdData RawPulsar::send(std::uint64_t producer_id, const std::string& payload,
                                  const std::map<std::string, std::string>& properties) {
  const std::uint64_t sequence = sequence_++;
  pb::BaseCommand command = command_of(pb::BaseCommand::SEND);
  command.mutable_send()->set_producer_id(producer_id);
  command.mutable_send()->set_sequence_id(sequence);
  pb::MessageMetadata metadata;
  metadata.set_producer_name("babelqueue-raw-" + std::to_string(producer_id));
  metadata.set_sequence_id(sequence);
  metadata.set_publish_time(
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count()));
  for (const auto& [key, value] : properties) {
    pb::KeyValue* property = metadata.add_properties();
    property->set_key(key);
    property->set_value(value);
  }
  write(wire::encode_message(command, metadata, payload));
  const wire::Frame receipt = await("SEND", [producer_id, sequence](const wire::Frame& frame) {
    return frame.command.type() == pb::BaseCommand::SEND_RECEIPT &&
           frame.command.send_receipt().producer_id() == producer_id &&
           frame.command.send_receipt().sequence_id() == sequence;
  });
  return receipt.command.send_receipt().message_id();
}

std::uint64_t RawPulsar::subscribe(const std::string& topic, const std::string& subscription,
                                   pb::CommandSubscribe::SubType type, std::uint32_t permits) {
  static_cast<void>(lookup(topic));
  const std::uint64_t id = next_id();
  pb::BaseCommand command = command_of(pb::BaseCommand::SUBSCRIBE);
  pb::CommandSubscribe* subscribe = command.mutable_subscribe();
  subscribe->set_topic(topic);
  subscribe->set_subscription(subscription);
  subscribe->set_subtype(type);
  subscribe->set_consumer_id(id);
  subscribe->set_request_id(id);
  subscribe->set_initialposition(pb::CommandSubscribe::Earliest);
  write(wire::encode_command(command));
  static_cast<void>(await("SUBSCRIBE " + topic, [id](const wire::Frame& frame) {
    return frame.command.type() == pb::BaseCommand::SUCCESS &&
           frame.command.success().request_id() == id;
  }));
  pb::BaseCommand flow = command_of(pb::BaseCommand::FLOW);
  flow.mutable_flow()->set_consumer_id(id);
  flow.mutable_flow()->set_messagepermits(permits);
  write(wire::encode_command(flow));
  return id;
}

RawMessage RawPulsar::receive() {
  if (messages_.empty()) {
    messages_.push_back(await("receive", [](const wire::Frame& frame) {
      return frame.command.type() == pb::BaseCommand::MESSAGE;
    }));
  }
  wire::Frame frame = std::move(messages_.front());
  messages_.erase(messages_.begin());
  RawMessage message;
  message.consumer_id = frame.command.message().consumer_id();
  message.id = frame.command.message().message_id();
  message.redelivery_count = frame.command.message().redelivery_count();
  message.message = wire::decode_message(frame.payload_section);
  return message;
}

void RawPulsar::ack(std::uint64_t consumer_id, const pb::MessageIdData& id) {
  pb::BaseCommand command = command_of(pb::BaseCommand::ACK);
  command.mutable_ack()->set_consumer_id(consumer_id);
  command.mutable_ack()->set_ack_type(pb::CommandAck::Individual);
  *command.mutable_ack()->add_message_id() = id;
  write(wire::encode_command(command));
}

}  // namespace babelqueue::pulsar::test
