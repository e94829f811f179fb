// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// PulsarTransport: the core binding's Pulsar rules (binding/pulsar.hpp: the PLS-5 properties,
// the PLS-7 delivery count; the PLS-8 string gate of binding/common.hpp) on the private
// asynchronous client (client.hpp), which owns the connections (one per broker, TLS for
// pulsar+ssl://), lookups, producers, consumers, flow permits and reconnects.

#include <babelqueue/binding/common.hpp>
#include <babelqueue/binding/pulsar.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/pulsar/transport.hpp>
#include <babelqueue/spi/ack_batcher.hpp>
#include <babelqueue/spi/backoff.hpp>
#include <babelqueue/spi/closed_guard.hpp>
#include <babelqueue/spi/schema_gate.hpp>
#include <babelqueue/spi/text.hpp>
#include <babelqueue/spi/uri.hpp>

#include <algorithm>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admin.hpp"
#include "client.hpp"

namespace babelqueue::pulsar {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::string_view kSchemaVersionProperty = "bq-schema-version";

ClientOptions client_options(const Options& o) {
  if (o.port < 1 || o.port > 65535) throw ConfigError("pulsar options: port is not 1..65535");
  if (o.prefetch == 0) throw ConfigError("pulsar options: prefetch is 0");
  if (o.ack_batch == 0) throw ConfigError("pulsar options: ack_batch is 0");
  if (o.subscription.empty()) throw ConfigError("pulsar options: subscription is empty");
  if (o.tenant.empty() || o.namespace_name.empty()) {
    throw ConfigError("pulsar options: tenant and namespace_name must not be empty");
  }
  if (o.timeout <= milliseconds::zero()) throw ConfigError("pulsar options: timeout is not > 0");
  if (o.max_wait < milliseconds::zero()) throw ConfigError("pulsar options: max_wait is negative");
  ClientOptions c;
  c.service_url = (o.tls ? "pulsar+ssl://" : "pulsar://") + o.host + ":" + std::to_string(o.port);
  c.token = o.token;
  c.tls_trust_certs_file = o.tls_ca_file;
  c.tls_verify_hostname = o.tls_verify;
  c.operation_timeout = o.timeout;
  return c;
}

// One received message, shared by the copies of its ReceivedMessage (std::any copies): settled
// (acked or rewound) once.
struct Held {
  std::mutex mu;
  std::optional<Received> received;
};

struct Handle {
  std::shared_ptr<Consumer> consumer;
  std::shared_ptr<Held> held;
};

struct PendingAck {
  std::shared_ptr<Consumer> consumer;
  Received received;
};

// The message properties in the admin API's peek answer: one JSON header (Pulsar 3 and
// later), or one header per property with this prefix (earlier brokers).
constexpr std::string_view kPropertiesHeader = "x-pulsar-property";
constexpr std::string_view kPropertyHeader = "x-pulsar-property-";

std::optional<AdminClient> admin_of(const Options& o) {
  if (o.admin_url.empty()) return std::nullopt;
  return AdminClient(o.admin_url, o.token, o.timeout);
}

std::int64_t count_of(const Json& object, std::string_view key) {
  const Json* v = object.find(key);
  return v == nullptr ? 0 : v->as_int64().value_or(0);
}

Error no_handle(std::string_view operation) {
  return Error(ErrorCode::Usage, "pulsar: " + std::string(operation) +
                                     " of a message this transport did not deliver");
}

}  // namespace

class PulsarTransport::Impl {
 public:
  explicit Impl(Options o)
      : options(std::move(o)),
        client(client_options(options)),
        acks(options.ack_batch),
        logger(options.logger) {}

  OutgoingMessage message(std::string body, const Headers& headers) const {
    binding::Riders riders;
    for (const auto& [key, value] : headers)
      riders.insert_or_assign(key, value);
    OutgoingMessage m;
    m.properties = binding::pulsar::properties(body, riders);
    m.payload = std::move(body);
    return m;
  }

  std::shared_ptr<Producer> producer(std::string_view queue) {
    const std::lock_guard lock(producers_mu);
    const auto found = producers.find(queue);
    if (found != producers.end()) return found->second;
    const std::string topic = topic_of(options, queue);
    // The subscription first: a topic without one keeps nothing beyond its retention, so what
    // is published before the first consumer (a dead-letter topic nobody consumes yet) would be
    // lost.
    client.create_subscription(topic, options.subscription, options.subscription_type);
    auto created = client.create_producer(topic);
    producers.emplace(std::string(queue), created);
    return created;
  }

  std::shared_ptr<Consumer> consumer(std::string_view queue) {
    const std::lock_guard lock(consumers_mu);
    const auto found = consumers.find(queue);
    if (found != consumers.end()) return found->second;
    ConsumerOptions c;
    c.subscription = options.subscription;
    c.type = options.subscription_type;
    c.prefetch = options.prefetch;
    auto created = client.subscribe(topic_of(options, queue), c);
    consumers.emplace(std::string(queue), created);
    return created;
  }

  // Sends `messages` in order, pipelined, and waits for every receipt (D-9). A send that fails
  // transiently (a connection lost, a producer being re-created after a broker restart) is sent
  // again, in order with the others that failed, until `timeout` has passed (D-3): a publish
  // rides out a reconnect. The first other error, or the last transient one, is returned.
  Status send(std::string_view queue, std::vector<OutgoingMessage> messages) {
    if (guard.closed()) return guard.error("publish");
    const Clock::time_point deadline = Clock::now() + options.timeout;
    spi::Backoff backoff(milliseconds(50), milliseconds(1'000));
    while (true) {
      std::optional<Error> last;
      try {
        const std::shared_ptr<Producer> p = producer(queue);
        std::vector<std::future<SendResult>> receipts;
        receipts.reserve(messages.size());
        for (const OutgoingMessage& m : messages)
          receipts.push_back(p->send_async(m));
        std::vector<OutgoingMessage> again;
        for (std::size_t i = 0; i < receipts.size(); ++i) {
          const Clock::time_point now = Clock::now();
          if (receipts[i].wait_for(std::max(deadline - now, Clock::duration::zero())) !=
              std::future_status::ready) {
            return TimeoutError("pulsar: publish to " + std::string(queue) +
                                ": no send receipt within " +
                                std::to_string(options.timeout.count()) + " ms");
          }
          const SendResult result = receipts[i].get();
          if (!result.failure) continue;
          if (!result.failure->transient) {
            return Error(result.failure->code, result.failure->what, false);
          }
          last = Error(result.failure->code, result.failure->what, true);
          again.push_back(std::move(messages[i]));
        }
        if (again.empty()) return {};
        messages = std::move(again);
      } catch (const ClosedError&) {
        return guard.error("publish");
      } catch (const Error& e) {
        if (!e.is_transient()) return e;
        last = e;
      }
      const milliseconds wait = backoff.next();
      if (guard.closed()) return guard.error("publish");
      if (Clock::now() + wait >= deadline) return *last;
      if (!pause.wait_for(wait)) return guard.error("publish");
    }
  }

  ReceivedMessage received(std::string_view queue, const std::shared_ptr<Consumer>& from,
                           Received in) const {
    ReceivedMessage m;
    m.body = std::move(in.payload);
    in.payload.clear();
    m.queue = std::string(queue);
    m.delivery_count = binding::pulsar::delivery_count(in.redelivery_count);
    for (const auto& [key, value] : in.properties)
      m.headers.emplace(key, value);
    const auto version = in.properties.find(std::string(kSchemaVersionProperty));
    const auto gate = binding::schema_version_gate(
        version == in.properties.end() ? std::nullopt
                                       : std::optional<std::string_view>(version->second));
    if (gate.reject) {
      m.route = gate.route;
      spi::notify_schema_version_rejected(options.on_schema_version_rejected, gate.version, queue,
                                          logger, "pulsar");
    }
    if (in.key) m.key = *in.key;
    auto held = std::make_shared<Held>();
    held->received.emplace(std::move(in));
    m.handle = Handle{from, std::move(held)};
    return m;
  }

  void log(LogLevel level, const std::string& text) const { log_to(logger, level, text); }

  // The message of `msg`, taken out of its handle: a second settle is StaleDelivery, as is a
  // message of a connection that is gone (the broker redelivers it).
  Result<PendingAck> take(const ReceivedMessage& msg, std::string_view operation) {
    if (guard.closed()) return guard.error(operation);
    const auto* handle = std::any_cast<Handle>(&msg.handle);
    if (handle == nullptr || !handle->held || !handle->consumer) return no_handle(operation);
    const std::lock_guard lock(handle->held->mu);
    if (!handle->held->received) {
      return Error(ErrorCode::StaleDelivery, "pulsar: " + std::string(operation) +
                                                 " of a message of " + msg.queue +
                                                 " that was settled already");
    }
    PendingAck out{handle->consumer, std::move(*handle->held->received)};
    handle->held->received.reset();
    if (!out.consumer->current(out.received)) {
      return Error(ErrorCode::StaleDelivery,
                   "pulsar: " + std::string(operation) + " of a message of " + msg.queue +
                       " delivered on a connection that is gone; the broker redelivers it");
    }
    return out;
  }

  // Sends the pending acks: one ACK frame per consumer and run; `confirmed`: each waits for the
  // broker's ACK_RESPONSE (flush() and close(): the broker has applied them when they return).
  Status flush_acks(bool confirmed) {
    return acks.flush([this, confirmed](std::vector<PendingAck>& pending) -> Status {
      std::size_t sent = 0;
      try {
        while (sent < pending.size()) {
          const std::shared_ptr<Consumer>& consumer = pending[sent].consumer;
          std::vector<Received> run;
          std::size_t end = sent;
          while (end < pending.size() && pending[end].consumer == consumer) {
            run.push_back(pending[end].received);
            ++end;
          }
          const std::size_t stale = consumer->ack(run, confirmed);
          if (stale > 0) {
            log(LogLevel::Debug, "pulsar: " + std::to_string(stale) + " ack(s) on " +
                                     consumer->topic() +
                                     " of a connection that is gone left out; redelivered");
          }
          sent = end;
        }
        pending.clear();
        return {};
      } catch (const Error& e) {
        pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(
                                                             std::min(sent, pending.size())));
        return e;
      }
    });
  }

  // The admin API path of `queue`'s topic: /admin/v2/persistent/<tenant>/<namespace>/<topic>.
  std::string admin_path(std::string_view queue) const {
    return "/admin/v2/persistent/" + spi::percent_encode(options.tenant) + "/" +
           spi::percent_encode(options.namespace_name) + "/" +
           spi::percent_encode(options.topic_prefix + std::string(queue));
  }

  const AdminClient& require_admin(std::string_view operation) const {
    if (!admin) {
      throw ConfigError("pulsar: " + std::string(operation) +
                        " needs the broker's admin REST API: set admin_url "
                        "(e.g. ?admin_url=http://127.0.0.1:8080)");
    }
    return *admin;
  }

  // GET of an admin path; 401/403 are ConfigError, other failures TransportErrors naming the
  // status. nullopt for 404 (no such topic or message).
  std::optional<AdminResponse> admin_get(std::string_view operation,
                                         const std::string& path) const {
    AdminResponse response = require_admin(operation).get(path);
    if (response.status == 404) return std::nullopt;
    if (response.status == 401 || response.status == 403) {
      throw ConfigError("pulsar: " + std::string(operation) + ": the admin API refused access (" +
                        std::to_string(response.status) + ")");
    }
    if (response.status < 200 || response.status >= 300) {
      throw TransportError("pulsar: " + std::string(operation) + ": admin API " + admin->address() +
                               " answered " + std::to_string(response.status) + ": " +
                               response.body.substr(0, 200),
                           response.status >= 500);
    }
    return response;
  }

  // The subscription's entry of `queue`'s topic stats; nullopt when the topic or subscription
  // does not exist.
  std::optional<Json> subscription_stats(std::string_view queue) const {
    const auto response = admin_get("queue stats", admin_path(queue) + "/stats");
    if (!response) return std::nullopt;
    const Json stats = Json::parse(response->body);
    const Json* subscriptions = stats.find("subscriptions");
    if (subscriptions == nullptr) return std::nullopt;
    const Json* sub = subscriptions->find(options.subscription);
    if (sub == nullptr) return std::nullopt;
    return *sub;
  }

  QueueStats stats(std::string_view queue, std::string_view dead_letter_queue) const {
    QueueStats out;
    if (!admin) {
      // The binary protocol has no counts: every figure is unknown (the CLI's `work` and
      // `bench` then report none) and the details say how to get them.
      out.details.emplace_back("admin_url", "not set: the counts need the broker's admin REST API");
      return out;
    }
    const std::optional<Json> sub = subscription_stats(queue);
    const std::int64_t backlog = sub ? count_of(*sub, "msgBacklog") : 0;
    const std::int64_t unacked = sub ? count_of(*sub, "unackedMessages") : 0;
    out.ready = std::max<std::int64_t>(0, backlog - unacked);
    out.in_flight = unacked;
    out.consumers = 0;
    if (sub) {
      if (const Json* attached = sub->find("consumers");
          attached != nullptr && attached->is_array()) {
        out.consumers = static_cast<std::int64_t>(attached->as_array().size());
      }
      if (const Json* type = sub->find("type"); type != nullptr && type->is_string()) {
        out.details.emplace_back("subscription",
                                 options.subscription + " (" + type->as_string() + ")");
      }
    }
    const std::string dlq = dead_letter_queue.empty() ? default_dead_letter_name(queue)
                                                      : std::string(dead_letter_queue);
    const std::optional<Json> dead = subscription_stats(dlq);
    out.dead_letter = dead ? count_of(*dead, "msgBacklog") : 0;
    out.details.emplace_back("topic", topic_of(options, queue));
    return out;
  }

  std::vector<PeekedMessage> peek(std::string_view queue, std::size_t max) const {
    std::vector<PeekedMessage> out;
    const std::string path = admin_path(queue) + "/subscription/" +
                             spi::percent_encode(options.subscription) + "/position/";
    for (std::size_t n = 1; max == 0 || n <= max; ++n) {
      const auto response = admin_get("peek", path + std::to_string(n));
      if (!response) break;
      PeekedMessage m;
      m.body = response->body;
      for (const auto& [name, value] : response->headers) {
        if (spi::iequals_ascii(name, kPropertiesHeader)) {
          // Pulsar 3+: every property in one JSON object.
          const Json properties = Json::parse(value);
          if (!properties.is_object()) continue;
          for (const auto& [key, text] : properties.as_object()) {
            if (text.is_string()) m.headers.insert_or_assign(key, text.as_string());
          }
        } else if (name.size() > kPropertyHeader.size() &&
                   spi::iequals_ascii(std::string_view(name).substr(0, kPropertyHeader.size()),
                                      kPropertyHeader)) {
          m.headers.insert_or_assign(name.substr(kPropertyHeader.size()), value);
        }
      }
      out.push_back(std::move(m));
    }
    return out;
  }

  Options options;
  Client client;
  std::optional<AdminClient> admin = admin_of(options);
  spi::AckBatcher<PendingAck> acks;
  Logger logger;
  spi::ClosedGuard guard{"pulsar transport"};
  spi::InterruptibleWait pause;
  std::mutex producers_mu;
  std::map<std::string, std::shared_ptr<Producer>, std::less<>> producers;
  std::mutex consumers_mu;
  std::map<std::string, std::shared_ptr<Consumer>, std::less<>> consumers;
};

PulsarTransport::PulsarTransport(Options options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
PulsarTransport::PulsarTransport(std::string_view url)
    : impl_(std::make_unique<Impl>(parse_url(url))) {}
PulsarTransport::~PulsarTransport() {
  close();
}

const Options& PulsarTransport::options() const noexcept {
  return impl_->options;
}

Status PulsarTransport::publish(std::string_view queue, std::string body) {
  std::vector<OutgoingMessage> messages;
  messages.push_back(impl_->message(std::move(body), {}));
  return impl_->send(queue, std::move(messages));
}

Status PulsarTransport::publish_with_headers(std::string_view queue, std::string body,
                                             const Headers& headers) {
  std::vector<OutgoingMessage> messages;
  messages.push_back(impl_->message(std::move(body), headers));
  return impl_->send(queue, std::move(messages));
}

Status PulsarTransport::publish_batch(std::string_view queue, std::vector<std::string> bodies) {
  std::vector<OutgoingMessage> messages;
  messages.reserve(bodies.size());
  for (std::string& body : bodies)
    messages.push_back(impl_->message(std::move(body), {}));
  return impl_->send(queue, std::move(messages));
}

Result<std::optional<ReceivedMessage>> PulsarTransport::pop(std::string_view queue,
                                                            std::chrono::milliseconds timeout) {
  if (impl_->guard.closed()) return impl_->guard.error("pop");
  const milliseconds cap = impl_->options.max_wait;
  const milliseconds wait =
      std::max(milliseconds::zero(), cap > milliseconds::zero() ? std::min(timeout, cap) : timeout);
  try {
    const std::shared_ptr<Consumer> consumer = impl_->consumer(queue);
    // The acks of the previous messages go out before a pop that has to wait for the broker (the
    // kit's rule: before the next round trip); a pop served from the prefetched messages leaves
    // them to fill the batch.
    if (consumer->buffered() == 0) {
      if (const Status flushed = impl_->flush_acks(false); !flushed.ok()) {
        impl_->log(LogLevel::Warning,
                   std::string("pulsar: sending acks failed: ") + flushed.error().what());
      }
    }
    std::optional<Received> r = consumer->receive(wait);
    if (!r) return std::optional<ReceivedMessage>();
    return std::optional<ReceivedMessage>(impl_->received(queue, consumer, std::move(*r)));
  } catch (const ClosedError&) {
    return impl_->guard.error("pop");
  } catch (const Error& e) {
    return e;
  }
}

Status PulsarTransport::ack(const ReceivedMessage& msg) {
  Result<PendingAck> taken = impl_->take(msg, "ack");
  if (!taken) return taken.error();
  if (impl_->acks.add(std::move(*taken))) return impl_->flush_acks(false);
  return {};
}

Status PulsarTransport::rewind(const ReceivedMessage& msg) {
  Result<PendingAck> taken = impl_->take(msg, "rewind");
  if (!taken) return taken.error();
  try {
    taken->consumer->negative_ack(taken->received);
    return {};
  } catch (const ClosedError&) {
    return impl_->guard.error("rewind");
  } catch (const Error& e) {
    return e;
  }
}

Status PulsarTransport::flush() {
  if (impl_->guard.closed()) return impl_->guard.error("flush");
  return impl_->flush_acks(true);
}

Result<QueueStats> PulsarTransport::stats(std::string_view queue,
                                          std::string_view dead_letter_queue) {
  if (impl_->guard.closed()) return impl_->guard.error("stats");
  try {
    return impl_->stats(queue, dead_letter_queue);
  } catch (const Error& e) {
    return e;
  } catch (const std::exception& e) {
    return TransportError(std::string("pulsar: queue stats: ") + e.what());
  }
}

Result<std::vector<PeekedMessage>> PulsarTransport::peek(std::string_view queue, std::size_t max) {
  if (impl_->guard.closed()) return impl_->guard.error("peek");
  try {
    return impl_->peek(queue, max);
  } catch (const Error& e) {
    return e;
  } catch (const std::exception& e) {
    return TransportError(std::string("pulsar: peek: ") + e.what());
  }
}

void PulsarTransport::close() {
  if (!impl_->guard.close()) return;
  impl_->pause.interrupt();
  if (const Status flushed = impl_->flush_acks(true); !flushed.ok()) {
    impl_->log(
        LogLevel::Warning,
        std::string("pulsar: close: sending the last acks failed (the broker redelivers them): ") +
            flushed.error().what());
  }
  impl_->client.close();
}

}  // namespace babelqueue::pulsar
