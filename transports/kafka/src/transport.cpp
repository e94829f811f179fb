// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// KafkaTransport: option checks at construction, then lazily one shared producer and one
// consumer per queue. Clients are held by shared_ptr so that close() never destroys one under a
// call still using it; the last user destroys it (flushing the producer).

#include <babelqueue/kafka/transport.hpp>
#include <babelqueue/spi/closed_guard.hpp>
#include <babelqueue/spi/text.hpp>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "admin.hpp"
#include "client.hpp"
#include "consumer.hpp"
#include "options.hpp"
#include "producer.hpp"
#include "records.hpp"

namespace babelqueue::kafka {

using detail::Consumer;
using detail::OutgoingRecord;
using detail::Producer;

class KafkaTransport::Impl {
 public:
  explicit Impl(Options o) : options(std::move(o)), logger(options.logger, options.sasl_password) {
    detail::validate(options);
    (void)detail::producer_conf(options, {});
    (void)detail::consumer_conf(options, options.group_id, {});
  }

  Result<std::shared_ptr<Producer>> producer() {
    std::lock_guard<std::mutex> lock(mu);
    if (guard.closed()) return guard.error("publish");
    if (!producer_) {
      try {
        producer_ = std::make_shared<Producer>(options, logger);
      } catch (const Error& e) {
        return e;
      }
    }
    return producer_;
  }

  Status ensure_topic(std::string_view queue) {
    if (options.partitions <= 0) return {};
    const std::string name = topic(queue);
    std::lock_guard<std::mutex> lock(topics_mu);
    if (ensured.contains(name)) return {};
    auto p = producer();
    if (!p) return p.error();
    const Status status = detail::create_topics(
        (*p)->handle(), {name, name + std::string(DEFAULT_DEAD_LETTER_SUFFIX)}, options);
    if (status.ok()) ensured.insert(name);
    return status;
  }

  Status send(std::string_view queue, std::vector<OutgoingRecord> records) {
    if (guard.closed()) return guard.error("publish");
    if (Status s = ensure_topic(queue); !s.ok()) return s;
    auto p = producer();
    if (!p) return p.error();
    return (*p)->send(std::move(records));
  }

  Result<std::shared_ptr<Consumer>> consumer(std::string_view queue) {
    {
      // Every pop asks: the queue's consumer, once made, is found without naming its topic.
      std::lock_guard<std::mutex> lock(mu);
      if (guard.closed()) return guard.error("pop");
      const auto it = consumers.find(queue);
      if (it != consumers.end()) return it->second;
    }
    if (Status s = ensure_topic(queue); !s.ok()) return s.error();
    std::lock_guard<std::mutex> lock(mu);
    if (guard.closed()) return guard.error("pop");
    const auto it = consumers.find(queue);
    if (it != consumers.end()) return it->second;
    try {
      auto c = std::make_shared<Consumer>(options, std::string(queue), topic(queue), logger);
      consumers.emplace(std::string(queue), c);
      return c;
    } catch (const Error& e) {
      return e;
    }
  }

  [[nodiscard]] std::string topic(std::string_view queue) const {
    return options.topic_prefix + std::string(queue);
  }

  OutgoingRecord record(std::string_view queue, std::string body,
                        const Headers& riders = {}) const {
    return detail::outgoing(topic(queue), std::move(body), riders);
  }

  std::shared_ptr<Consumer> existing_consumer(std::string_view queue) {
    std::lock_guard<std::mutex> lock(mu);
    const auto it = consumers.find(queue);
    return it == consumers.end() ? nullptr : it->second;
  }

  std::vector<std::shared_ptr<Consumer>> all_consumers() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::shared_ptr<Consumer>> out;
    for (const auto& [queue, c] : consumers)
      out.push_back(c);
    return out;
  }

  void close() {
    if (!guard.close()) return;
    std::map<std::string, std::shared_ptr<Consumer>, std::less<>> gone;
    std::shared_ptr<Producer> producer_gone;
    {
      std::lock_guard<std::mutex> lock(mu);
      gone.swap(consumers);
      producer_gone.swap(producer_);
    }
    for (const auto& [queue, c] : gone)
      c->close();
  }

  Options options;
  detail::EventLogger logger;
  spi::ClosedGuard guard{"kafka transport"};

 private:
  std::mutex mu;
  std::shared_ptr<Producer> producer_;
  std::map<std::string, std::shared_ptr<Consumer>, std::less<>> consumers;
  std::mutex topics_mu;
  std::set<std::string> ensured;
};

namespace {

Error no_handle(std::string_view operation) {
  return Error(ErrorCode::Usage,
               "kafka: " + std::string(operation) + " of a message this transport did not deliver");
}

Result<std::shared_ptr<Consumer>> owner(const ReceivedMessage& msg, const detail::Handle& handle,
                                        std::string_view operation) {
  std::shared_ptr<Consumer> c = handle.consumer.lock();
  if (!c) {
    return Error(ErrorCode::StaleDelivery, "kafka: " + std::string(operation) +
                                               ": the consumer of queue " + spi::quoted(msg.queue) +
                                               " is closed; the record is delivered again");
  }
  return c;
}

}  // namespace

KafkaTransport::KafkaTransport(Options options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
KafkaTransport::KafkaTransport(std::string_view url)
    : impl_(std::make_unique<Impl>(parse_url(url))) {}
KafkaTransport::~KafkaTransport() {
  close();
}

const Options& KafkaTransport::options() const noexcept {
  return impl_->options;
}
std::string KafkaTransport::topic(std::string_view queue) const {
  return impl_->topic(queue);
}

Status KafkaTransport::publish(std::string_view queue, std::string body) {
  std::vector<OutgoingRecord> records;
  records.push_back(impl_->record(queue, std::move(body)));
  return impl_->send(queue, std::move(records));
}

Status KafkaTransport::publish_with_headers(std::string_view queue, std::string body,
                                            const Headers& headers) {
  std::vector<OutgoingRecord> records;
  records.push_back(impl_->record(queue, std::move(body), headers));
  return impl_->send(queue, std::move(records));
}

Status KafkaTransport::publish_batch(std::string_view queue, std::vector<std::string> bodies) {
  std::vector<OutgoingRecord> records;
  records.reserve(bodies.size());
  for (std::string& body : bodies)
    records.push_back(impl_->record(queue, std::move(body)));
  return impl_->send(queue, std::move(records));
}

Status KafkaTransport::republish(std::string_view queue, std::string body,
                                 const ReceivedMessage& source) {
  std::vector<OutgoingRecord> records;
  records.push_back(impl_->record(queue, std::move(body)));
  records.back().key = source.key;
  return impl_->send(queue, std::move(records));
}

Status KafkaTransport::restore(const ReceivedMessage& source) {
  const detail::Handle* handle = detail::handle_of(source);
  if (handle == nullptr) return no_handle("restore");
  OutgoingRecord r;
  r.topic = impl_->topic(source.queue);
  r.value = handle->original_value.value_or(source.body);
  r.key = source.key;
  r.headers = detail::copy(handle->headers.views());
  std::vector<OutgoingRecord> records;
  records.push_back(std::move(r));
  return impl_->send(source.queue, std::move(records));
}

Result<std::optional<ReceivedMessage>> KafkaTransport::pop(std::string_view queue,
                                                           std::chrono::milliseconds timeout) {
  Result<std::optional<ReceivedMessage>> popped = pop_deferring_headers(queue, timeout);
  if (popped.has_value() && popped->has_value()) build_headers(**popped);
  return popped;
}

Result<std::optional<ReceivedMessage>> KafkaTransport::pop_deferring_headers(
    std::string_view queue, std::chrono::milliseconds timeout) {
  if (impl_->guard.closed()) return impl_->guard.error("pop");
  auto c = impl_->consumer(queue);
  if (!c) return c.error();
  const std::chrono::milliseconds max_wait = impl_->options.max_wait;
  const auto wait = std::max(std::chrono::milliseconds(0),
                             max_wait.count() > 0 ? std::min(timeout, max_wait) : timeout);
  const std::shared_ptr<Consumer> popped = std::move(*c);
  return popped->pop(wait, [this, &popped] {
    for (const std::shared_ptr<Consumer>& other : impl_->all_consumers()) {
      if (other != popped) other->serve();
    }
  });
}

Status KafkaTransport::ack(const ReceivedMessage& msg) {
  if (impl_->guard.closed()) return impl_->guard.error("ack");
  const detail::Handle* handle = detail::handle_of(msg);
  if (handle == nullptr) return no_handle("ack");
  auto c = owner(msg, *handle, "ack");
  if (!c) return c.error();
  return (*c)->ack(*handle);
}

Status KafkaTransport::rewind(const ReceivedMessage& msg) {
  if (impl_->guard.closed()) return impl_->guard.error("rewind");
  const detail::Handle* handle = detail::handle_of(msg);
  if (handle == nullptr) return no_handle("rewind");
  const std::shared_ptr<Consumer> c = handle->consumer.lock();
  if (!c) return {};
  return c->rewind(*handle);
}

Status KafkaTransport::flush() {
  if (impl_->guard.closed()) return impl_->guard.error("flush");
  Status first;
  for (const auto& c : impl_->all_consumers()) {
    Status s = c->flush();
    if (first.ok() && !s.ok()) first = std::move(s);
  }
  return first;
}

void KafkaTransport::close() {
  impl_->close();
}

Result<QueueStats> KafkaTransport::stats(std::string_view queue,
                                         std::string_view dead_letter_queue) {
  if (impl_->guard.closed()) return impl_->guard.error("stats");
  const std::string dlq =
      dead_letter_queue.empty() ? default_dead_letter_name(queue) : std::string(dead_letter_queue);
  Result<QueueStats> stats =
      detail::topic_stats(impl_->options, impl_->logger, impl_->topic(queue), impl_->topic(dlq));
  if (!stats) return stats;
  // The lag counts the records this transport holds unsettled: they are in flight, not ready
  // (what other processes hold is not known to it).
  const std::shared_ptr<Consumer> c = impl_->existing_consumer(queue);
  const auto held = c ? static_cast<std::int64_t>(c->outstanding()) : std::int64_t{0};
  QueueStats& s = stats.value();
  if (s.ready) s.ready = std::max<std::int64_t>(0, *s.ready - held);
  s.in_flight = held;
  return stats;
}

Result<std::vector<PeekedMessage>> KafkaTransport::peek(std::string_view queue, std::size_t max) {
  if (impl_->guard.closed()) return impl_->guard.error("peek");
  return detail::peek_topic(impl_->options, impl_->logger, impl_->topic(queue), max);
}

}  // namespace babelqueue::kafka
