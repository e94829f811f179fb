// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// ArtemisTransport: the core binding's Artemis rules (binding/artemis.hpp: the ART-4
// projection, the ART-5 delivery count, the ART-6 gate) on the AMQP 1.0 layer's client
// (transports/amqp10), which owns the connection, the links, credit and reconnects.

#include <babelqueue/amqp10/client.hpp>
#include <babelqueue/amqp10/transport_kit.hpp>
#include <babelqueue/artemis/transport.hpp>
#include <babelqueue/binding/artemis.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
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

// Artemis's management address: a request names the resource (`queue.<name>`) and an operation
// of its control object in application properties; the reply goes to the request's reply-to
// with `_AMQ_OperationSucceeded` and the result as a JSON array body ("[8]"), or the error text.
constexpr std::string_view kManagementAddress = "activemq.management";
constexpr std::string_view kResourceName = "_AMQ_ResourceName";
constexpr std::string_view kOperationName = "_AMQ_OperationName";
constexpr std::string_view kOperationSucceeded = "_AMQ_OperationSucceeded";
// Artemis's error when the resource does not exist (AMQ229xxx "...not found" / no such queue):
// a queue never created or auto-deleted once empty, counted as empty.
constexpr std::string_view kNoSuchResource[] = {"not find", "not found", "does not exist"};
// How often stats() reads the counts again when a settle landed between its requests.
constexpr int kStatsRounds = 5;

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

struct Handle {
  std::shared_ptr<amqp10::HeldDelivery> held;
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
    binding::artemis::Projection p = binding::artemis::projection(body, riders);
    amqp10::Message m;
    m.body = std::move(body);
    m.body_kind = p.text_body ? amqp10::BodyKind::StringValue : amqp10::BodyKind::Data;
    m.durable = options.durable;
    m.correlation_id = std::move(p.correlation_id);
    m.creation_time_ms = p.creation_time;
    if (p.jms_type) {
      m.annotations.emplace(std::string(binding::artemis::JMS_TYPE_ANNOTATION),
                            std::move(*p.jms_type));
    }
    for (auto& [key, value] : p.properties)
      m.properties.emplace(key, std::move(value));
    return m;
  }

  Status send(std::string_view queue, std::vector<amqp10::Message> messages) {
    if (guard.closed()) return guard.error("publish");
    try {
      client.send_batch(std::string(queue), std::move(messages));
      return {};
    } catch (const ClosedError&) {
      return guard.error("publish");
    } catch (const Error& e) {
      return e;
    }
  }

  ReceivedMessage received(std::string_view queue, amqp10::Delivery&& delivery) const {
    static constexpr amqp10::ReceiveRules kRules{"artemis", kSchemaVersionProperty,
                                                 &binding::artemis::delivery_count,
                                                 &binding::artemis::schema_version_gate};
    ReceivedMessage m = amqp10::received_message(queue, delivery, kRules,
                                                 options.on_schema_version_rejected, logger);
    auto held = std::make_shared<amqp10::HeldDelivery>();
    held->delivery.emplace(std::move(delivery));
    m.handle = Handle{std::move(held)};
    return m;
  }

  void log(LogLevel level, const std::string& text) const { log_to(logger, level, text); }

  // Settles the delivery of `msg` once with `settle`; a second settle is StaleDelivery.
  template <class Settle>
  Status settle(const ReceivedMessage& msg, std::string_view operation, Settle&& how) {
    if (guard.closed()) return guard.error(operation);
    const auto* handle = std::any_cast<Handle>(&msg.handle);
    if (handle == nullptr || !handle->held) return no_handle(operation);
    return amqp10::settle_once(*handle->held, guard, "artemis", operation, msg.queue,
                               std::forward<Settle>(how), [] {});
  }

  // The value of the management operation `operation` (a count) of queue `queue`, nullopt when
  // Artemis has no such queue. One request at a time; replies to earlier requests that timed out
  // are skipped by their correlation-id.
  std::optional<std::int64_t> queue_figure(const std::string& queue, const std::string& operation) {
    const std::lock_guard lock(management_mu);
    if (reply_queue.empty()) {
      reply_queue = "babelqueue.management." + uuid_v4();
      // Its receiver first (the layer attaches links in call order): Artemis creates the queue
      // on that attach and drops a reply to an address without one.
      (void)client.receive(reply_queue, milliseconds::zero());
    }
    const std::string id = reply_queue + "/" + std::to_string(++requests);
    amqp10::Message request;
    request.body = "[]";
    request.body_kind = amqp10::BodyKind::StringValue;
    request.durable = false;
    request.message_id = id;
    request.reply_to = reply_queue;
    request.properties.emplace(std::string(kResourceName), "queue." + queue);
    request.properties.emplace(std::string(kOperationName), operation);
    client.send(std::string(kManagementAddress), request);
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
      std::optional<amqp10::Delivery> d =
          left > milliseconds::zero() ? client.receive(reply_queue, left) : std::nullopt;
      if (!d) {
        throw TimeoutError("artemis: no reply from " + std::string(kManagementAddress) + " to " +
                           operation + " of queue " + queue);
      }
      const amqp10::Message reply = d->message();
      d->accept();
      if (reply.correlation_id && *reply.correlation_id != id) continue;
      return figure_of(reply, queue, operation);
    }
  }

  static std::optional<std::int64_t> figure_of(const amqp10::Message& reply,
                                               const std::string& queue,
                                               const std::string& operation) {
    const auto ok = reply.properties.find(std::string(kOperationSucceeded));
    const bool succeeded = ok != reply.properties.end() &&
                           std::holds_alternative<bool>(ok->second) && std::get<bool>(ok->second);
    if (!succeeded) {
      for (std::string_view missing : kNoSuchResource) {
        if (reply.body.find(missing) != std::string::npos) return std::nullopt;
      }
      throw TransportError("artemis: " + operation + " of queue " + queue +
                           " failed: " + reply.body);
    }
    const auto json = Json::try_parse(reply.body);
    if (json && json->is_array() && json->size() == 1) {
      if (const auto n = json->as_array().front().as_int64()) return *n;
    }
    throw TransportError("artemis: " + operation + " of queue " + queue +
                         " answered no count: " + reply.body);
  }

  std::int64_t count(const std::string& queue, const std::string& operation) {
    return queue_figure(queue, operation).value_or(0);
  }

  Options options;
  amqp10::Client client;
  std::mutex management_mu;
  std::string reply_queue;
  std::uint64_t requests = 0;
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
  return amqp10::pop_delivery(
      impl_->client, impl_->guard, queue, timeout, impl_->options.max_wait,
      [this, queue](amqp10::Delivery&& d) { return impl_->received(queue, std::move(d)); });
}

Status ArtemisTransport::ack(const ReceivedMessage& msg) {
  return impl_->settle(msg, "ack", [](amqp10::Delivery& d) { d.accept(); });
}

Status ArtemisTransport::rewind(const ReceivedMessage& msg) {
  return impl_->settle(msg, "rewind", [](amqp10::Delivery& d) { d.modify(true, false); });
}

Status ArtemisTransport::flush() {
  if (impl_->guard.closed()) return impl_->guard.error("flush");
  try {
    impl_->client.flush();
    return {};
  } catch (const ClosedError&) {
    return impl_->guard.error("flush");
  } catch (const Error& e) {
    return e;
  }
}

Result<QueueStats> ArtemisTransport::stats(std::string_view queue,
                                           std::string_view dead_letter_queue) {
  if (impl_->guard.closed()) return impl_->guard.error("stats");
  const std::string name(queue);
  const std::string dlq =
      dead_letter_queue.empty() ? default_dead_letter_name(queue) : std::string(dead_letter_queue);
  try {
    // Artemis's message count includes the messages in delivery and the scheduled ones. Each
    // figure is a request of its own, and the broker applies an accept a moment after it read
    // it (a settle made just before may land between two requests): the delivering count is read
    // before and after the others, and the reads are repeated until it held still.
    std::int64_t delivering = impl_->count(name, "getDeliveringCount");
    std::int64_t total = 0;
    std::int64_t scheduled = 0;
    for (int round = 0;; ++round) {
      total = impl_->count(name, "getMessageCount");
      scheduled = impl_->count(name, "getScheduledCount");
      const std::int64_t after = impl_->count(name, "getDeliveringCount");
      if (after == delivering || round == kStatsRounds) break;
      delivering = after;
    }
    QueueStats s;
    s.ready = std::max<std::int64_t>(0, total - delivering - scheduled);
    s.in_flight = delivering;
    s.delayed = scheduled;
    s.consumers = impl_->count(name, "getConsumerCount");
    s.dead_letter = impl_->count(dlq, "getMessageCount");
    return s;
  } catch (const ClosedError&) {
    return impl_->guard.error("stats");
  } catch (const Error& e) {
    return e;
  }
}

Result<std::vector<PeekedMessage>> ArtemisTransport::peek(std::string_view queue, std::size_t max) {
  if (impl_->guard.closed()) return impl_->guard.error("peek");
  try {
    std::vector<PeekedMessage> out;
    for (amqp10::Message& m : impl_->client.browse(std::string(queue), max)) {
      PeekedMessage p;
      p.body = std::move(m.body);
      for (const auto& [key, value] : m.properties) {
        if (auto text = binding::amqp10::header_text(value))
          p.headers.emplace(key, std::move(*text));
      }
      out.push_back(std::move(p));
    }
    return out;
  } catch (const ClosedError&) {
    return impl_->guard.error("peek");
  } catch (const Error& e) {
    return e;
  }
}

void ArtemisTransport::close() {
  if (!impl_->guard.close()) return;
  impl_->client.close();
}

}  // namespace babelqueue::artemis
