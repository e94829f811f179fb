// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// SKELETON (issue 10): every call fails; replaced by the transport helper.

#include <babelqueue/kafka/transport.hpp>

namespace babelqueue::kafka {

namespace {
Error todo() {
  return Error(ErrorCode::Transport, "kafka: not implemented yet");
}
}  // namespace

class KafkaTransport::Impl {
 public:
  explicit Impl(Options o) : options(std::move(o)) {}
  Options options;
};

KafkaTransport::KafkaTransport(Options options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
KafkaTransport::KafkaTransport(std::string_view url) {
  Options options;
  options = parse_url(url, std::move(options));
  impl_ = std::make_unique<Impl>(std::move(options));
}
KafkaTransport::~KafkaTransport() = default;
const Options& KafkaTransport::options() const noexcept {
  return impl_->options;
}
std::string KafkaTransport::topic(std::string_view queue) const {
  return impl_->options.topic_prefix + std::string(queue);
}
Status KafkaTransport::publish(std::string_view, std::string) {
  return todo();
}
Result<std::optional<ReceivedMessage>> KafkaTransport::pop(std::string_view,
                                                           std::chrono::milliseconds) {
  return todo();
}
Status KafkaTransport::ack(const ReceivedMessage&) {
  return todo();
}
void KafkaTransport::close() {}
Status KafkaTransport::publish_with_headers(std::string_view, std::string, const Headers&) {
  return todo();
}
Status KafkaTransport::publish_batch(std::string_view, std::vector<std::string>) {
  return todo();
}
Status KafkaTransport::republish(std::string_view, std::string, const ReceivedMessage&) {
  return todo();
}
Status KafkaTransport::restore(const ReceivedMessage&) {
  return todo();
}
Status KafkaTransport::rewind(const ReceivedMessage&) {
  return todo();
}
Status KafkaTransport::flush() {
  return todo();
}
Result<QueueStats> KafkaTransport::stats(std::string_view, std::string_view) {
  return todo();
}
Result<std::vector<PeekedMessage>> KafkaTransport::peek(std::string_view, std::size_t) {
  return todo();
}

}  // namespace babelqueue::kafka
