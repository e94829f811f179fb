// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// ServiceBusTransport: the core binding's Service Bus rules (binding/azureservicebus.hpp: the
// ASB-4 projection, the ASB-6 delivery count, the ASB-9 typed gate) on the AMQP 1.0 layer's
// client (transports/amqp10), which owns the connection, CBS, the links, credit and reconnects.
// Here: the credentials (SAS minting, a fixed signature, a token provider), the settlement
// outcomes, lock renewal and the $management peek.

#include <babelqueue/amqp10/client.hpp>
#include <babelqueue/amqp10/timer.hpp>
#include <babelqueue/amqp10/transport_kit.hpp>
#include <babelqueue/azureservicebus/transport.hpp>
#include <babelqueue/binding/azureservicebus.hpp>
#include <babelqueue/spi/closed_guard.hpp>
#include <babelqueue/spi/schema_gate.hpp>
#include <babelqueue/spi/text.hpp>

#include <proton/binary.hpp>
#include <proton/error.hpp>
#include <proton/map.hpp>
#include <proton/message.hpp>
#include <proton/scalar.hpp>
#include <proton/symbol.hpp>
#include <proton/timestamp.hpp>
#include <proton/types.hpp>
#include <proton/uuid.hpp>
#include <proton/value.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "message_codec.hpp"

namespace babelqueue::azureservicebus {
namespace {

using std::chrono::milliseconds;
using SystemClock = std::chrono::system_clock;

constexpr std::string_view kSchemaVersionProperty = "bq-schema-version";
constexpr std::string_view kSasType = "servicebus.windows.net:sastoken";
constexpr std::size_t kMaxDescription = 4096;
constexpr std::int32_t kPeekPage = 100;
// stats counts by peeking; it stops here (and says so).
constexpr std::int64_t kMaxCounted = 10'000;

// "orders/$management", "orders/$DeadLetterQueue" → "orders".
std::string base_entity(std::string_view address) {
  const std::size_t at = address.find("/$");
  return std::string(address.substr(0, at));
}

// "orders/$DeadLetterQueue" (any case): a dead-letter sub-queue, which takes no sends.
bool is_dead_letter_queue(std::string_view address) {
  constexpr std::string_view kSuffix = "/$DeadLetterQueue";
  return address.size() >= kSuffix.size() &&
         spi::iequals_ascii(address.substr(address.size() - kSuffix.size()), kSuffix);
}

// The `se` of a SAS token (its expiry), or nullopt.
std::optional<std::int64_t> sas_expiry(std::string_view token) {
  const std::size_t at = token.find("se=");
  if (at == std::string_view::npos) return std::nullopt;
  std::int64_t se = 0;
  std::size_t i = at + 3;
  if (i >= token.size() || token[i] < '0' || token[i] > '9') return std::nullopt;
  for (; i < token.size() && token[i] >= '0' && token[i] <= '9'; ++i)
    se = se * 10 + (token[i] - '0');
  return se;
}

amqp10::Options layer_options(const Options& o) {
  if (o.host.empty()) throw ConfigError("azureservicebus options: no namespace host");
  if (o.max_wait < milliseconds::zero())
    throw ConfigError("azureservicebus options: max_wait is negative");
  if (o.auth == Auth::Cbs && !o.token_provider && o.shared_access_signature.empty() &&
      (o.key_name.empty() || o.key.empty())) {
    throw ConfigError(
        "azureservicebus options: no credentials (a shared access key, a "
        "SharedAccessSignature or a token provider)");
  }
  amqp10::Options a;
  a.host = o.host;
  a.port = o.port;
  a.tls = o.tls;
  a.tls_ca_file = o.tls_ca_file;
  a.tls_peer_name = o.tls_peer_name;
  a.tls_verify_peer_name = o.tls_verify_peer_name;
  a.prefetch = o.prefetch;
  a.timeout = o.timeout;
  a.receiver_settle_second = true;
  a.receiver_properties = {{"com.microsoft:receiver-name", "babelqueue"}};
  if (o.auth == Auth::SaslPlain) {
    a.user = o.key_name;
    a.password = o.key;
    return a;
  }
  amqp10::Cbs cbs;
  const std::string prefix = "sb://" + o.host + "/";
  cbs.audience = [prefix, scope = o.entity](const std::string& address) {
    return prefix + (scope.empty() ? base_entity(address) : scope);
  };
  if (o.token_provider) {
    cbs.token = [provider = o.token_provider](const std::string& audience) {
      Token t = provider(audience);
      return amqp10::Token{std::move(t.jwt), "jwt", t.expires};
    };
  } else if (!o.shared_access_signature.empty()) {
    const auto se = sas_expiry(o.shared_access_signature);
    if (!se) throw ConfigError("azureservicebus options: the SharedAccessSignature has no se=");
    cbs.token = [token = o.shared_access_signature,
                 expires = SystemClock::time_point(std::chrono::seconds(*se))](const std::string&) {
      // Never renewed: the next put-token sends it again (the service refuses it once expired).
      return amqp10::Token{token, std::string(kSasType), expires};
    };
  } else {
    cbs.token = [name = o.key_name, key = o.key,
                 lifetime = o.token_lifetime](const std::string& audience) {
      const auto expires =
          std::chrono::time_point_cast<std::chrono::seconds>(SystemClock::now() + lifetime);
      return amqp10::Token{sas_token(audience, name, key, expires.time_since_epoch().count()),
                           std::string(kSasType), expires};
    };
  }
  a.cbs = std::move(cbs);
  return a;
}

// The RFC 4122 uuid of a Service Bus lock token sent as the delivery tag in .NET Guid byte order.
std::optional<proton::uuid> lock_token(const std::string& tag) {
  if (tag.size() != 16) return std::nullopt;
  static constexpr int kOrder[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
  proton::uuid u;
  for (std::size_t i = 0; i < 16; ++i)
    u[i] =
        static_cast<proton::byte_array<16>::value_type>(tag[static_cast<std::size_t>(kOrder[i])]);
  return u;
}

// `text` cut to at most `max` bytes on a UTF-8 character boundary.
std::string cut_utf8(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0U) == 0x80U)
    --n;
  return std::string(text.substr(0, n));
}

std::int64_t status_of(const proton::message& reply) {
  try {
    return proton::coerce<std::int64_t>(reply.properties().get("statusCode"));
  } catch (const proton::error&) {
    return -1;
  }
}

std::string description_of(const proton::message& reply) {
  const proton::scalar v = reply.properties().get("statusDescription");
  return v.type() == proton::STRING ? proton::get<std::string>(v) : std::string();
}

// One received delivery, shared by the copies of its ReceivedMessage (std::any copies).
struct Held : amqp10::HeldDelivery {
  std::string entity;
  std::optional<proton::uuid> lock;
  amqp10::Timer::Id renewal = 0;
  std::chrono::steady_clock::time_point renew_until{};
};

struct Handle {
  std::shared_ptr<Held> held;
};

Error no_handle(std::string_view operation) {
  return Error(ErrorCode::Usage, "azureservicebus: " + std::string(operation) +
                                     " of a message this transport did not deliver");
}

}  // namespace

class ServiceBusTransport::Impl {
 public:
  explicit Impl(Options o)
      : options(std::move(o)), client(layer_options(options)), logger(options.logger) {}

  Status check_entity(std::string_view queue) const {
    if (queue.empty()) return ConfigError("azureservicebus: an empty entity name");
    if (!options.entity.empty() && base_entity(queue) != options.entity) {
      return ConfigError("azureservicebus: the credentials cover only the entity " +
                         options.entity + ", not " + std::string(queue));
    }
    return {};
  }

  static amqp10::Message message(std::string body, const Headers& riders) {
    binding::azureservicebus::Projection p = binding::azureservicebus::projection(body, riders);
    amqp10::Message m;
    m.body = std::move(body);
    m.body_kind = amqp10::BodyKind::Data;
    m.durable = true;
    m.message_id = std::move(p.message_id);
    m.correlation_id = std::move(p.correlation_id);
    m.subject = std::move(p.subject);
    m.content_type = std::move(p.content_type);
    for (auto& [key, value] : p.application_properties)
      m.properties.emplace(key, std::move(value));
    return m;
  }

  Status send(std::string_view queue, std::vector<amqp10::Message> messages) {
    if (guard.closed()) return guard.error("publish");
    if (Status s = check_entity(queue); !s.ok()) return s;
    try {
      client.send_batch(std::string(queue), std::move(messages));
      return {};
    } catch (const ClosedError&) {
      return guard.error("publish");
    } catch (const Error& e) {
      return e;
    }
  }

  ReceivedMessage received(std::string_view queue, amqp10::Delivery&& delivery) {
    static constexpr amqp10::ReceiveRules kRules{"azureservicebus", kSchemaVersionProperty,
                                                 &binding::azureservicebus::delivery_count,
                                                 &binding::azureservicebus::schema_version_gate};
    ReceivedMessage m = amqp10::received_message(queue, delivery, kRules,
                                                 options.on_schema_version_rejected, logger);
    const amqp10::Message& in = delivery.message();
    auto held = std::make_shared<Held>();
    held->entity = std::string(queue);
    held->lock = lock_token(in.delivery_tag);
    const auto until = in.annotation_times.find("x-opt-locked-until");
    const std::int64_t locked_until = until == in.annotation_times.end() ? 0 : until->second;
    held->delivery.emplace(std::move(delivery));
    if (options.lock_renewal && held->lock && locked_until > 0) {
      held->renew_until = std::chrono::steady_clock::now() + options.max_lock_renewal;
      schedule_renewal(held, locked_until);
    }
    m.handle = Handle{std::move(held)};
    return m;
  }

  // ---- lock renewal (beyond ASB-5/ASB-15: the Azure SDKs' auto-lock-renewal) ----

  // Renews the lock of `held` before `locked_until_ms` (epoch ms): 10 s ahead, or halfway when
  // less than 20 s are left.
  void schedule_renewal(const std::shared_ptr<Held>& held, std::int64_t locked_until_ms) {
    const auto now_ms =
        std::chrono::duration_cast<milliseconds>(SystemClock::now().time_since_epoch()).count();
    const std::int64_t left = std::max<std::int64_t>(0, locked_until_ms - now_ms);
    const std::int64_t ahead = left < 20'000 ? left / 2 : 10'000;
    const auto when = std::chrono::steady_clock::now() + milliseconds(left - ahead);
    if (when > held->renew_until) return;
    std::weak_ptr<Held> weak = held;
    held->renewal = renewals.at(when, [this, weak] { renew(weak); });
  }

  void renew(const std::weak_ptr<Held>& weak) {
    const std::shared_ptr<Held> held = weak.lock();
    if (!held) return;
    {
      const std::lock_guard lock(held->mu);
      if (!held->delivery) return;  // settled meanwhile
    }
    proton::message request;
    request.properties().put("operation", "com.microsoft:renew-lock");
    std::map<std::string, proton::value> body;
    body["lock-tokens"] = std::vector<proton::uuid>{*held->lock};
    request.body(body);
    proton::message reply;
    try {
      client.request(held->entity + "/$management", request, reply);
    } catch (const ClosedError&) {
      return;  // closing
    } catch (const Error& e) {
      log(LogLevel::Warning,
          "azureservicebus: renewing a lock on " + held->entity + " failed: " + e.what());
      return;
    }
    const std::int64_t status = status_of(reply);
    if (status != 200) {
      log(LogLevel::Warning, "azureservicebus: renewing a lock on " + held->entity +
                                 " failed: status " + std::to_string(status) + " " +
                                 description_of(reply));
      return;
    }
    try {
      std::map<std::string, proton::value> answer;
      proton::get(reply.body(), answer);
      std::vector<proton::timestamp> expirations;
      proton::get(answer.at("expirations"), expirations);
      const std::lock_guard lock(held->mu);
      if (held->delivery && !expirations.empty())
        schedule_renewal(held, expirations.front().milliseconds());
    } catch (const std::exception& e) {
      log(LogLevel::Warning,
          std::string("azureservicebus: an unreadable renew-lock reply: ") + e.what());
    }
  }

  void log(LogLevel level, const std::string& text) const { log_to(logger, level, text); }

  // Settles the delivery of `msg` once with `how`; a second settle is StaleDelivery.
  template <class Settle>
  Status settle(const ReceivedMessage& msg, std::string_view operation, Settle&& how) {
    if (guard.closed()) return guard.error(operation);
    const auto* handle = std::any_cast<Handle>(&msg.handle);
    if (handle == nullptr || !handle->held) return no_handle(operation);
    Held& held = *handle->held;
    return amqp10::settle_once(held, guard, "azureservicebus", operation, msg.queue,
                               std::forward<Settle>(how),
                               [this, &held] { renewals.cancel(held.renewal); });
  }

  // ---- Inspector: $management peek (no lock) ----

  // Calls `each` for the messages of `entity` from the head, up to `max` (0: all).
  template <class Each>
  Status peek_each(const std::string& entity, std::int64_t max, Each&& each) {
    std::int64_t from = 0;
    std::int64_t seen = 0;
    while (max == 0 || seen < max) {
      const std::int64_t count =
          max == 0 ? kPeekPage : std::min<std::int64_t>(kPeekPage, max - seen);
      proton::message request;
      request.properties().put("operation", "com.microsoft:peek-message");
      std::map<std::string, proton::value> body;
      body["from-sequence-number"] = from;
      body["message-count"] = static_cast<std::int32_t>(count);
      request.body(body);
      proton::message reply;
      try {
        client.request(entity + "/$management", request, reply);
      } catch (const ClosedError&) {
        return guard.error("peek");
      } catch (const Error& e) {
        return e;
      }
      const std::int64_t status = status_of(reply);
      if (status == 204) return {};
      if (status != 200) {
        const std::string why = "azureservicebus: peek of " + entity + " failed: status " +
                                std::to_string(status) + " " + description_of(reply);
        if (status == 401 || status == 403 || status == 404) return ConfigError(why);
        return TransportError(why);
      }
      std::vector<proton::binary> encoded;
      try {
        std::map<std::string, proton::value> answer;
        proton::get(reply.body(), answer);
        std::vector<proton::value> messages;
        proton::get(answer.at("messages"), messages);
        for (const proton::value& item : messages) {
          std::map<std::string, proton::value> entry;
          proton::get(item, entry);
          encoded.push_back(proton::get<proton::binary>(entry.at("message")));
        }
      } catch (const std::exception& e) {
        return TransportError(std::string("azureservicebus: an unreadable peek reply: ") +
                              e.what());
      }
      if (encoded.empty()) return {};
      const std::int64_t page_from = from;
      for (const proton::binary& bytes : encoded) {
        amqp10::Message message;
        try {
          proton::message m;
          m.decode(std::vector<char>(bytes.begin(), bytes.end()));
          message = amqp10::detail::from_proton(m);
        } catch (const std::exception& e) {
          return TransportError("azureservicebus: a peeked message of " + entity +
                                " does not decode: " + e.what());
        }
        const auto sequence = message.annotations.find("x-opt-sequence-number");
        if (sequence != message.annotations.end()) {
          if (const auto* n = std::get_if<std::int64_t>(&sequence->second))
            from = std::max(from, *n + 1);
        }
        each(message);
        ++seen;
      }
      // Without sequence numbers the next page cannot start after this one: stop here.
      if (from == page_from) return {};
    }
    return {};
  }

  Result<std::int64_t> count(const std::string& entity) {
    std::int64_t n = 0;
    Status s = peek_each(entity, kMaxCounted, [&n](const amqp10::Message&) { ++n; });
    if (!s.ok()) return s.error();
    return n;
  }

  Options options;
  amqp10::Client client;
  Logger logger;
  spi::ClosedGuard guard{"azureservicebus transport"};
  amqp10::Timer renewals;
};

ServiceBusTransport::ServiceBusTransport(Options options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
ServiceBusTransport::ServiceBusTransport(std::string_view url)
    : impl_(std::make_unique<Impl>(parse_url(url))) {}
ServiceBusTransport::~ServiceBusTransport() {
  close();
}

const Options& ServiceBusTransport::options() const noexcept {
  return impl_->options;
}

Status ServiceBusTransport::publish(std::string_view queue, std::string body) {
  std::vector<amqp10::Message> messages;
  messages.push_back(Impl::message(std::move(body), {}));
  return impl_->send(queue, std::move(messages));
}

Status ServiceBusTransport::publish_with_headers(std::string_view queue, std::string body,
                                                 const Headers& headers) {
  std::vector<amqp10::Message> messages;
  messages.push_back(Impl::message(std::move(body), headers));
  return impl_->send(queue, std::move(messages));
}

Status ServiceBusTransport::publish_batch(std::string_view queue, std::vector<std::string> bodies) {
  std::vector<amqp10::Message> messages;
  messages.reserve(bodies.size());
  for (std::string& body : bodies)
    messages.push_back(Impl::message(std::move(body), {}));
  return impl_->send(queue, std::move(messages));
}

Result<std::optional<ReceivedMessage>> ServiceBusTransport::pop(std::string_view queue,
                                                                milliseconds timeout) {
  if (impl_->guard.closed()) return impl_->guard.error("pop");
  if (Status s = impl_->check_entity(queue); !s.ok()) return s.error();
  return amqp10::pop_delivery(
      impl_->client, impl_->guard, queue, timeout, impl_->options.max_wait,
      [this, queue](amqp10::Delivery&& d) { return impl_->received(queue, std::move(d)); });
}

Status ServiceBusTransport::ack(const ReceivedMessage& msg) {
  return impl_->settle(msg, "ack", [](amqp10::Delivery& d) { d.accept(); });
}

Status ServiceBusTransport::rewind(const ReceivedMessage& msg) {
  return impl_->settle(msg, "rewind", [](amqp10::Delivery& d) { d.modify(true, false); });
}

Status ServiceBusTransport::hand_to_broker(const ReceivedMessage& msg, std::string_view why) {
  if (impl_->options.native_dead_letter == NativeDeadLetter::Abandon)
    return impl_->settle(msg, "hand_to_broker", [](amqp10::Delivery& d) { d.modify(true, false); });
  const std::string reason = msg.route.empty() ? "poison" : "unsupported_schema_version";
  const std::string description = cut_utf8(why, kMaxDescription);
  return impl_->settle(msg, "hand_to_broker", [&](amqp10::Delivery& d) {
    d.reject("com.microsoft:dead-letter", description,
             {{"DeadLetterReason", reason}, {"DeadLetterErrorDescription", description}});
  });
}

Result<QueueStats> ServiceBusTransport::stats(std::string_view queue,
                                              std::string_view dead_letter_queue) {
  if (impl_->guard.closed()) return impl_->guard.error("stats");
  if (Status s = impl_->check_entity(queue); !s.ok()) return s.error();
  const std::string dlq =
      dead_letter_queue.empty() ? default_dead_letter_name(queue) : std::string(dead_letter_queue);
  QueueStats stats;
  Result<std::int64_t> ready = impl_->count(std::string(queue));
  if (!ready.has_value()) return ready.error();
  stats.ready = *ready;
  if (Result<std::int64_t> n = impl_->count(dlq); n.has_value()) {
    stats.dead_letter = *n;
  } else {
    stats.details.emplace_back("dead-letter queue " + dlq, n.error().what());
  }
  if (!is_dead_letter_queue(queue)) {  // a dead-letter sub-queue has none of its own
    const std::string native = std::string(queue) + "/$DeadLetterQueue";
    Result<std::int64_t> native_count = impl_->count(native);
    if (!native_count.has_value()) return native_count.error();
    stats.details.emplace_back("native dead-letter queue " + native, std::to_string(*native_count));
  }
  stats.details.emplace_back(
      "counted by", "$management peek (locked and deferred messages are in ready; at most " +
                        std::to_string(kMaxCounted) + " per entity)");
  return stats;
}

Result<std::vector<PeekedMessage>> ServiceBusTransport::peek(std::string_view queue,
                                                             std::size_t max) {
  if (impl_->guard.closed()) return impl_->guard.error("peek");
  if (Status s = impl_->check_entity(queue); !s.ok()) return s.error();
  std::vector<PeekedMessage> out;
  Status s = impl_->peek_each(std::string(queue), static_cast<std::int64_t>(max),
                              [&out](const amqp10::Message& m) {
                                PeekedMessage p;
                                p.body = m.body;
                                for (const auto& [key, value] : m.properties) {
                                  if (auto text = binding::amqp10::header_text(value))
                                    p.headers.emplace(key, std::move(*text));
                                }
                                out.push_back(std::move(p));
                              });
  if (!s.ok()) return s.error();
  return out;
}

Status ServiceBusTransport::restore(const ReceivedMessage& source) {
  if (restores_in_place(source)) return rewind(source);
  return publish_with_headers(source.queue, source.body, source.headers);
}

bool ServiceBusTransport::restores_in_place(const ReceivedMessage& source) const {
  return is_dead_letter_queue(source.queue);
}

void ServiceBusTransport::close() {
  if (!impl_->guard.close()) return;
  // The client first: a renewal waiting for its reply ends with ClosedError at once.
  impl_->client.close();
  impl_->renewals.stop();
}

}  // namespace babelqueue::azureservicebus
