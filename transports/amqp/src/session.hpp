// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// The connection of one AmqpTransport and everything used only with its connection mutex held:
// rabbitmq-c's connection state, the three channels (publish, consume, inspect), the declared-queue
// caches, the consumers, publisher confirms and the reassembly of pushed deliveries. The caller's
// threads meet it through the Board (deliveries) and Completions (publishes).

#include <babelqueue/amqp/transport.hpp>
#include <babelqueue/spi/unshared.hpp>

#include <amqp.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include "confirms.hpp"
#include "fields.hpp"

namespace babelqueue::amqp::detail {

// The std::any handle of a ReceivedMessage: the consume channel's generation and the tag.
struct Handle {
  std::uint64_t generation = 0;
  std::uint64_t tag = 0;
};

// One message read from the broker.
struct Delivery {
  std::string queue;
  std::string body;
  Headers headers;
  Handle handle;
  bool redelivered = false;
  std::int64_t delivery_count = 0;  // quorum queues: x-delivery-count + 1
};

using spi::unshared;

// The outcome of one publish (or batch), set once by the thread that read its confirm (or
// failed it) and taken by the publisher. A publisher that reads the socket itself while it waits
// attaches its thread's eventfd, which set() then signals, so that a confirm read by another
// thread wakes it out of poll().
class Completion {
 public:
  void set(Status value) {
    std::lock_guard<std::mutex> lock(mu_);
    if (value_ || taken_) return;
    value_.emplace(unshared(value));
    if (waker_ >= 0 && waiter_ != std::this_thread::get_id()) {
      const std::uint64_t one = 1;
      [[maybe_unused]] const ssize_t n = ::write(waker_, &one, sizeof one);
    }
  }
  // The outcome once set (then taken), else nullopt.
  std::optional<Status> try_take() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!value_) return std::nullopt;
    taken_ = true;
    std::optional<Status> out = std::move(value_);
    value_.reset();
    return out;
  }
  // `fd` (the calling thread's eventfd) is signalled by set() on another thread until detach().
  void attach(int fd) {
    std::lock_guard<std::mutex> lock(mu_);
    waker_ = fd;
    waiter_ = std::this_thread::get_id();
  }
  void detach() {
    std::lock_guard<std::mutex> lock(mu_);
    waker_ = -1;
  }

 private:
  std::mutex mu_;
  std::optional<Status> value_;
  bool taken_ = false;
  int waker_ = -1;
  std::thread::id waiter_;
};

// Deliveries pushed by the broker, per queue, for the threads in `pop`; the consume channel's
// current generation, for stale-ack checks.
class Board {
 public:
  // With the connection mutex held.
  void deliver(Delivery d);
  void consumer_started(const std::string& queue);
  // The consumer of `queue` ended (cancelled by the broker): its pops see `why` once.
  void consumer_ended(const std::string& queue, const Error& why);
  // The consume channel is gone: every buffered delivery is dropped (the broker requeued them)
  // and every consumer ends with `why`.
  void channel_lost(const Error& why);
  void set_generation(std::uint64_t generation);

  // Any thread. A delivery handed out by deliver() or get() is outstanding until settle().
  void outstanding(const Handle& handle);
  // True (and it is no longer outstanding) when `handle` is an outstanding delivery of the
  // current consume channel: only then may it be acked, as a second ack of a tag is a channel
  // error (406) that would requeue every other delivery of the channel.
  [[nodiscard]] bool settle(const Handle& handle);
  [[nodiscard]] bool is_outstanding(const Handle& handle) const;
  // Wakes every pop for good.
  void close();

  enum class Take { Delivered, Empty, NotConsuming, Lost, Closed };
  // Takes the next delivery of `queue` (into `out`), or tells why there is none: no consumer
  // (NotConsuming), the consumer was lost (Lost, with the error in `lost`), close() (Closed), or
  // none arrived yet (Empty): then the eventfd `waker` is signalled once when one arrives, the
  // consumer ends or close(), until the next try_take() or forget() of the queue.
  Take try_take(const std::string& queue, int waker, std::optional<Delivery>& out,
                std::optional<Error>& lost);
  void forget(const std::string& queue);
  // Waits until `deadline` or close(); false when closed.
  bool sleep_until(std::chrono::steady_clock::time_point deadline);

 private:
  struct Queue {
    std::deque<Delivery> ready;
    bool consuming = false;
    std::optional<Error> lost;
    int waker = -1;  // of the pop waiting for it
    bool signalled = false;
  };
  // With mu_ held.
  void signal(Queue& q);
  void signal_all();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Queue, std::less<>> queues_;
  std::uint64_t generation_ = 0;
  std::unordered_set<std::uint64_t> outstanding_;  // tags of the current generation
  bool closed_ = false;
};

// The TTL holding queue of `queue` for `delay`: `<queue><delay_queue_infix><ms>`.
std::string holding_queue(const Options& options, std::string_view queue,
                          std::chrono::milliseconds delay);

// One message to publish, projected on the caller's thread (into storage the thread reuses
// from one publish to the next).
struct Outgoing {
  std::string body;
  std::unique_ptr<WireProperties> properties;
};

// A publish (or batch): written by the caller, confirmed through `done`.
struct PublishJob {
  std::string_view queue;
  // Set: through the TTL holding queue of `queue` for this delay.
  std::optional<std::chrono::milliseconds> delay;
  std::span<const Outgoing> messages;
  std::shared_ptr<Completion> done;
};

class Session {
 public:
  Session(const Options& options, Board& board);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The socket while connected, else -1.
  [[nodiscard]] int fd() const;
  // Changes whenever the connection does (0 while there is none).
  [[nodiscard]] std::uint64_t connection_id() const {
    return conn_ == nullptr ? 0 : connection_id_;
  }
  // How long the I/O thread may sleep in poll() and still service heartbeats.
  [[nodiscard]] std::chrono::milliseconds poll_interval() const;

  // Never throws: completes job.done now (an error, or ok without confirms) or when confirmed.
  void publish(PublishJob& job);
  // These throw Error (ConfigError, TransportError, ClosedError).
  void start_consumer(const std::string& queue);
  std::optional<Delivery> get(const std::string& queue);
  // basic.ack of each handle of the current consume channel (stale ones are ignored: the broker
  // requeued them): one ack with `multiple` for those below every unacked delivery of the
  // channel, single acks for the others. Throws TransportError when the connection fails.
  void ack(const std::vector<Handle>& handles);
  QueueStats stats(const std::string& queue, const std::string& dead_letter_queue);
  std::vector<PeekedMessage> peek(const std::string& queue, std::size_t max);

  // How far pump() reads: `Buffered` handles the frames rabbitmq-c holds already (no system
  // call when it holds none), `Once` also reads the socket once (after poll() said it is
  // readable), `All` reads it until nothing is left.
  enum class Read { Buffered, Once, All };
  // Handles the frames that arrived; sends heartbeats that are due. Never throws.
  void pump(Read read = Read::All);
  // Closes the channels and the connection (the broker requeues what is unacked); pending
  // confirms fail with Closed; every later call that needs the connection throws ClosedError.
  void shutdown();

 private:
  struct Channel {
    explicit Channel(amqp_channel_t channel) : id(channel) {}
    amqp_channel_t id;
    bool open = false;
    std::uint64_t generation = 0;
    std::set<std::string, std::less<>> declared;
  };
  // A pushed delivery whose header or body frames are still coming.
  struct Content {
    Delivery delivery;
    std::uint64_t size = 0;
    bool have_header = false;
    bool discard = false;  // basic.return: read and dropped
    bool for_get = false;  // the answer to our basic.get: goes to got_, not to the Board
  };

  void connect();
  void open(Channel& ch);
  Channel& ready(Channel& ch);
  // Declares `queue` on `ch` once per channel (AMQP-7); `holding_for` set: a TTL holding queue.
  void declare(Channel& ch, std::string_view queue,
               const std::optional<std::pair<std::string, std::int64_t>>& holding_for = {});
  // Throws for a failed synchronous call; a channel or connection exception also ends them.
  void check(const amqp_rpc_reply_t& reply, Channel* ch, const std::string& what);
  void check_status(int status, const std::string& what);
  // True (and `ch` is closed) when `reply` is the 404 of a queue that does not exist.
  bool not_found(const amqp_rpc_reply_t& reply, Channel& ch);
  [[noreturn]] void lost(const std::string& why);
  void drop_connection(const Error& why);
  void channel_closed(Channel& ch, const Error& why);
  void handle(const amqp_frame_t& frame);
  void handle_method(const amqp_frame_t& frame);
  void finish_content();
  // Handles frames until `done()` (at most `connect_timeout` between two frames).
  template <class Done>
  void handle_until(Done done, const std::string& what);
  Delivery delivery_from(const std::string& queue, std::uint64_t tag, bool redelivered,
                         const amqp_basic_properties_t& props, std::string body) const;

  const Options& options_;
  Board& board_;
  amqp_connection_state_t conn_ = nullptr;
  std::uint64_t connection_id_ = 0;
  bool shut_down_ = false;
  Channel publish_{1};
  Channel consume_{2};
  Channel inspect_{3};
  ConfirmTracker<std::shared_ptr<Completion>> confirms_;
  // The batches a confirm completed (storage reused from one confirm to the next).
  std::vector<ConfirmTracker<std::shared_ptr<Completion>>::Completed> settled_;
  std::map<std::string, std::string, std::less<>> consumer_queue_;  // consumer tag -> queue
  // Tags of the consume channel delivered and not acked yet: a basic.ack with `multiple` may
  // cover every tag below the lowest of them.
  std::set<std::uint64_t> unacked_;
  std::optional<Content> content_;
  std::optional<Delivery> got_;
};

}  // namespace babelqueue::amqp::detail
