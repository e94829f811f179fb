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
#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admin.hpp"
#include "client.hpp"
#include "partition.hpp"

namespace babelqueue::pulsar {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::string_view kSchemaVersionProperty = "bq-schema-version";
// More partitions than any broker allows (maxNumPartitionsPerPartitionedTopic) are a bad answer.
constexpr std::int64_t kMaxPartitions = 100'000;

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

using Producers = std::vector<std::shared_ptr<Producer>>;
using Consumers = std::vector<std::shared_ptr<Consumer>>;

// A queue's topic, its partitions and its producers and consumers: one for the topic, or one
// per partition (`<topic>-partition-N`). The vectors are replaced (never changed in place) as
// partitions are added, so a caller keeps the snapshot it took.
struct QueueState {
  std::string topic;
  std::mutex mu;  // guards what follows but `next_partition`
  bool asked = false;
  std::uint32_t partitions = 0;  // 0: not partitioned
  std::uint64_t checked = 0;     // Client::connection() when the partitions were asked
  std::shared_ptr<const Producers> producers;
  std::shared_ptr<const Consumers> consumers;
  // Rung by each partition's consumer as messages arrive: `pop` waits on all of them at once.
  std::shared_ptr<Doorbell> doorbell = std::make_shared<Doorbell>();
  // Round robin of the messages without a key; the partition `pop` looks at first.
  std::atomic<std::uint32_t> next_partition{0};
  std::size_t next_consumer = 0;  // `pop` only (one at a time per queue)
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

  // The state of `queue`, made on first use.
  std::shared_ptr<QueueState> queue_state(std::string_view queue) {
    const std::lock_guard lock(queues_mu);
    const auto found = queues.find(queue);
    if (found != queues.end()) return found->second;
    auto made = std::make_shared<QueueState>();
    made->topic = topic_of(options, queue);
    queues.emplace(std::string(queue), made);
    return made;
  }

  // Under q.mu: the topic's partitions (PARTITIONED_METADATA), asked on first use and again
  // after every reconnect. A count that grew adds partitions; any other change is logged and the
  // count kept (Pulsar cannot shrink a partitioned topic).
  void refresh(QueueState& q) {
    if (q.asked && q.checked == client.connection()) return;
    const std::uint32_t n = client.partitions(q.topic);
    if (n > kMaxPartitions) {
      throw TransportError("pulsar: PARTITIONED_METADATA " + q.topic + " answered " +
                           std::to_string(n) + " partitions (more than " +
                           std::to_string(kMaxPartitions) + ")");
    }
    if (!q.asked) {
      q.partitions = n;
    } else if (n > q.partitions && q.partitions > 0) {
      log(LogLevel::Info, "pulsar: " + q.topic + " grew from " + std::to_string(q.partitions) +
                              " to " + std::to_string(n) + " partitions");
      q.partitions = n;
    } else if (n != q.partitions) {
      log(LogLevel::Warning, "pulsar: " + q.topic + " now reports " + std::to_string(n) +
                                 " partitions; the transport keeps " +
                                 std::to_string(q.partitions));
    }
    q.asked = true;
    q.checked = client.connection();
  }

  // `slots` grown to one per partition of `q` (one for a topic of its own) by `make(topic)`; the
  // vector is replaced as each is made, so what was made before a failure stays.
  template <class T, class Make>
  static std::shared_ptr<const std::vector<std::shared_ptr<T>>> grow(
      const QueueState& q, std::shared_ptr<const std::vector<std::shared_ptr<T>>>& slots,
      Make make) {
    const std::size_t want = std::max<std::size_t>(1, q.partitions);
    if (slots && slots->size() == want) return slots;
    std::vector<std::shared_ptr<T>> made;
    if (slots) made = *slots;
    while (made.size() < want) {
      made.push_back(make(q.partitions == 0
                              ? q.topic
                              : partition_topic(q.topic, static_cast<std::uint32_t>(made.size()))));
      slots = std::make_shared<const std::vector<std::shared_ptr<T>>>(made);
    }
    return slots;
  }

  // The producers of `queue`: one for the topic, or one per partition.
  std::pair<std::shared_ptr<const Producers>, std::shared_ptr<QueueState>> producers(
      std::string_view queue) {
    std::shared_ptr<QueueState> q = queue_state(queue);
    const std::lock_guard lock(q->mu);
    refresh(*q);
    auto made = grow(*q, q->producers, [this](const std::string& topic) {
      // The subscription first: a topic without one keeps nothing beyond its retention, so what
      // is published before the first consumer (a dead-letter topic nobody consumes yet) would
      // be lost.
      client.create_subscription(topic, options.subscription, options.subscription_type);
      return client.create_producer(topic);
    });
    return {std::move(made), std::move(q)};
  }

  // The consumers of `queue`: one for the topic, or one per partition (each with the prefetch
  // window, all ringing the queue's doorbell).
  std::pair<std::shared_ptr<const Consumers>, std::shared_ptr<QueueState>> consumers(
      std::string_view queue) {
    std::shared_ptr<QueueState> q = queue_state(queue);
    const std::lock_guard lock(q->mu);
    refresh(*q);
    ConsumerOptions c;
    c.subscription = options.subscription;
    c.type = options.subscription_type;
    c.prefetch = options.prefetch;
    if (q->partitions > 0) c.doorbell = q->doorbell;
    auto made = grow(*q, q->consumers,
                     [this, &c](const std::string& topic) { return client.subscribe(topic, c); });
    return {std::move(made), std::move(q)};
  }

  // The producer of `message`: by its key's hash (partition_of_key) when it has one, else the
  // next partition in turn.
  static const std::shared_ptr<Producer>& route(const Producers& to, QueueState& q,
                                                const OutgoingMessage& message) {
    if (to.size() == 1) return to.front();
    const auto n = static_cast<std::uint32_t>(to.size());
    if (message.key) return to[partition_of_key(*message.key, n)];
    return to[q.next_partition.fetch_add(1, std::memory_order_relaxed) % n];
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
        const auto [to, q] = producers(queue);
        std::vector<std::future<SendResult>> receipts;
        receipts.reserve(messages.size());
        for (const OutgoingMessage& m : messages)
          receipts.push_back(route(*to, *q, m)->send_async(m));
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

  // flush_acks(false) before a pop waits for the broker; a failure is logged (the broker
  // redelivers what was not acked).
  void flush_before_wait() {
    if (const Status flushed = flush_acks(false); !flushed.ok()) {
      log(LogLevel::Warning, std::string("pulsar: sending acks failed: ") + flushed.error().what());
    }
  }

  // The next message of any partition's consumer of `from`, looked for from the partition after
  // the one that gave the last (so each gets its turn), waiting up to `wait` on the queue's
  // doorbell; `consumer` names the one it came from.
  static std::optional<Received> take_any(const Consumers& from, QueueState& q,
                                          const std::shared_ptr<Consumer>*& consumer) {
    for (std::size_t k = 0; k < from.size(); ++k) {
      const std::size_t i = (q.next_consumer + k) % from.size();
      if (std::optional<Received> r = from[i]->receive(milliseconds::zero())) {
        q.next_consumer = i + 1;
        consumer = &from[i];
        return r;
      }
    }
    return std::nullopt;
  }

  std::optional<Received> receive_any(const Consumers& from, QueueState& q, milliseconds wait,
                                      const std::shared_ptr<Consumer>*& consumer) {
    std::uint64_t seen = q.doorbell->rung();
    if (std::optional<Received> r = take_any(from, q, consumer)) return r;
    flush_before_wait();
    const Clock::time_point deadline = Clock::now() + wait;
    while (true) {
      if (std::optional<Received> r = take_any(from, q, consumer)) return r;
      const Clock::time_point now = Clock::now();
      if (now >= deadline) return std::nullopt;
      if (q.doorbell->wait(seen, std::chrono::ceil<milliseconds>(deadline - now))) {
        seen = q.doorbell->rung();
      }
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

  // Sends the pending acks: one ACK frame per consumer; `confirmed`: each waits for the
  // broker's ACK_RESPONSE (flush() and close(): the broker has applied them when they return).
  Status flush_acks(bool confirmed) {
    return acks.flush([this, confirmed](std::vector<PendingAck>& pending) -> Status {
      // The acks of one consumer together (a partitioned topic's interleave): one frame each.
      std::stable_sort(pending.begin(), pending.end(),
                       [](const PendingAck& a, const PendingAck& b) {
                         return std::less<>()(a.consumer.get(), b.consumer.get());
                       });
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

  // The partitions of `queue`'s topic as the admin API reports them (0: not partitioned, or no
  // such topic).
  std::uint32_t admin_partitions(std::string_view operation, std::string_view queue) const {
    const auto response = admin_get(operation, admin_path(queue) + "/partitions");
    if (!response) return 0;
    const std::int64_t n = count_of(Json::parse(response->body), "partitions");
    return static_cast<std::uint32_t>(std::clamp<std::int64_t>(n, 0, kMaxPartitions));
  }

  // The subscription's entry of the stats of `queue`'s topic: of `/partitioned-stats` (the sums
  // over the partitions) when it is partitioned, with a detail line per partition, else of
  // `/stats`; nullopt when the topic or subscription does not exist.
  std::optional<Json> subscription_stats(
      std::string_view queue, std::vector<std::pair<std::string, std::string>>* details) const {
    const std::uint32_t partitions = admin_partitions("queue stats", queue);
    const auto response = admin_get(
        "queue stats",
        admin_path(queue) + (partitions > 0 ? "/partitioned-stats?perPartition=true" : "/stats"));
    if (!response) return std::nullopt;
    const Json stats = Json::parse(response->body);
    if (partitions > 0 && details != nullptr) {
      const Json* each = stats.find("partitions");
      for (std::uint32_t n = 0; n < partitions; ++n) {
        const Json* one =
            each == nullptr ? nullptr : each->find(partition_topic(topic_of(options, queue), n));
        const std::optional<Json> sub = one == nullptr ? std::nullopt : subscription_of(*one);
        details->emplace_back("partition " + std::to_string(n),
                              "backlog " + std::to_string(sub ? count_of(*sub, "msgBacklog") : 0) +
                                  ", unacked " +
                                  std::to_string(sub ? count_of(*sub, "unackedMessages") : 0));
      }
    }
    return subscription_of(stats);
  }

  std::optional<Json> subscription_of(const Json& stats) const {
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
    std::vector<std::pair<std::string, std::string>> partitions;
    const std::optional<Json> sub = subscription_stats(queue, &partitions);
    const std::int64_t backlog = sub ? count_of(*sub, "msgBacklog") : 0;
    const std::int64_t unacked = sub ? count_of(*sub, "unackedMessages") : 0;
    out.ready = std::max<std::int64_t>(0, backlog - unacked);
    out.in_flight = unacked;
    out.consumers = 0;
    if (sub) {
      // Of a partitioned topic: the partitions' consumer lists merged by position, so a worker
      // with a consumer on every partition counts once.
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
    const std::optional<Json> dead = subscription_stats(dlq, nullptr);
    out.dead_letter = dead ? count_of(*dead, "msgBacklog") : 0;
    out.details.emplace_back("topic", topic_of(options, queue));
    if (!partitions.empty()) {
      out.details.emplace_back("partitions", std::to_string(partitions.size()));
      out.details.insert(out.details.end(), partitions.begin(), partitions.end());
    }
    return out;
  }

  // Peeks `queue` (a topic of its own: the topic or one partition) from its subscription's head;
  // at most `max` (0: all) more into `out`.
  void peek_topic(std::string_view queue, std::size_t max, std::vector<PeekedMessage>& out) const {
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
  }

  // A partitioned topic (the admin API peeks no partitioned topic) is peeked partition after
  // partition.
  std::vector<PeekedMessage> peek(std::string_view queue, std::size_t max) const {
    std::vector<PeekedMessage> out;
    const std::uint32_t partitions = admin_partitions("peek", queue);
    if (partitions == 0) {
      peek_topic(queue, max, out);
      return out;
    }
    for (std::uint32_t n = 0; n < partitions && (max == 0 || out.size() < max); ++n) {
      peek_topic(partition_topic(queue, n), max == 0 ? 0 : max - out.size(), out);
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
  std::mutex queues_mu;
  std::map<std::string, std::shared_ptr<QueueState>, std::less<>> queues;
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

Status PulsarTransport::publish_delayed(std::string_view queue, std::string body,
                                        milliseconds delay) {
  if (impl_->guard.closed()) return impl_->guard.error("publish");
  if (delay <= milliseconds::zero()) return publish(queue, std::move(body));
  const SubscriptionType type = impl_->options.subscription_type;
  if (type != SubscriptionType::Shared && type != SubscriptionType::KeyShared) {
    return Error(ErrorCode::DelayUnsupported,
                 "pulsar: publish_delayed to " + spi::quoted(queue) +
                     " needs a Shared or Key_Shared subscription (subscription_type is " +
                     std::string(subscription_type_name(type)) +
                     "): the broker dispatches a deliverAt message at once to the others");
  }
  std::vector<OutgoingMessage> messages;
  messages.push_back(impl_->message(std::move(body), {}));
  // Saturated: a delay past the clock's range is "never" rather than an overflow.
  const milliseconds now =
      std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  messages.back().deliver_at_ms =
      (delay > milliseconds::max() - now ? milliseconds::max() : now + delay).count();
  return impl_->send(queue, std::move(messages));
}

Status PulsarTransport::republish(std::string_view queue, std::string body,
                                  const ReceivedMessage& source) {
  std::vector<OutgoingMessage> messages;
  messages.push_back(impl_->message(std::move(body), {}));
  messages.back().key = source.key;
  return impl_->send(queue, std::move(messages));
}

Status PulsarTransport::restore(const ReceivedMessage& source) {
  std::vector<OutgoingMessage> messages;
  OutgoingMessage& m = messages.emplace_back();
  m.payload = source.body;
  for (const auto& [key, value] : source.headers)
    m.properties.insert_or_assign(key, value);
  m.key = source.key;
  return impl_->send(source.queue, std::move(messages));
}

Result<std::optional<ReceivedMessage>> PulsarTransport::pop(std::string_view queue,
                                                            std::chrono::milliseconds timeout) {
  if (impl_->guard.closed()) return impl_->guard.error("pop");
  const milliseconds cap = impl_->options.max_wait;
  const milliseconds wait =
      std::max(milliseconds::zero(), cap > milliseconds::zero() ? std::min(timeout, cap) : timeout);
  try {
    const auto [from, q] = impl_->consumers(queue);
    std::optional<Received> r;
    const std::shared_ptr<Consumer>* consumer = nullptr;
    if (from->size() == 1) {
      consumer = &from->front();
      // The acks of the previous messages go out before a pop that has to wait for the broker
      // (the kit's rule: before the next round trip); a pop served from the prefetched messages
      // leaves them to fill the batch.
      if ((*consumer)->buffered() == 0) impl_->flush_before_wait();
      r = (*consumer)->receive(wait);
    } else {
      r = impl_->receive_any(*from, *q, wait, consumer);
    }
    if (!r) return std::optional<ReceivedMessage>();
    return std::optional<ReceivedMessage>(impl_->received(queue, *consumer, std::move(*r)));
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
