// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/amqp10/client.hpp>
#include <babelqueue/amqp10/timer.hpp>
#include <babelqueue/spi/backoff.hpp>
#include <babelqueue/spi/unshared.hpp>

#include <proton/codec.h>
#include <proton/condition.h>
#include <proton/delivery.h>
#include <proton/disposition.h>
#include <proton/link.h>
#include <proton/binary.hpp>
#include <proton/connection.hpp>
#include <proton/connection_options.hpp>
#include <proton/container.hpp>
#include <proton/delivery.hpp>
#include <proton/duration.hpp>
#include <proton/error_condition.hpp>
#include <proton/message.hpp>
#include <proton/messaging_handler.hpp>
#include <proton/receiver.hpp>
#include <proton/receiver_options.hpp>
#include <proton/sender.hpp>
#include <proton/sender_options.hpp>
#include <proton/source.hpp>
#include <proton/source_options.hpp>
#include <proton/ssl.hpp>
#include <proton/target_options.hpp>
#include <proton/tracker.hpp>
#include <proton/transport.hpp>
#include <proton/work_queue.hpp>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "message_codec.hpp"
#include "request_node.hpp"

namespace babelqueue::amqp10 {
namespace {

// A connection refused for a reason retrying cannot cure: the credentials
// (amqp:unauthorized-access) or the peer's TLS certificate (OpenSSL's "certificate verify
// failed", a wrong CA or a name the certificate does not carry, which Proton relays in the
// description of its SSL failure).
bool refused_for_good(const proton::error_condition& e) {
  return e.name() == "amqp:unauthorized-access" ||
         e.description().find("certificate verify failed") != std::string::npos;
}

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How often a disconnected client looks whether its backoff is over (a Proton timer keeps
// container::run() going until it fires, so close() would wait for a long one).
constexpr milliseconds kTick{50};
// The credit of a browse receiver per drain cycle when it reads everything.
constexpr std::uint32_t kBrowseChunk = 500;
// How long a settle may wait for the thread's next drain before a timer drains it: the settles
// of a consuming loop go out together, with one wake-up instead of one each.
constexpr milliseconds kSettleDelay{1};
// The most decoded messages kept for reuse (Client::Impl::spares).
constexpr std::size_t kSpareMessages = 256;

enum Outcome : int { kAccepted, kModified, kReleased, kRejected };

// The pn_delivery_t of a proton::delivery, for the dispositions Proton C++ cannot send
// (modified{delivery-failed=true}, rejected with an error condition; BROKERS.md "AMQP 1.0").
struct DeliveryAccess : proton::delivery {
  static pn_delivery_t* pn(const proton::delivery& d) {
    const auto member = &DeliveryAccess::pn_object;
    return (d.*member)();
  }
};

// `v` into a condition's info map (the C API: Proton C++ has no encoder on a pn_data_t).
void put_value(pn_data_t* data, const Value& v) {
  std::visit(
      [data](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) {
          pn_data_put_bool(data, x);
        } else if constexpr (std::is_same_v<T, std::int8_t>) {
          pn_data_put_byte(data, x);
        } else if constexpr (std::is_same_v<T, std::uint8_t>) {
          pn_data_put_ubyte(data, x);
        } else if constexpr (std::is_same_v<T, std::int16_t>) {
          pn_data_put_short(data, x);
        } else if constexpr (std::is_same_v<T, std::uint16_t>) {
          pn_data_put_ushort(data, x);
        } else if constexpr (std::is_same_v<T, std::int32_t>) {
          pn_data_put_int(data, x);
        } else if constexpr (std::is_same_v<T, std::uint32_t>) {
          pn_data_put_uint(data, x);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          pn_data_put_long(data, x);
        } else if constexpr (std::is_same_v<T, std::uint64_t>) {
          pn_data_put_ulong(data, x);
        } else if constexpr (std::is_same_v<T, float>) {
          pn_data_put_float(data, x);
        } else if constexpr (std::is_same_v<T, double>) {
          pn_data_put_double(data, x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          pn_data_put_string(data, pn_bytes(x.size(), x.data()));
        } else if constexpr (std::is_same_v<T, Binary>) {
          pn_data_put_binary(data, pn_bytes(x.bytes.size(), x.bytes.data()));
        } else {
          pn_data_put_null(data);  // null; Other is refused before (Delivery::reject)
        }
      },
      v);
}

void set_condition(pn_condition_t* condition, const std::string& name,
                   const std::string& description, const std::map<std::string, Value>& info) {
  pn_condition_set_name(condition, name.c_str());
  pn_condition_set_description(condition, description.c_str());
  if (info.empty()) return;
  pn_data_t* data = pn_condition_info(condition);
  pn_data_put_map(data);
  pn_data_enter(data);
  for (const auto& [key, value] : info) {
    pn_data_put_symbol(data, pn_bytes(key.size(), key.data()));
    put_value(data, value);
  }
  pn_data_exit(data);
}

// The pn_link_t of a receiver, for rcv-settle-mode second (Proton C++ has no option for it).
struct LinkAccess : proton::receiver {
  static pn_link_t* pn(const proton::receiver& r) {
    const auto member = &LinkAccess::pn_object;
    return (r.*member)();
  }
};

// The integral application property `key` of a reply (CBS status-code, $management
// statusCode), -1 when absent or not an integer; and a string one, empty when absent.
std::int64_t int_property(const proton::message& m, const std::string& key) {
  try {
    return proton::coerce<std::int64_t>(m.properties().get(key));
  } catch (const proton::error&) {
    return -1;
  }
}
std::string string_property(const proton::message& m, const std::string& key) {
  const proton::scalar v = m.properties().get(key);
  return v.type() == proton::STRING ? proton::get<std::string>(v) : std::string();
}

std::string tag_of(std::uint64_t n) {
  std::string bytes(sizeof n, '\0');
  std::memcpy(bytes.data(), &n, sizeof n);
  return bytes;
}

std::uint64_t from_tag(const proton::binary& tag) {
  std::uint64_t n = 0;
  if (tag.size() == sizeof n) std::memcpy(&n, tag.data(), sizeof n);
  return n;
}

std::vector<proton::symbol> symbols(const std::vector<std::string>& names) {
  return {names.begin(), names.end()};
}

void validate(const Options& o) {
  if (o.host.empty()) throw ConfigError("AMQP 1.0: no host");
  if (o.port <= 0 || o.port > 65535)
    throw ConfigError("AMQP 1.0: port " + std::to_string(o.port) + " is not 1-65535");
  if (o.timeout <= milliseconds::zero()) throw ConfigError("AMQP 1.0: timeout must be positive");
  if (o.user.empty() && !o.password.empty())
    throw ConfigError("AMQP 1.0: a password without a user");
  if (o.cbs && (!o.cbs->audience || !o.cbs->token))
    throw ConfigError("AMQP 1.0: CBS needs an audience and a token function");
  if (o.cbs && !(o.cbs->renew_at > 0 && o.cbs->renew_at < 1))
    throw ConfigError("AMQP 1.0: CBS renew_at must be between 0 and 1");
}

}  // namespace

// One per client, shared by its deliveries (no allocation per message).
struct Delivery::Settler {
  std::weak_ptr<Client::Impl> impl;
};

// Everything below runs on the container thread unless it says otherwise.
struct Client::Impl final : proton::messaging_handler {
  struct SendOp {
    std::string address;
    Message message;
    std::promise<void> outcome;
    std::atomic<bool> abandoned{false};
  };
  struct SenderLink {
    proton::sender sender;
    std::deque<std::shared_ptr<SendOp>> waiting;
  };
  // A delivery as the container thread hands it over: Proton's decoded message itself (taken
  // from the messaging adapter, which gets a spare one back), made a Message by the receive.
  struct Received {
    std::uint64_t id;
    std::uint64_t connection;
    proton::message message;
    std::string tag;
  };
  // A settle handed to the container thread (Delivery::settle does not wait for it).
  struct SettleOp {
    std::uint64_t id;
    std::uint64_t connection;
    int outcome;
    bool failed;
    bool undeliverable_here;
    std::string condition;
    std::string description;
    std::map<std::string, Value> info;
  };
  // A browse (Client::browse): its copy-mode receiver and what it read so far.
  struct BrowseOp {
    std::string address;
    std::size_t max = 0;
    std::size_t granted = 0;
    std::vector<Message> messages;
    proton::receiver link;
    std::promise<std::vector<Message>> done;
  };
  // Caller side, under mutex_.
  struct Inbox {
    std::deque<Received> queue;
    std::uint32_t owed = 0;  // handed out since the last top-up
    bool opened = false;
    // Explicit credit (prefetch 0, ASB-5): the receive calls waiting for a message, and the
    // receiver's credit and drain state as the container thread last left them (it updates them
    // under `mutex` together with the Proton calls, so a caller never sees a stale pair).
    int waiting = 0;
    int credit = 0;
    bool draining = false;
    bool credit_posted = false;
    // Credit beyond what the waiting receives need (or a drain not finished yet).
    [[nodiscard]] bool excess_credit() const {
      return draining || credit > std::max(0, waiting - static_cast<int>(queue.size()));
    }
  };

  explicit Impl(Options o)
      : options(std::move(o)), backoff(options.reconnect_initial, options.reconnect_cap) {}

  const Options options;

  // ---- shared state (mutex_) ----
  std::mutex mutex;
  std::condition_variable cv;
  bool closed = false;
  bool started = false;
  bool stopped = false;
  std::thread thread;
  std::deque<std::function<void()>> tasks;
  // Settles handed over and not yet given to Proton (drained before `tasks`).
  std::vector<SettleOp> settles;
  // A drain() is queued on the live connection's work queue: further posts add none.
  bool drain_pending = false;
  // A drain() is scheduled kSettleDelay ahead for the settles queued since the last one.
  bool drain_scheduled = false;
  // The number of the open connection, 0 while none is open: a settle of a delivery of another
  // connection is stale at once, without a hop to the container thread.
  std::uint64_t live_connection = 0;
  // Settles the container thread found stale since the last flush() (their connection died
  // after they were handed over): the peer redelivers those messages.
  std::uint64_t stale_settles = 0;
  std::shared_ptr<Delivery::Settler> settler;
  proton::work_queue* work_queue = nullptr;  // the live connection's
  proton::container* container = nullptr;    // while run() runs
  std::map<std::string, Inbox> inboxes;
  // Decoded messages the receives are done with, for the adapter to decode the next ones into
  // (a fresh proton::message allocates a dozen Proton objects); at most kSpareMessages.
  std::vector<proton::message> spares;
  // The receive calls waiting for a message (a delivery notifies `cv` only when one waits).
  int receives_waiting = 0;
  // Why the last connection ended (Proton's condition text, no secret); empty once one opens.
  std::string last_error;
  // The last connection was refused for good (refused_for_good: the credentials, or a TLS
  // certificate that does not verify): a receive fails with ConfigError rather than waiting for
  // messages that cannot come (D-3); cleared when a connection opens (the client keeps
  // reconnecting).
  bool connection_refused = false;
  std::atomic<std::uint64_t> generation{0};

  // ---- container thread ----
  proton::connection conn;
  bool connected = false;
  bool closing = false;
  spi::Backoff backoff;
  Clock::time_point reconnect_at{};
  std::map<std::string, SenderLink> senders;
  std::map<std::string, proton::receiver> receivers;
  std::set<std::string> wanted_receivers;
  std::map<std::uint64_t, std::shared_ptr<SendOp>> in_flight;
  std::map<std::uint64_t, proton::delivery> unsettled;
  std::vector<std::shared_ptr<BrowseOp>> browses;
  // The credit owed per receiver, collected by drain() (reused: no allocation per drain).
  std::vector<std::pair<const std::string*, std::uint32_t>> credit_due;
  std::uint64_t next_tag = 0;
  std::uint64_t next_delivery = 0;
  // Every send's message, refilled each time (sender::send encodes it at once).
  proton::message outgoing;

  // ---- CBS (ASB-3) and request/response nodes, container thread ----
  struct RequestOp {
    std::string node;
    proton::message request;
    std::shared_ptr<std::promise<proton::message>> reply;
  };
  enum class Auth { kPending, kDone };
  // Per connection: the request/response link pairs, and the state of each CBS audience.
  std::map<std::string, std::unique_ptr<detail::RequestNode>> nodes;
  std::map<std::string, Auth> authorizations;
  std::uint64_t next_node = 0;
  std::deque<RequestOp> parked_requests;
  // (mutex) The next receive of these addresses fails with ConfigError: CBS refused them.
  std::map<std::string, std::string> refused_receives;
  // Token renewal (a Proton timer would hold container::run() open until it fires).
  Timer timer;

  // ---- any thread ----

  // Queues `task` for the container thread (starting it on first use). Call with `lock` held.
  void post_locked(std::function<void()> task) {
    if (closed) throw ClosedError("AMQP 1.0 client closed");
    tasks.push_back(std::move(task));
    wake_locked();
  }
  // Makes the container thread drain what was queued (starting it on first use); one drain()
  // at a time is queued on the connection's work queue, however many posts it serves.
  void wake_locked() {
    if (!started) {
      started = true;
      thread = std::thread([this] { run(); });
    } else if (work_queue != nullptr && !drain_pending) {
      drain_pending = work_queue->add([this] { drain(); });
    }
  }
  void post(std::function<void()> task) {
    const std::lock_guard lock(mutex);
    post_locked(std::move(task));
  }

  // Runs `fn` on the container thread and returns its result; ClosedError when the client
  // closes first, TimeoutError after Options::timeout.
  template <class R>
  R call(std::function<R()> fn, const char* what) {
    auto promise = std::make_shared<std::promise<R>>();
    std::future<R> result = promise->get_future();
    post([promise, fn = std::move(fn)] {
      try {
        if constexpr (std::is_void_v<R>) {
          fn();
          promise->set_value();
        } else {
          promise->set_value(fn());
        }
      } catch (...) {
        promise->set_exception(std::current_exception());
      }
    });
    return await(result, what);
  }

  // The value of `result`, set on the container thread; ClosedError when the client closed
  // first (the promise was dropped), TimeoutError after Options::timeout.
  template <class R>
  R await(std::future<R>& result, const std::string& what) const {
    if (result.wait_for(options.timeout) != std::future_status::ready)
      throw TimeoutError("AMQP 1.0: " + what + " timed out");
    try {
      return result.get();
    } catch (const std::future_error&) {
      throw ClosedError("AMQP 1.0 client closed");
    } catch (const Error& e) {
      // Made on the container thread: the caller gets a copy sharing no storage (spi/unshared).
      throw_error(spi::unshared(e));
    }
  }

  void close() {
    timer.stop();
    {
      std::unique_lock lock(mutex);
      if (!closed) {
        closed = true;
        cv.notify_all();
        if (started) {
          if (work_queue == nullptr || !work_queue->add([this] { begin_close(); })) {
            if (container != nullptr) container->stop();
          }
          if (!cv.wait_for(lock, options.timeout, [this] { return stopped; }) &&
              container != nullptr)
            container->stop();
        }
      }
    }
    if (thread.joinable() && thread.get_id() != std::this_thread::get_id()) thread.join();
  }

  // ---- container thread ----

  void run() {
    proton::container c(*this);
    c.auto_stop(false);
    {
      const std::lock_guard lock(mutex);
      container = &c;
    }
    try {
      c.run();
    } catch (const std::exception&) {
      // A Proton error out of run(): the client is unusable; callers get ClosedError.
    }
    // No more work is accepted; what was queued runs without a connection (sends park, settles
    // are stale), then every waiting send fails with ClosedError.
    connected = false;
    closing = true;
    {
      const std::lock_guard lock(mutex);
      container = nullptr;
      work_queue = nullptr;
      live_connection = 0;
      closed = true;
    }
    for (auto& [address, link] : senders)
      link.sender = proton::sender();
    receivers.clear();
    unsettled.clear();
    nodes.clear();
    parked_requests.clear();
    conn = proton::connection();
    drain();
    fail_all(ClosedError("AMQP 1.0 client closed"));
    fail_browses(ClosedError("AMQP 1.0 client closed"));
    senders.clear();
    const std::lock_guard lock(mutex);
    stopped = true;
    cv.notify_all();
  }

  void drain() {
    std::deque<std::function<void()>> batch;
    std::vector<SettleOp> settling;
    {
      const std::lock_guard lock(mutex);
      drain_pending = false;
      drain_scheduled = false;
      batch.swap(tasks);
      settling.swap(settles);
      for (auto& [address, inbox] : inboxes) {
        if (inbox.owed > 0) credit_due.emplace_back(&address, std::exchange(inbox.owed, 0));
      }
    }
    for (const SettleOp& op : settling)
      settle(op);
    // The messages handed out since the last drain make room in their receiver's window.
    for (const auto& [address, owed] : credit_due) {
      const auto it = receivers.find(*address);
      if (it != receivers.end() && it->second.active()) it->second.add_credit(owed);
    }
    credit_due.clear();
    if (!settling.empty()) {
      // Given back for reuse: the caller's next settles need no allocation.
      settling.clear();
      const std::lock_guard lock(mutex);
      if (settles.empty()) settles.swap(settling);
    }
    for (auto& task : batch)
      task();
  }

  proton::connection_options connection_options() const {
    proton::connection_options co;
    co.sasl_enabled(true);
    if (options.user.empty()) {
      co.sasl_allowed_mechs("ANONYMOUS");
    } else {
      // PLAIN over plain TCP needs Proton's consent (ART-1).
      co.user(options.user).password(options.password).sasl_allowed_mechs("PLAIN");
      co.sasl_allow_insecure_mechs(!options.tls);
    }
    if (!options.container_id.empty()) co.container_id(options.container_id);
    if (options.tls) {
      const auto mode =
          options.tls_verify_peer_name ? proton::ssl::VERIFY_PEER_NAME : proton::ssl::VERIFY_PEER;
      co.ssl_client_options(options.tls_ca_file.empty()
                                ? proton::ssl_client_options(mode)
                                : proton::ssl_client_options(options.tls_ca_file, mode));
      co.virtual_host(options.tls_peer_name.empty() ? options.host : options.tls_peer_name);
    }
    return co;
  }

  void connect(proton::container& c) {
    generation.fetch_add(1);
    const std::string url = std::string(options.tls ? "amqps://" : "amqp://") + options.host + ":" +
                            std::to_string(options.port);
    conn = c.connect(url, connection_options());
    const std::lock_guard lock(mutex);
    work_queue = &conn.work_queue();
  }

  // close() was called (its begin_close may not have run: the connection died first).
  bool client_closed() {
    const std::lock_guard lock(mutex);
    return closed;
  }

  void tick(proton::container& c) {
    if (closing || client_closed()) return c.stop();
    if (Clock::now() >= reconnect_at) return connect(c);
    c.schedule(proton::duration(kTick.count()), [this, &c] { tick(c); });
  }

  void begin_close() {
    drain();  // settles handed over before close() go out before the links close
    closing = true;
    for (auto& [address, link] : senders)
      if (link.sender) link.sender.close();
    for (auto& [address, receiver] : receivers)
      receiver.close();
    if (conn) {
      conn.close();
    } else if (container != nullptr) {
      container->stop();
    }
  }

  void open_sender(const std::string& address, SenderLink& link) {
    if (!authorized_for(address)) return;
    proton::sender_options so;
    if (!options.capabilities.empty())
      so.target(proton::target_options().capabilities(symbols(options.capabilities)));
    link.sender = conn.open_sender(address, so);
  }

  void open_receiver(const std::string& address) {
    wanted_receivers.insert(address);
    if (!connected || receivers.count(address) != 0 || !authorized_for(address)) return;
    proton::receiver_options ro;
    ro.credit_window(0).auto_accept(false);
    if (!options.capabilities.empty())
      ro.source(proton::source_options().capabilities(symbols(options.capabilities)));
    if (!options.receiver_properties.empty()) {
      std::map<proton::symbol, proton::value> properties;
      for (const auto& [key, value] : options.receiver_properties)
        properties[proton::symbol(key)] = value;
      ro.properties(properties);
    }
    proton::receiver r = conn.open_receiver(address, ro);
    // Before the attach frame goes out (it is written after this handler returns).
    if (options.receiver_settle_second)
      pn_link_set_rcv_settle_mode(LinkAccess::pn(r), PN_RCV_SECOND);
    receivers[address] = r;
    if (options.prefetch > 0) {
      r.add_credit(options.prefetch);
    } else {
      reconcile_credit(address);
    }
  }

  void enqueue_send(const std::shared_ptr<SendOp>& op) {
    SenderLink& link = senders[op->address];
    link.waiting.push_back(op);
    if (!connected) return;
    if (!link.sender) open_sender(op->address, link);
    flush(link);
  }

  void flush(SenderLink& link) {
    while (!link.waiting.empty() && link.sender && link.sender.active() &&
           link.sender.credit() > 0) {
      std::shared_ptr<SendOp> op = std::move(link.waiting.front());
      link.waiting.pop_front();
      if (op->abandoned) continue;
      try {
        detail::to_proton(op->message, outgoing);
      } catch (...) {
        op->outcome.set_exception(std::current_exception());
        continue;
      }
      const std::uint64_t tag = ++next_tag;
      link.sender.send(outgoing, proton::binary(tag_of(tag)));
      in_flight[tag] = std::move(op);
    }
  }

  void settle_outcome(proton::tracker& t, const char* refused) {
    const auto it = in_flight.find(from_tag(t.tag()));
    if (it == in_flight.end()) return;
    if (refused == nullptr) {
      it->second->outcome.set_value();
    } else {
      it->second->outcome.set_exception(
          std::make_exception_ptr(TransportError(std::string("AMQP 1.0: the peer ") + refused +
                                                 " the message sent to " + it->second->address)));
    }
    in_flight.erase(it);
  }

  template <class E>
  void fail_all(const E& error) {
    for (auto& [tag, op] : in_flight)
      op->outcome.set_exception(std::make_exception_ptr(error));
    in_flight.clear();
    for (auto& [address, link] : senders) {
      for (auto& op : link.waiting)
        op->outcome.set_exception(std::make_exception_ptr(error));
      link.waiting.clear();
    }
  }

  // Caller side: hands the settle of a delivery of connection `op.connection` to the container
  // thread and returns. Stale at once when that connection is no longer the open one or the
  // client closed.
  void hand_over(SettleOp op) {
    const std::lock_guard lock(mutex);
    if (closed)
      throw StaleDeliveryError("AMQP 1.0: the client closed before the delivery was settled");
    if (op.connection != live_connection)
      throw StaleDeliveryError(
          "AMQP 1.0: the delivery's connection is gone; the peer redelivers it");
    settles.push_back(std::move(op));
    // Half a window of settles wakes the thread at once; fewer wait for a drain that comes
    // anyway (a task, a credit top-up) or for the timer, at most kSettleDelay.
    if (settles.size() >= std::max<std::size_t>(1, options.prefetch / 2)) {
      wake_locked();
    } else if (!drain_pending && !drain_scheduled && work_queue != nullptr) {
      drain_scheduled = true;
      work_queue->schedule(proton::duration(kSettleDelay.count()), [this] { drain(); });
    }
  }

  // A settle the connection died under since it was handed over is dropped (counted for
  // flush()): the peer redelivers the message.
  void settle(const SettleOp& op) {
    const auto it = unsettled.find(op.id);
    if (it == unsettled.end() || op.connection != generation.load() || !connected) {
      const std::lock_guard lock(mutex);
      ++stale_settles;
      return;
    }
    proton::delivery d = it->second;
    unsettled.erase(it);
    pn_delivery_t* pd = DeliveryAccess::pn(d);
    switch (op.outcome) {
      case kAccepted:
        d.accept();
        return;
      case kReleased:
        d.release();
        return;
      case kModified: {
        pn_disposition_t* local = pn_delivery_local(pd);
        pn_disposition_set_failed(local, op.failed);
        pn_disposition_set_undeliverable(local, op.undeliverable_here);
        pn_delivery_update(pd, PN_MODIFIED);
        pn_delivery_settle(pd);
        return;
      }
      default: {
        set_condition(pn_disposition_condition(pn_delivery_local(pd)), op.condition, op.description,
                      op.info);
        pn_delivery_update(pd, PN_REJECTED);
        pn_delivery_settle(pd);
        return;
      }
    }
  }

  // ---- browse ----

  void start_browse(const std::shared_ptr<BrowseOp>& op) {
    browses.push_back(op);
    if (connected) open_browser(*op);
  }

  void open_browser(BrowseOp& op) {
    proton::source_options so;
    so.distribution_mode(proton::source::COPY);
    if (!options.capabilities.empty()) so.capabilities(symbols(options.capabilities));
    op.link = conn.open_receiver(
        op.address, proton::receiver_options().credit_window(0).auto_accept(false).source(so));
    grant(op);
  }

  // Credit for the next messages, then a drain: the peer sends what it has and returns the
  // rest of the credit, so the end of the queue is known without waiting for a timeout.
  void grant(BrowseOp& op) {
    const std::size_t want = op.max == 0
                                 ? kBrowseChunk
                                 : std::min<std::size_t>(op.max - op.messages.size(), kBrowseChunk);
    op.granted += want;
    op.link.add_credit(static_cast<std::uint32_t>(want));
    op.link.drain();
  }

  std::shared_ptr<BrowseOp> browse_of(const proton::receiver& r) {
    for (const auto& op : browses) {
      if (op->link == r) return op;
    }
    return nullptr;
  }

  void finish_browse(const std::shared_ptr<BrowseOp>& op) {
    op->link.close();
    op->done.set_value(std::move(op->messages));
    std::erase(browses, op);
  }

  template <class E>
  void fail_browses(const E& error) {
    for (const auto& op : browses)
      op->done.set_exception(std::make_exception_ptr(error));
    browses.clear();
  }

  void on_receiver_drain_finish(proton::receiver& r) override {
    // A receiver's drain (explicit credit) ends: its credit is recomputed.
    for (const auto& [address, receiver] : receivers) {
      if (receiver == r) return reconcile_credit(address);
    }
    const std::shared_ptr<BrowseOp> op = browse_of(r);
    if (!op) return;
    // Less than granted arrived: the queue has no more; all of it arrived: ask again.
    if (op->messages.size() < op->granted || (op->max != 0 && op->messages.size() >= op->max))
      return finish_browse(op);
    grant(*op);
  }

  // Explicit credit (prefetch 0, ASB-5): gives the receiver of `address` one credit per waiting
  // receive (less the messages already here for them) and drains it when it holds more, so the
  // peer transfers nothing while no receive waits. A drain in progress is left to finish first
  // (on_receiver_drain_finish calls this again): Proton would keep credit added meanwhile until
  // the next transfer, which a finished drain never brings.
  void reconcile_credit(const std::string& address) {
    const std::lock_guard lock(mutex);
    Inbox& inbox = inboxes[address];
    inbox.credit_posted = false;
    const auto it = receivers.find(address);
    if (it == receivers.end()) {
      inbox.credit = 0;
      inbox.draining = false;
    } else {
      proton::receiver& r = it->second;
      if (!r.draining()) {
        const int wanted = std::max(0, inbox.waiting - static_cast<int>(inbox.queue.size()));
        const int credit = r.credit();
        if (wanted > credit) {
          r.add_credit(static_cast<std::uint32_t>(wanted - credit));
        } else if (wanted < credit) {
          r.drain();
        }
      }
      inbox.credit = r.credit();
      inbox.draining = r.draining();
    }
    cv.notify_all();
  }

  void lost_connection() {
    connected = false;
    {
      const std::lock_guard lock(mutex);
      work_queue = nullptr;
      drain_pending = false;  // what is queued is drained when the next connection opens
      drain_scheduled = false;
      live_connection = 0;
      // Unsettled deliveries of the dead connection are redelivered by the peer.
      for (auto& [address, inbox] : inboxes) {
        inbox.queue.clear();
        inbox.owed = 0;
        inbox.credit = 0;
        inbox.draining = false;
      }
      cv.notify_all();
    }
    fail_in_flight();
    fail_browses(TransportError("AMQP 1.0: the connection was lost during a browse"));
    for (auto& [address, link] : senders)
      link.sender = proton::sender();
    receivers.clear();
    unsettled.clear();
    const auto lost = std::make_exception_ptr(
        TransportError("AMQP 1.0: the connection was lost before the reply"));
    for (auto& [name, node] : nodes)
      node->fail(lost);
    nodes.clear();
    authorizations.clear();
  }

  // ---- CBS (ASB-3) ----

  // Whether links to `address` may open on this connection; if not yet, starts the put-token
  // for its audience (its links open when the peer accepts it).
  bool authorized_for(const std::string& address) {
    if (!options.cbs) return true;
    const std::string audience = options.cbs->audience(address);
    const auto it = authorizations.find(audience);
    if (it != authorizations.end()) return it->second == Auth::kDone;
    authorizations[audience] = Auth::kPending;
    put_token(audience, false);
    return false;
  }

  detail::RequestNode& node(const std::string& name) {
    std::unique_ptr<detail::RequestNode>& n = nodes[name];
    if (!n) {
      n = std::make_unique<detail::RequestNode>(conn, name,
                                                name + "-reply-" + std::to_string(++next_node));
    }
    return *n;
  }

  void put_token(const std::string& audience, bool renewal) {
    Token token;
    try {
      token = options.cbs->token(audience);
    } catch (const std::exception& e) {
      return cbs_refused(audience, "the token provider failed for " + audience + ": " + e.what());
    }
    proton::message m;
    m.to("$cbs");
    m.properties().put("operation", "put-token");
    m.properties().put("type", token.type);
    m.properties().put("name", audience);
    m.body(token.value);
    const std::uint64_t gen = generation.load();
    const auto lifetime = token.expires - std::chrono::system_clock::now();
    node("$cbs").send(std::move(m), [this, audience, gen, renewal, lifetime](
                                        std::exception_ptr error, proton::message* reply) {
      // A lost connection: the next one puts the token again.
      if (error || gen != generation.load()) return;
      const std::int64_t status = int_property(*reply, "status-code");
      if (status == 200 || status == 202) {
        authorizations[audience] = Auth::kDone;
        schedule_renewal(audience, gen, lifetime);
        if (!renewal) open_links_for(audience);
        return;
      }
      const std::string description = string_property(*reply, "status-description");
      cbs_refused(audience, "put-token for " + audience + " refused: status " +
                                std::to_string(status) +
                                (description.empty() ? "" : " (" + description + ")"));
    });
  }

  void schedule_renewal(const std::string& audience, std::uint64_t gen,
                        std::chrono::system_clock::duration lifetime) {
    if (lifetime <= std::chrono::system_clock::duration::zero()) return;
    const auto delay =
        std::chrono::duration_cast<Clock::duration>(lifetime * options.cbs->renew_at);
    timer.at(Clock::now() + delay, [this, audience, gen] {
      try {
        post([this, audience, gen] {
          if (gen == generation.load() && connected && !closing) put_token(audience, true);
        });
      } catch (const ClosedError&) {
        // closed meanwhile: nothing to renew
      }
    });
  }

  void open_links_for(const std::string& audience) {
    for (auto& [address, link] : senders) {
      if (!link.sender && !link.waiting.empty() && options.cbs->audience(address) == audience)
        open_sender(address, link);
    }
    for (const std::string& address : std::set<std::string>(wanted_receivers)) {
      if (options.cbs->audience(address) == audience) open_receiver(address);
    }
    run_requests();
  }

  // The sends, requests and the next receive waiting for `audience` fail with ConfigError; the
  // next demand puts a token again.
  void cbs_refused(const std::string& audience, const std::string& why) {
    authorizations.erase(audience);
    const ConfigError error("AMQP 1.0: " + why);
    for (auto& [address, link] : senders) {
      if (link.sender || options.cbs->audience(address) != audience) continue;
      for (auto& op : link.waiting)
        op->outcome.set_exception(std::make_exception_ptr(error));
      link.waiting.clear();
    }
    for (auto it = parked_requests.begin(); it != parked_requests.end();) {
      if (options.cbs->audience(it->node) != audience) {
        ++it;
        continue;
      }
      it->reply->set_exception(std::make_exception_ptr(error));
      it = parked_requests.erase(it);
    }
    const std::lock_guard lock(mutex);
    last_error = why;
    for (auto it = wanted_receivers.begin(); it != wanted_receivers.end();) {
      if (receivers.count(*it) != 0 || options.cbs->audience(*it) != audience) {
        ++it;
        continue;
      }
      refused_receives[*it] = error.what();
      inboxes[*it].opened = false;
      it = wanted_receivers.erase(it);
    }
    cv.notify_all();
  }

  // Sends the parked requests whose node may be used now.
  void run_requests() {
    if (!connected) return;
    std::deque<RequestOp> parked;
    parked.swap(parked_requests);
    for (RequestOp& op : parked) {
      if (!authorized_for(op.node)) {
        parked_requests.push_back(std::move(op));
        continue;
      }
      node(op.node).send(std::move(op.request),
                         [reply = op.reply](std::exception_ptr error, proton::message* m) {
                           if (error) {
                             reply->set_exception(error);
                           } else {
                             reply->set_value(*m);
                           }
                         });
    }
  }

  void fail_in_flight() {
    for (auto& [tag, op] : in_flight)
      op->outcome.set_exception(std::make_exception_ptr(TransportError(
          "AMQP 1.0: the connection was lost before the outcome of the message sent to " +
          op->address)));
    in_flight.clear();
  }

  // ---- Proton events ----

  void on_container_start(proton::container& c) override { connect(c); }

  void on_connection_open(proton::connection&) override {
    {
      const std::lock_guard lock(mutex);
      last_error.clear();
      connection_refused = false;
      live_connection = generation.load();
    }
    connected = true;
    backoff.reset();
    for (const std::string& address : std::set<std::string>(wanted_receivers))
      open_receiver(address);
    for (auto& [address, link] : senders) {
      if (!link.waiting.empty()) open_sender(address, link);
    }
    run_requests();
    drain();
  }

  void on_transport_close(proton::transport& t) override {
    if (t.error()) {
      const std::lock_guard lock(mutex);
      last_error = t.error().what();
      if (refused_for_good(t.error())) {
        connection_refused = true;
        cv.notify_all();
      }
    }
    lost_connection();
    if (closing || client_closed()) {
      t.connection().container().stop();
      return;
    }
    reconnect_at = Clock::now() + backoff.next();
    tick(t.connection().container());
  }
  // Reported by on_transport_close, which follows.
  void on_transport_error(proton::transport&) override {}
  void on_connection_error(proton::connection&) override {}
  void on_error(const proton::error_condition&) override {}

  void on_sendable(proton::sender& s) override {
    for (auto& [name, node] : nodes) {
      if (node->owns(s)) return node->on_sendable();
    }
    for (auto& [address, link] : senders) {
      if (link.sender == s) return flush(link);
    }
  }
  void on_sender_error(proton::sender& s) override {
    for (auto it = nodes.begin(); it != nodes.end(); ++it) {
      if (it->second->owns(s)) return node_failed(it, s.error().what());
    }
    for (auto& [address, link] : senders) {
      if (link.sender != s) continue;
      const TransportError error("AMQP 1.0: the link to " + address +
                                 " failed: " + s.error().what());
      for (auto& op : link.waiting)
        op->outcome.set_exception(std::make_exception_ptr(error));
      link.waiting.clear();
      for (auto it = in_flight.begin(); it != in_flight.end();) {
        if (it->second->address != address) {
          ++it;
          continue;
        }
        it->second->outcome.set_exception(std::make_exception_ptr(error));
        it = in_flight.erase(it);
      }
      link.sender = proton::sender();
      return;
    }
  }
  void on_receiver_error(proton::receiver& r) override {
    for (auto it = nodes.begin(); it != nodes.end(); ++it) {
      if (it->second->owns(r)) return node_failed(it, r.error().what());
    }
    if (const std::shared_ptr<BrowseOp> op = browse_of(r)) {
      op->done.set_exception(std::make_exception_ptr(
          TransportError("AMQP 1.0: browsing " + op->address + " failed: " + r.error().what())));
      std::erase(browses, op);
      return;
    }
    for (auto it = receivers.begin(); it != receivers.end(); ++it) {
      if (it->second == r) {
        {
          // The next receive() of the address opens a new link.
          const std::lock_guard lock(mutex);
          Inbox& inbox = inboxes[it->first];
          inbox.opened = false;
          inbox.credit = 0;
          inbox.draining = false;
          cv.notify_all();
        }
        wanted_receivers.erase(it->first);
        receivers.erase(it);
        return;
      }
    }
  }

  void node_failed(std::map<std::string, std::unique_ptr<detail::RequestNode>>::iterator it,
                   const std::string& why) {
    const std::unique_ptr<detail::RequestNode> failed = std::move(it->second);
    const std::string name = it->first;
    nodes.erase(it);
    failed->fail(std::make_exception_ptr(
        TransportError("AMQP 1.0: the link to " + name + " failed: " + why)));
  }

  void on_tracker_accept(proton::tracker& t) override { settle_outcome(t, nullptr); }
  void on_tracker_reject(proton::tracker& t) override { settle_outcome(t, "rejected"); }
  void on_tracker_release(proton::tracker& t) override {
    settle_outcome(t, "released (or modified)");
  }

  void on_message(proton::delivery& d, proton::message& m) override {
    for (auto& [name, node] : nodes) {
      if (node->owns(d.receiver())) return node->on_message(m);
    }
    if (const std::shared_ptr<BrowseOp> op = browse_of(d.receiver())) {
      op->messages.push_back(detail::from_proton(m));
      d.release();  // a copy: nothing to take (released changes nothing were it not one)
      if (op->max != 0 && op->messages.size() >= op->max) finish_browse(op);
      return;
    }
    const proton::receiver receiver = d.receiver();
    const std::string* address = nullptr;
    for (const auto& [a, r] : receivers) {
      if (r == receiver) address = &a;
    }
    if (address == nullptr) return d.release();
    const std::uint64_t id = ++next_delivery;
    unsettled.emplace_hint(unsettled.end(), id, d);
    // The tag's bytes in place (proton::delivery::tag() copies them into a vector first).
    const pn_delivery_tag_t tag = pn_delivery_tag(DeliveryAccess::pn(d));
    // The conversion to a Message is the receive's (off this thread, every connection's critical
    // path): `m` itself is handed over and the adapter decodes the next delivery into a spare.
    proton::message spare;
    bool wake = false;
    {
      const std::lock_guard lock(mutex);
      if (!spares.empty()) {
        spare = std::move(spares.back());
        spares.pop_back();
      }
      Inbox& inbox = inboxes[*address];
      inbox.queue.push_back(
          Received{id, generation.load(), std::move(m), std::string(tag.start, tag.size)});
      inbox.credit = receiver.credit();
      wake = receives_waiting > 0;
    }
    m = std::move(spare);
    // After the unlock: a receive woken under the lock would block on it at once.
    if (wake) cv.notify_all();
  }

  // ---- caller side ----

  // Has reconcile_credit(address) run on the container thread (once for any number of calls
  // before it runs: it reads the state then). Call with `mutex` held and the client open.
  void post_reconcile_locked(const std::string& address, Inbox& inbox) {
    if (inbox.credit_posted) return;
    inbox.credit_posted = true;
    post_locked([this, address] { reconcile_credit(address); });
  }

  std::optional<Delivery> receive(const std::string& address, milliseconds timeout) {
    std::unique_lock lock(mutex);
    if (closed) throw ClosedError("AMQP 1.0 client closed");
    Inbox& inbox = inboxes[address];
    if (!inbox.opened) {
      inbox.opened = true;
      post_locked([this, address] { open_receiver(address); });
    }
    // Explicit credit (prefetch 0): one credit for this wait, unless a message is here already.
    const bool wants_credit = options.prefetch == 0 && inbox.queue.empty();
    if (wants_credit) {
      ++inbox.waiting;
      post_reconcile_locked(address, inbox);
    }
    ++receives_waiting;
    cv.wait_for(lock, timeout, [&] {
      return closed || connection_refused || !inbox.queue.empty() ||
             refused_receives.count(address) != 0;
    });
    --receives_waiting;
    if (wants_credit) {
      --inbox.waiting;
      // Nothing came: take the credit back (drain) before returning, so nothing is transferred
      // (locked, on Service Bus) while no receive waits; a message the peer sends before the
      // drain ends is returned here. The drain waits for the peer at most Options::timeout.
      if (!closed && inbox.queue.empty() && inbox.excess_credit()) {
        post_reconcile_locked(address, inbox);
        ++receives_waiting;
        cv.wait_for(lock, options.timeout,
                    [&] { return closed || !inbox.queue.empty() || !inbox.excess_credit(); });
        --receives_waiting;
      }
    }
    if (closed) throw ClosedError("AMQP 1.0 client closed");
    if (const auto refused = refused_receives.find(address); refused != refused_receives.end()) {
      const std::string why = refused->second;
      refused_receives.erase(refused);
      throw ConfigError(why);
    }
    if (inbox.queue.empty()) {
      if (connection_refused)
        throw ConfigError("AMQP 1.0: the connection was refused: " + last_error);
      return std::nullopt;
    }
    Received r = std::move(inbox.queue.front());
    inbox.queue.pop_front();
    // The credit goes back with the next drain, normally the one of this message's settle; the
    // thread is woken for the credit alone once half the window is owed (the peer still holds
    // the other half, so an empty buffer needs no wake-up of its own). (Explicit credit,
    // prefetch 0, owes none: each receive grants its own.)
    if (options.prefetch > 0) {
      ++inbox.owed;
      if (inbox.owed >= std::max<std::uint32_t>(1, options.prefetch / 2)) wake_locked();
    }
    lock.unlock();
    Message message;
    try {
      message = detail::from_proton(r.message);
    } catch (const std::exception& e) {
      // Not settled: the peer redelivers it when the link or connection ends.
      throw TransportError(std::string("AMQP 1.0: a message of ") + address +
                           " could not be read: " + e.what());
    }
    message.delivery_tag = std::move(r.tag);
    lock.lock();
    if (spares.size() < kSpareMessages) spares.push_back(std::move(r.message));
    lock.unlock();
    return Delivery(settler, r.id, r.connection, std::move(message));
  }
};

// ---- Delivery ----

Delivery::Delivery(std::shared_ptr<Settler> settler, std::uint64_t id, std::uint64_t connection,
                   Message&& message)
    : settler_(std::move(settler)),
      id_(id),
      connection_(connection),
      message_(std::move(message)) {}
Delivery::Delivery(Delivery&&) noexcept = default;
Delivery& Delivery::operator=(Delivery&&) noexcept = default;
Delivery::~Delivery() = default;

void Delivery::accept() {
  settle(kAccepted, false, false, {}, {}, {});
}
void Delivery::modify(bool failed, bool undeliverable_here) {
  settle(kModified, failed, undeliverable_here, {}, {}, {});
}
void Delivery::release() {
  settle(kReleased, false, false, {}, {}, {});
}
void Delivery::reject(const std::string& condition, const std::string& description,
                      const std::map<std::string, Value>& info) {
  for (const auto& [key, value] : info) {
    if (const auto* other = std::get_if<Other>(&value))
      throw ConfigError("AMQP 1.0: the reject info " + key + " has a value of type " +
                        other->type_name + ", which cannot be sent");
  }
  settle(kRejected, false, false, condition, description, info);
}

void Delivery::settle(int outcome, bool failed, bool undeliverable_here,
                      const std::string& condition, const std::string& description,
                      const std::map<std::string, Value>& info) {
  if (settled_) throw TransportError("AMQP 1.0: the delivery was settled already", false);
  const std::shared_ptr<Client::Impl> impl = settler_ ? settler_->impl.lock() : nullptr;
  if (!impl) throw StaleDeliveryError("AMQP 1.0: the delivery's client is gone");
  settled_ = true;
  impl->hand_over(Client::Impl::SettleOp{id_, connection_, outcome, failed, undeliverable_here,
                                         condition, description, info});
}

// ---- Client ----

Client::Client(Options options) {
  validate(options);
  impl_ = std::make_shared<Impl>(std::move(options));
  impl_->settler = std::make_shared<Delivery::Settler>(Delivery::Settler{impl_});
}

Client::~Client() {
  close();
}

void Client::send(const std::string& address, const Message& message) {
  send_batch(address, std::vector<Message>{message});
}

void Client::send_batch(const std::string& address, std::vector<Message> messages) {
  if (messages.empty()) return;
  std::vector<std::shared_ptr<Impl::SendOp>> ops;
  std::vector<std::future<void>> outcomes;
  ops.reserve(messages.size());
  outcomes.reserve(messages.size());
  for (Message& message : messages) {
    auto op = std::make_shared<Impl::SendOp>();
    op->address = address;
    op->message = std::move(message);
    outcomes.push_back(op->outcome.get_future());
    ops.push_back(std::move(op));
  }
  impl_->post([impl = impl_.get(), ops] {
    for (const auto& op : ops)
      impl->enqueue_send(op);
  });
  const auto deadline = std::chrono::steady_clock::now() + impl_->options.timeout;
  // The first failure, as a copy sharing no storage with the error the container thread made
  // (spi/unshared: that thread releases its own when it drops the send).
  std::optional<Error> first;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].wait_until(deadline) != std::future_status::ready) {
      for (std::size_t j = i; j < ops.size(); ++j)
        ops[j]->abandoned = true;
      if (first) throw_error(*first);
      std::string why = "AMQP 1.0: no outcome for the message sent to " + address + " within " +
                        std::to_string(impl_->options.timeout.count()) + " ms";
      const std::lock_guard lock(impl_->mutex);
      if (!impl_->last_error.empty()) why += "; the last connection failed: " + impl_->last_error;
      throw TimeoutError(why);
    }
    try {
      outcomes[i].get();
    } catch (const std::future_error&) {
      if (!first) first = ClosedError("AMQP 1.0 client closed");
    } catch (const Error& e) {
      if (!first) first = spi::unshared(e);
    } catch (const std::exception& e) {  // Proton's own (e.g. its encoder's): not sent
      if (!first) first = TransportError(std::string("AMQP 1.0: ") + e.what(), false);
    }
  }
  if (first) throw_error(*first);
}

std::vector<Message> Client::browse(const std::string& address, std::size_t max) {
  auto op = std::make_shared<Impl::BrowseOp>();
  op->address = address;
  op->max = max;
  std::future<std::vector<Message>> result = op->done.get_future();
  impl_->post([impl = impl_.get(), op] { impl->start_browse(op); });
  return impl_->await(result, "browsing " + address);
}

std::optional<Delivery> Client::receive(const std::string& address, milliseconds timeout) {
  return impl_->receive(address, timeout);
}

void Client::flush() {
  {
    std::unique_lock lock(impl_->mutex);
    if (!impl_->started) return;
    if (impl_->live_connection == 0) {
      // No connection to give them to: what waits is stale as well (the peer redelivers it).
      const std::uint64_t stale = std::exchange(impl_->stale_settles, 0) + impl_->settles.size();
      impl_->settles.clear();
      lock.unlock();
      if (stale > 0) {
        throw StaleDeliveryError("AMQP 1.0: " + std::to_string(stale) +
                                 " settles found their connection gone; the peer redelivers "
                                 "those messages");
      }
      return;
    }
  }
  const std::uint64_t stale = impl_->call<std::uint64_t>(
      [impl = impl_.get()] {
        impl->drain();
        const std::lock_guard lock(impl->mutex);
        return std::exchange(impl->stale_settles, 0);
      },
      "flush");
  if (stale > 0) {
    throw StaleDeliveryError("AMQP 1.0: " + std::to_string(stale) +
                             " settles found their connection gone; the peer redelivers those "
                             "messages");
  }
}

void Client::request(const std::string& node, const proton::message& request,
                     proton::message& reply) {
  auto promise = std::make_shared<std::promise<proton::message>>();
  std::future<proton::message> result = promise->get_future();
  impl_->post([impl = impl_.get(), op = Impl::RequestOp{node, request, promise}]() mutable {
    impl->parked_requests.push_back(std::move(op));
    impl->run_requests();
  });
  if (result.wait_for(impl_->options.timeout) != std::future_status::ready) {
    throw TimeoutError("AMQP 1.0: no reply from " + node + " within " +
                       std::to_string(impl_->options.timeout.count()) + " ms");
  }
  try {
    reply = result.get();
  } catch (const std::future_error&) {
    throw ClosedError("AMQP 1.0 client closed");
  } catch (const Error& e) {
    throw_error(spi::unshared(e));
  }
}

void Client::close() {
  impl_->close();
}

std::uint64_t Client::connection() const {
  return impl_->generation.load();
}

int Client::receiver_credit(const std::string& address) {
  return impl_->call<int>(
      [impl = impl_.get(), address] {
        const auto it = impl->receivers.find(address);
        return it == impl->receivers.end() ? -1 : it->second.credit();
      },
      "receiver_credit");
}

}  // namespace babelqueue::amqp10
