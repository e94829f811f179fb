// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "request_node.hpp"

#include <proton/delivery_mode.hpp>
#include <proton/message_id.hpp>
#include <proton/receiver_options.hpp>
#include <proton/sender_options.hpp>
#include <proton/target_options.hpp>

namespace babelqueue::amqp10::detail {

RequestNode::RequestNode(proton::connection& connection, const std::string& node,
                         std::string reply_to)
    : reply_to_(std::move(reply_to)) {
  sender_ = connection.open_sender(
      node, proton::sender_options().delivery_mode(proton::delivery_mode::AT_MOST_ONCE));
  receiver_ = connection.open_receiver(
      node, proton::receiver_options().target(proton::target_options().address(reply_to_)));
}

void RequestNode::send(proton::message request, Done done) {
  const std::string id = reply_to_ + ":" + std::to_string(++next_id_);
  request.id(id);
  request.reply_to(reply_to_);
  waiting_.emplace_back(std::move(request), std::move(done));
  on_sendable();
}

void RequestNode::on_sendable() {
  while (!waiting_.empty() && sender_.active() && sender_.credit() > 0) {
    auto [request, done] = std::move(waiting_.front());
    waiting_.pop_front();
    sent_[proton::to_string(request.id())] = std::move(done);
    sender_.send(request);
  }
}

void RequestNode::on_message(proton::message& reply) {
  const auto it = sent_.find(proton::to_string(reply.correlation_id()));
  if (it == sent_.end()) return;
  Done done = std::move(it->second);
  sent_.erase(it);
  done(nullptr, &reply);
}

void RequestNode::fail(const std::exception_ptr& error) {
  std::deque<std::pair<proton::message, Done>> waiting;
  waiting.swap(waiting_);
  std::map<std::string, Done> sent;
  sent.swap(sent_);
  for (auto& [request, done] : waiting)
    done(error, nullptr);
  for (auto& [id, done] : sent)
    done(error, nullptr);
}

}  // namespace babelqueue::amqp10::detail
