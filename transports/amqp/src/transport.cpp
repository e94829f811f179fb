// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
// WORK IN PROGRESS skeleton (replaced before merge).
#include <babelqueue/amqp/transport.hpp>

namespace babelqueue::amqp {
namespace {
Error todo() { return TransportError("amqp: not written yet", false); }
}  // namespace
class AmqpTransport::Impl {
 public:
  Options options;
};
AmqpTransport::AmqpTransport(Options options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}
AmqpTransport::AmqpTransport(std::string_view url) : AmqpTransport(parse_url(url)) {}
AmqpTransport::~AmqpTransport() = default;
Status AmqpTransport::publish(std::string_view, std::string) { return todo(); }
Result<std::optional<ReceivedMessage>> AmqpTransport::pop(std::string_view,
                                                          std::chrono::milliseconds) {
  return todo();
}
Status AmqpTransport::ack(const ReceivedMessage&) { return todo(); }
void AmqpTransport::close() {}
Status AmqpTransport::publish_with_headers(std::string_view, std::string, const Headers&) {
  return todo();
}
Status AmqpTransport::publish_batch(std::string_view, std::vector<std::string>) { return todo(); }
Status AmqpTransport::publish_delayed(std::string_view, std::string, std::chrono::milliseconds) {
  return todo();
}
Status AmqpTransport::release(const ReceivedMessage&, std::chrono::milliseconds) { return todo(); }
Status AmqpTransport::flush() { return todo(); }
Result<QueueStats> AmqpTransport::stats(std::string_view, std::string_view) { return todo(); }
Result<std::vector<PeekedMessage>> AmqpTransport::peek(std::string_view, std::size_t) {
  return todo();
}
const Options& AmqpTransport::options() const noexcept { return impl_->options; }
std::string AmqpTransport::delay_queue(std::string_view queue,
                                       std::chrono::milliseconds delay) const {
  return std::string(queue) + impl_->options.delay_queue_infix + std::to_string(delay.count());
}
}  // namespace babelqueue::amqp
