// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// ArtemisTransport: the core binding's Artemis rules (binding/artemis.hpp: the ART-4
// projection, the ART-5 delivery count, the ART-6 gate) on the AMQP 1.0 layer's client
// (transports/amqp10), which owns the connection, the links, credit and reconnects.

#include <babelqueue/amqp10/client.hpp>
#include <babelqueue/artemis/transport.hpp>
#include <babelqueue/binding/artemis.hpp>
#include <babelqueue/spi/closed_guard.hpp>

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace babelqueue::artemis {
namespace {

using std::chrono::milliseconds;

constexpr std::string_view kSchemaVersionProperty = "bq_schema_version";

amqp10::Options layer_options(const Options& o) {
  if (o.max_wait < milliseconds::zero()) throw ConfigError("artemis options: max_wait is negative");
  // The layer's prefetch 0 is Service Bus's explicit credit (ASB-5); Artemis keeps a window.
  if (o.prefetch == 0) throw ConfigError("artemis options: prefetch must be at least 1");
  amqp10::Options a;
  a.host = o.host;
  a.port = o.port;
  a.user = o.user;
  a.password = o.password;
  a.tls = o.tls;
  a.tls_ca_file = o.tls_ca_file;
  a.tls_peer_name = o.tls_peer_name;
  a.tls_verify_peer_name = o.tls_verify_peer_name;
  a.prefetch = o.prefetch;
  if (o.queue_capability) a.capabilities = {"queue"};
  a.timeout = o.timeout;
  return a;
}

// One received delivery, shared by the copies of its ReceivedMessage (std::any copies).
struct Held {
  std::mutex mu;
  std::optional<amqp10::Delivery> delivery;
};

struct Handle {
  std::shared_ptr<Held> held;
};

Error no_handle(std::string_view operation) {
  return Error(ErrorCode::Usage, "artemis: " + std::string(operation) +
                                     " of a message this transport did not deliver");
}

}  // namespace

class ArtemisTransport::Impl {
 public:
  explicit Impl(Options o)
      : options(std::move(o)), client(layer_options(options)), logger(options.logger) {
    if (!options.user.empty() && !options.tls) {
      // ART-1: PLAIN over plain TCP needs Proton's consent to an insecure mechanism.
      log(LogLevel::Warning, "artemis: SASL PLAIN over plain TCP to " + options.host + ":" +
                                 std::to_string(options.port) +
                                 " sends the password unencrypted; artemis+ssl:// encrypts it");
    }
  }

  amqp10::Message message(std::string body, const Headers& riders) const {
    const binding::artemis::Projection p = binding::artemis::projection(body, riders);
    amqp10::Message m;
    m.body = std::move(body);
    m.body_kind = p.text_body ? amqp10::BodyKind::StringValue : amqp10::BodyKind::Data;
    m.durable = options.durable;
    m.correlation_id = p.correlation_id;
    m.creation_time_ms = p.creation_time;
    if (p.jms_type) {
      m.annotations.emplace(std::string(binding::artemis::JMS_TYPE_ANNOTATION), *p.jms_type);
    }
    for (const auto& [key, value] : p.properties)
      m.properties.emplace(key, value);
    return m;
  }

  Status send(std::string_view queue, std::vector<amqp10::Message> messages) {
    if (guard.closed()) return guard.error("publish");
    try {
      client.send_batch(std::string(queue), messages);
      return {};
    } catch (const ClosedError&) {
      return guard.error("publish");
    } catch (const Error& e) {
      return e;
    }
  }

  ReceivedMessage received(std::string_view queue, amqp10::Delivery delivery) const {
    const amqp10::Message& in = delivery.message();
    ReceivedMessage m;
    m.body = in.body;
    m.queue = std::string(queue);
    m.delivery_count = binding::artemis::delivery_count(in.delivery_count);
    for (const auto& [key, value] : in.properties) {
      if (auto text = binding::amqp10::header_text(value)) m.headers.emplace(key, std::move(*text));
    }
    if (const auto it = in.properties.find(std::string(kSchemaVersionProperty));
        it != in.properties.end()) {
      const auto gate = binding::artemis::schema_version_gate(it->second);
      if (gate.reject) {
        m.route = gate.route;
        version_rejected(gate.version, queue);
      }
    }
    auto held = std::make_shared<Held>();
    held->delivery.emplace(std::move(delivery));
    m.handle = Handle{std::move(held)};
    return m;
  }

  void version_rejected(std::string_view version, std::string_view queue) const {
    if (!options.on_schema_version_rejected) return;
    try {
      options.on_schema_version_rejected(version, queue);
    } catch (const std::exception& e) {
      log(LogLevel::Error, std::string("artemis: on_schema_version_rejected threw: ") + e.what());
    } catch (...) {
      log(LogLevel::Error, "artemis: on_schema_version_rejected threw an unknown exception");
    }
  }

  void log(LogLevel level, const std::string& text) const { log_to(logger, level, text); }

  // Settles the delivery of `msg` once with `settle`; a second settle is StaleDelivery.
  template <class Settle>
  Status settle(const ReceivedMessage& msg, std::string_view operation, Settle&& how) {
    if (guard.closed()) return guard.error(operation);
    const auto* handle = std::any_cast<Handle>(&msg.handle);
    if (handle == nullptr || !handle->held) return no_handle(operation);
    const std::lock_guard lock(handle->held->mu);
    if (!handle->held->delivery) {
      return Error(ErrorCode::StaleDelivery, "artemis: " + std::string(operation) +
                                                 " of a delivery of " + msg.queue +
                                                 " that was settled already");
    }
    std::optional<amqp10::Delivery> delivery = std::move(handle->held->delivery);
    handle->held->delivery.reset();
    try {
      how(*delivery);
      return {};
    } catch (const ClosedError&) {
      return guard.error(operation);
    } catch (const Error& e) {
      return e;
    }
  }

  Options options;
  amqp10::Client client;
  Logger logger;
  spi::ClosedGuard guard{"artemis transport"};
};

ArtemisTransport::ArtemisTransport(Options options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
ArtemisTransport::ArtemisTransport(std::string_view url)
    : impl_(std::make_unique<Impl>(parse_url(url))) {}
ArtemisTransport::~ArtemisTransport() {
  close();
}

const Options& ArtemisTransport::options() const noexcept {
  return impl_->options;
}

Status ArtemisTransport::publish(std::string_view queue, std::string body) {
  std::vector<amqp10::Message> messages;
  messages.push_back(impl_->message(std::move(body), {}));
  return impl_->send(queue, std::move(messages));
}

Status ArtemisTransport::publish_with_headers(std::string_view queue, std::string body,
                                              const Headers& headers) {
  std::vector<amqp10::Message> messages;
  messages.push_back(impl_->message(std::move(body), headers));
  return impl_->send(queue, std::move(messages));
}

Status ArtemisTransport::publish_batch(std::string_view queue, std::vector<std::string> bodies) {
  std::vector<amqp10::Message> messages;
  messages.reserve(bodies.size());
  for (std::string& body : bodies)
    messages.push_back(impl_->message(std::move(body), {}));
  return impl_->send(queue, std::move(messages));
}

Result<std::optional<ReceivedMessage>> ArtemisTransport::pop(std::string_view queue,
                                                             std::chrono::milliseconds timeout) {
  if (impl_->guard.closed()) return impl_->guard.error("pop");
  const milliseconds cap = impl_->options.max_wait;
  const milliseconds wait =
      std::max(milliseconds::zero(), cap > milliseconds::zero() ? std::min(timeout, cap) : timeout);
  try {
    std::optional<amqp10::Delivery> d = impl_->client.receive(std::string(queue), wait);
    if (!d) return std::optional<ReceivedMessage>();
    return std::optional<ReceivedMessage>(impl_->received(queue, std::move(*d)));
  } catch (const ClosedError&) {
    return impl_->guard.error("pop");
  } catch (const Error& e) {
    return e;
  }
}

Status ArtemisTransport::ack(const ReceivedMessage& msg) {
  return impl_->settle(msg, "ack", [](amqp10::Delivery& d) { d.accept(); });
}

Status ArtemisTransport::rewind(const ReceivedMessage& msg) {
  return impl_->settle(msg, "rewind", [](amqp10::Delivery& d) { d.modify(true, false); });
}

void ArtemisTransport::close() {
  if (!impl_->guard.close()) return;
  impl_->client.close();
}

}  // namespace babelqueue::artemis
