// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// A request/response link pair to one node of one connection (the AMQP management and CBS
// pattern: `$cbs`, `<entity>/$management`), for the client's container thread only.

#include <proton/connection.hpp>
#include <proton/message.hpp>
#include <proton/receiver.hpp>
#include <proton/sender.hpp>

#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <string>
#include <utility>

namespace babelqueue::amqp10::detail {

class RequestNode {
 public:
  /// Called once per request: with the reply, or with the error that ended it (reply null).
  using Done = std::function<void(std::exception_ptr error, proton::message* reply)>;

  /// Opens a sender to `node` (requests go pre-settled: no outcome to track) and a receiver from
  /// `node` whose target is `reply_to` (the peer answers on the link whose target equals a
  /// request's reply-to).
  RequestNode(proton::connection& connection, const std::string& node, std::string reply_to);

  [[nodiscard]] bool owns(const proton::sender& s) const { return s == sender_; }
  [[nodiscard]] bool owns(const proton::receiver& r) const { return r == receiver_; }

  /// Sends `request` once the sender has credit (message-id and reply-to set here).
  void send(proton::message request, Done done);
  void on_sendable();
  /// A reply: hands it to the request its correlation-id names (others are dropped).
  void on_message(proton::message& reply);
  /// Ends every waiting and sent request with `error`.
  void fail(const std::exception_ptr& error);

 private:
  proton::sender sender_;
  proton::receiver receiver_;
  std::string reply_to_;
  std::uint64_t next_id_ = 0;
  std::deque<std::pair<proton::message, Done>> waiting_;
  std::map<std::string, Done> sent_;
};

}  // namespace babelqueue::amqp10::detail
