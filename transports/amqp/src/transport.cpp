// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// AmqpTransport: the Session (session.cpp) behind one connection mutex. A caller's operation
// runs on the caller's thread with the mutex held; the I/O thread reads what arrives, writes
// queued acks and services heartbeats; `pop` of pushed deliveries takes them from the Board.

#include <babelqueue/amqp/transport.hpp>
#include <babelqueue/binding/amqp.hpp>
#include <babelqueue/spi/attempts.hpp>
#include <babelqueue/spi/closed_guard.hpp>
#include <babelqueue/spi/text.hpp>

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <span>
#include <thread>
#include <type_traits>
#include <utility>

#include "options.hpp"
#include "session.hpp"

namespace babelqueue::amqp {

using detail::Board;
using detail::Completion;
using detail::Delivery;
using detail::Handle;
using detail::Outgoing;
using detail::PublishJob;
using detail::Session;
using spi::quoted;

class AmqpTransport::Impl {
 public:
  explicit Impl(Options o) : options(std::move(o)) {
    detail::validate(options);
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0) {
      throw TransportError(std::string("amqp: eventfd failed: ") + std::strerror(errno), false);
    }
  }
  ~Impl() {
    close();
    ::close(wake_fd_);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  const Options options;
  spi::ClosedGuard guard{"amqp transport"};
  Board board;

  // Queues an ack; the acks are written together by the next thread that holds the
  // connection (a caller's operation, a thread that reads while it waits), or once half the
  // prefetch window waits for acks by this thread when the connection is free, else by the I/O
  // thread, woken for them.
  bool post_ack(const Handle& handle) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return false;
      start_io();
      acks_.push_back(handle);
      if (acks_.size() < ack_batch_) return true;
    }
    std::unique_lock<std::mutex> conn(conn_mu_, std::try_to_lock);
    if (conn.owns_lock()) {
      write_acks();
      return true;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (!acks_.empty()) wake();
    return true;
  }

  // Runs `fn(Session&)` on the calling thread with the connection to itself (after the acks
  // queued before it), then handles the frames that arrived meanwhile; returns what `fn`
  // returned or threw.
  template <class F>
  auto run(std::string_view operation, F fn) -> Result<std::invoke_result_t<F&, Session&>> {
    using R = std::invoke_result_t<F&, Session&>;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return guard.error(operation);
      start_io();
    }
    std::lock_guard<std::mutex> conn(conn_mu_);
    write_acks();
    std::optional<Result<R>> out;
    try {
      out.emplace(fn(session_));
    } catch (const Error& e) {
      out.emplace(e);
    } catch (const std::exception& e) {
      out.emplace(TransportError(std::string("amqp: ") + e.what()));
    }
    finish_turn();
    return std::move(*out);
  }

  // A thread that waits for the broker (a confirm, a delivery) reads the connection itself
  // when it is free: read_if_free() writes the queued acks and handles the frames that arrived;
  // wait_readable() then sleeps until the socket (when it was free) or the thread's eventfd is
  // readable, or a deadline.
  struct Reader {
    bool pumped = false;
    int fd = -1;
    std::chrono::milliseconds slice{};
    int busy = 0;  // consecutive rounds that found the connection busy
  };

  // The messages of one publish call, projected on the calling thread into storage the thread
  // keeps for its next call (a warm publish allocates nothing for properties and headers). A
  // call takes the thread's storage and puts it back when it ends, so a publish made during
  // one (by a logger, say) projects into storage of its own.
  class Staged {
   public:
    Staged() : slots_(std::exchange(kept(), {})) {}
    ~Staged() {
      slots_.resize(std::min(slots_.size(), kKeptSlots));
      for (Outgoing& slot : slots_)
        slot.body = std::string();  // the bodies are not kept
      if (kept().empty()) kept() = std::move(slots_);
    }
    Staged(const Staged&) = delete;
    Staged& operator=(const Staged&) = delete;

    void reserve(std::size_t n) {
      while (slots_.size() < n)
        slots_.push_back(Outgoing{{}, std::make_unique<detail::WireProperties>()});
    }
    // The next message of the call, projected from `body` and `riders`.
    void add(std::string body, const Headers& riders, const Logger& logger) {
      reserve(used_ + 1);
      Outgoing& slot = slots_[used_++];
      slot.body = std::move(body);
      slot.properties->project(slot.body, riders);
      for (const binding::amqp::Omitted& o : slot.properties->omitted()) {
        log_to(logger, LogLevel::Warning,
               "amqp: " + quoted(o.name) + " left out of the publish: " + std::to_string(o.bytes) +
                   " bytes exceed the 255-byte AMQP short string (AMQP-12/14)");
      }
    }
    [[nodiscard]] std::span<const Outgoing> messages() const { return {slots_.data(), used_}; }

   private:
    // The most slots a thread keeps between calls (a larger batch allocates the rest).
    static constexpr std::size_t kKeptSlots = 64;
    static std::vector<Outgoing>& kept() {
      thread_local std::vector<Outgoing> slots;
      return slots;
    }
    std::vector<Outgoing> slots_;
    std::size_t used_ = 0;
  };

  // Publishes the staged messages and waits for the broker's confirm.
  Status publish(std::string_view queue, const Staged& staged,
                 std::optional<std::chrono::milliseconds> delay) {
    // run() calls the lambda on this thread: the job lives on its stack.
    PublishJob job{.queue = queue,
                   .delay = delay,
                   .messages = staged.messages(),
                   .done = std::make_shared<Completion>()};
    const std::shared_ptr<Completion> done = job.done;
    // The publisher goes on to wait for the confirm on the socket it just wrote to.
    Reader reader;
    Result<bool> written = run("publish", [&job, &reader](Session& s) {
      s.publish(job);
      reader = Reader{.pumped = true, .fd = s.fd(), .slice = s.poll_interval()};
      return true;
    });
    if (!written) return written.error();
    return wait_confirm(*done, queue, reader);
  }

  // Waits for `done`, reading the socket itself whenever the connection is free (as a
  // single-threaded client reads its own confirm: no hand-off through another thread on the
  // way), else woken by the thread that read the confirm.
  Status wait_confirm(Completion& done, std::string_view queue, Reader& reader) {
    const auto bound = options.connect_timeout + options.confirm_timeout;
    const auto deadline = std::chrono::steady_clock::now() + bound;
    const int waker = thread_waker();
    done.attach(waker);
    for (;;) {
      if (std::optional<Status> st = done.try_take()) return detached(done, std::move(*st));
      if (!reader.pumped) {
        read_if_free(reader);
        continue;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        return detached(done, TimeoutError("amqp: no confirm for the publish to " + quoted(queue) +
                                           " within " + std::to_string(bound.count()) +
                                           " ms (it may still have been stored)"));
      }
      wait_readable(reader, waker, deadline);
    }
  }

  void read_if_free(Reader& r) {
    r.pumped = true;
    r.fd = -1;
    std::unique_lock<std::mutex> conn(conn_mu_, std::try_to_lock);
    if (!conn.owns_lock()) {
      r.slice = kRetrySlice * (1 << std::min(r.busy++, kMaxRetryDoublings));
      return;
    }
    r.busy = 0;
    write_acks();
    session_.pump(Session::Read::Once);
    r.fd = session_.fd();
    r.slice = session_.poll_interval();
  }
  static void wait_readable(Reader& r, int waker, std::chrono::steady_clock::time_point deadline) {
    r.pumped = false;
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left <= std::chrono::milliseconds::zero()) return;
    const auto slice = waker < 0 ? std::min(r.slice, kRetrySlice) : r.slice;
    pollfd fds[2] = {{waker, POLLIN, 0}, {r.fd, POLLIN, 0}};
    ::poll(fds, 2, static_cast<int>(std::min(left, slice).count()));
    if ((fds[0].revents & POLLIN) != 0) {
      std::uint64_t count = 0;
      [[maybe_unused]] const ssize_t n = ::read(waker, &count, sizeof count);
    }
  }

  // Remembers the first failure of an ack write, for flush().
  void ack_failed(const Error& e) {
    std::lock_guard<std::mutex> lock(ack_mu_);
    if (!ack_error_) ack_error_ = detail::unshared(e);
  }
  std::optional<Error> take_ack_error() {
    std::lock_guard<std::mutex> lock(ack_mu_);
    std::optional<Error> e = std::move(ack_error_);
    ack_error_.reset();
    return e;
  }

  void close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      stopping_ = true;
      wake();
    }
    board.close();
    if (io_.joinable()) io_.join();
    std::lock_guard<std::mutex> conn(conn_mu_);
    write_acks();
    session_.shutdown();
  }

 private:
  // How long a waiter that found the connection busy (or has no eventfd) sleeps before it looks
  // again, unless woken: 1 ms, doubled while it stays busy (a reconnect can hold it for
  // connect_timeout) up to 32 ms.
  static constexpr std::chrono::milliseconds kRetrySlice{1};
  static constexpr int kMaxRetryDoublings = 5;

  static Status detached(Completion& done, Status st) {
    done.detach();
    return st;
  }

  // The calling thread's eventfd for its waits (made on its first wait, closed when the thread
  // ends), or -1 when none could be made.
 public:
  static int thread_waker() {
    struct Fd {
      int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
      Fd() = default;
      Fd(const Fd&) = delete;
      Fd& operator=(const Fd&) = delete;
      ~Fd() {
        if (fd >= 0) ::close(fd);
      }
    };
    thread_local const Fd waker;
    return waker.fd;
  }

 private:
  // With mu_ held.
  void start_io() {
    if (!io_.joinable()) io_ = std::thread([this] { loop(); });
  }

  // With mu_ held: one eventfd write until the I/O thread takes the queues.
  void wake() {
    if (woken_) return;
    woken_ = true;
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
  }

  // With conn_mu_ held.
  void write_acks() {
    std::vector<Handle> acks;
    {
      std::lock_guard<std::mutex> lock(mu_);
      acks.swap(acks_);
    }
    if (acks.empty()) return;
    try {
      session_.ack(acks);
    } catch (const Error& e) {
      ack_failed(e);
    }
  }

  // With conn_mu_ held, after a caller's operation: the frames rabbitmq-c read and queued during
  // it are handled.
  void finish_turn() { session_.pump(Session::Read::Buffered); }

  // The I/O thread: writes the acks it was woken for and, at least every poll interval, handles
  // what arrived and services heartbeats (rabbitmq-c sends ours when it reads), so heartbeats go
  // on while handlers run and nobody else reads the connection. The threads that wait for the
  // broker read it themselves (Reader).
  void loop() {
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (woken_) {  // consumed here, so poll() does not return at once for it
          woken_ = false;
          std::uint64_t count = 0;
          [[maybe_unused]] const ssize_t r = ::read(wake_fd_, &count, sizeof count);
        }
        if (stopping_) return;
      }
      std::chrono::milliseconds interval{};
      {
        std::lock_guard<std::mutex> conn(conn_mu_);
        write_acks();
        session_.pump(Session::Read::All);
        interval = session_.poll_interval();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (woken_ || stopping_) continue;
      }
      pollfd fd{wake_fd_, POLLIN, 0};
      ::poll(&fd, 1, static_cast<int>(interval.count()));
    }
  }

  int wake_fd_ = -1;
  // Guards the queued acks, woken_, stopping_ and io_.
  std::mutex mu_;
  std::vector<Handle> acks_;
  // The connection: every rabbitmq-c call happens with it held, on a caller's thread or the
  // I/O thread; never held while a pop waits or a handler runs.
  std::mutex conn_mu_;
  Session session_{options, board};
  const std::size_t ack_batch_ = options.consume_mode == ConsumeMode::Push
                                     ? static_cast<std::size_t>(options.prefetch + 1) / 2
                                     : 1;
  bool woken_ = false;
  bool stopping_ = false;
  std::thread io_;
  std::mutex ack_mu_;
  std::optional<Error> ack_error_;
};

namespace {

constexpr std::size_t kShortStringMax = binding::amqp::SHORT_STRING_MAX;

// Queue names are AMQP short strings; "" would make the broker name a new queue.
std::optional<Error> bad_queue(std::string_view queue) {
  if (!queue.empty() && queue.size() <= kShortStringMax) return std::nullopt;
  return Error(ErrorCode::Usage,
               "amqp: a queue name must be 1 to 255 bytes, got " + std::to_string(queue.size()));
}

Error stale(const ReceivedMessage& msg) {
  return Error(ErrorCode::StaleDelivery,
               "amqp: this delivery from " + quoted(msg.queue) +
                   " was settled already, or its channel is gone and the broker requeued it "
                   "(AMQP-23)");
}

ReceivedMessage to_message(Delivery d) {
  ReceivedMessage m;
  m.body = std::move(d.body);
  m.queue = std::move(d.queue);
  m.handle = d.handle;
  m.headers = std::move(d.headers);
  m.delivery_count = d.delivery_count;
  return m;
}

}  // namespace

AmqpTransport::AmqpTransport(Options options) : impl_(std::make_unique<Impl>(std::move(options))) {}

AmqpTransport::AmqpTransport(std::string_view url) {
  Options options;
  options = parse_url(url, std::move(options));
  impl_ = std::make_unique<Impl>(std::move(options));
}

AmqpTransport::~AmqpTransport() = default;

const Options& AmqpTransport::options() const noexcept {
  return impl_->options;
}

std::string AmqpTransport::delay_queue(std::string_view queue,
                                       std::chrono::milliseconds delay) const {
  return detail::holding_queue(impl_->options, queue, delay);
}

Status AmqpTransport::publish(std::string_view queue, std::string body) {
  return publish_with_headers(queue, std::move(body), {});
}

Status AmqpTransport::publish_with_headers(std::string_view queue, std::string body,
                                           const Headers& headers) {
  if (impl_->guard.closed()) return impl_->guard.error("publish");
  if (auto e = bad_queue(queue)) return *e;
  Impl::Staged one;
  one.add(std::move(body), headers, impl_->options.logger);
  return impl_->publish(queue, one, std::nullopt);
}

Status AmqpTransport::publish_batch(std::string_view queue, std::vector<std::string> bodies) {
  if (impl_->guard.closed()) return impl_->guard.error("publish_batch");
  if (auto e = bad_queue(queue)) return *e;
  if (bodies.empty()) return {};
  Impl::Staged messages;
  messages.reserve(bodies.size());
  for (std::string& body : bodies)
    messages.add(std::move(body), {}, impl_->options.logger);
  return impl_->publish(queue, messages, std::nullopt);
}

Status AmqpTransport::publish_delayed(std::string_view queue, std::string body,
                                      std::chrono::milliseconds delay) {
  if (impl_->guard.closed()) return impl_->guard.error("publish_delayed");
  if (auto e = bad_queue(queue)) return *e;
  if (bad_queue(delay_queue(queue, delay))) {
    return Error(ErrorCode::Usage,
                 "amqp: the holding queue name of " + quoted(queue) + " would exceed 255 bytes");
  }
  Impl::Staged one;
  one.add(std::move(body), {}, impl_->options.logger);
  if (delay <= std::chrono::milliseconds::zero()) {
    return impl_->publish(queue, one, std::nullopt);
  }
  return impl_->publish(queue, one, delay);
}

Result<std::optional<ReceivedMessage>> AmqpTransport::pop(std::string_view queue,
                                                          std::chrono::milliseconds timeout) {
  if (impl_->guard.closed()) return impl_->guard.error("pop");
  if (auto e = bad_queue(queue)) return *e;
  const std::string name(queue);
  const auto deadline =
      std::chrono::steady_clock::now() + std::max(timeout, std::chrono::milliseconds::zero());
  const auto get_once = [&]() -> Result<std::optional<ReceivedMessage>> {
    Result<std::optional<Delivery>> got =
        impl_->run("pop", [name](Session& s) { return s.get(name); });
    if (!got) return got.error();
    if (!got.value()) return std::optional<ReceivedMessage>();
    return std::optional<ReceivedMessage>(to_message(std::move(*got.value())));
  };

  if (impl_->options.consume_mode == ConsumeMode::Get) {
    for (;;) {
      Result<std::optional<ReceivedMessage>> r = get_once();
      if (!r || r.value()) return r;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return r;
      if (!impl_->board.sleep_until(std::min(deadline, now + impl_->options.empty_repoll_interval)))
        return impl_->guard.error("pop");
    }
  }

  const int waker = Impl::thread_waker();
  Impl::Reader reader;
  for (;;) {
    std::optional<Delivery> d;
    std::optional<Error> lost;
    switch (impl_->board.try_take(name, waker, d, lost)) {
      case Board::Take::Delivered:
        return std::optional<ReceivedMessage>(to_message(std::move(*d)));
      case Board::Take::NotConsuming: {
        Result<bool> started = impl_->run("pop", [name](Session& s) {
          s.start_consumer(name);
          return true;
        });
        if (!started) return started.error();
        continue;
      }
      case Board::Take::Lost:
        return *lost;
      case Board::Take::Closed:
        return impl_->guard.error("pop");
      case Board::Take::Empty:
        break;
    }
    if (!reader.pumped) {
      impl_->read_if_free(reader);
      continue;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      impl_->board.forget(name);
      // A pop that may not wait asks the broker once (AMQP-19) rather than answer from a
      // consumer whose first push may still be on its way.
      if (timeout <= std::chrono::milliseconds::zero()) return get_once();
      return std::optional<ReceivedMessage>();
    }
    Impl::wait_readable(reader, waker, deadline);
  }
}

Status AmqpTransport::ack(const ReceivedMessage& msg) {
  if (impl_->guard.closed()) return impl_->guard.error("ack");
  const auto* handle = std::any_cast<Handle>(&msg.handle);
  if (handle == nullptr) {
    return Error(ErrorCode::Usage, "amqp: ack of a message this transport did not deliver");
  }
  if (!impl_->board.settle(*handle)) return stale(msg);
  if (!impl_->post_ack(*handle)) return impl_->guard.error("ack");
  return {};
}

Status AmqpTransport::release(const ReceivedMessage& msg, std::chrono::milliseconds delay) {
  if (impl_->guard.closed()) return impl_->guard.error("release");
  const auto* handle = std::any_cast<Handle>(&msg.handle);
  if (handle == nullptr) {
    return Error(ErrorCode::Usage, "amqp: release of a message this transport did not deliver");
  }
  if (!impl_->board.is_outstanding(*handle)) return stale(msg);
  Result<std::string, Error> body = spi::increment_attempts(msg.body);
  if (!body) {
    return Error(ErrorCode::ReleaseUnsupported,
                 std::string("amqp: cannot count the attempt: ") + body.error().what());
  }
  Headers riders;
  for (const auto& [key, value] : msg.headers) {
    if (!key.starts_with("x-")) riders.emplace(key, value);
  }
  Impl::Staged one;
  one.add(std::move(body.value()), riders, impl_->options.logger);
  const std::optional<std::chrono::milliseconds> holding =
      delay > std::chrono::milliseconds::zero() ? std::optional(delay) : std::nullopt;
  if (Status st = impl_->publish(msg.queue, one, holding); !st.ok()) return st;
  return ack(msg);
}

Status AmqpTransport::flush() {
  if (impl_->guard.closed()) return impl_->guard.error("flush");
  Result<bool> done = impl_->run("flush", [](Session&) { return true; });
  if (!done) return done.error();
  if (std::optional<Error> e = impl_->take_ack_error()) return *e;
  return {};
}

Result<QueueStats> AmqpTransport::stats(std::string_view queue,
                                        std::string_view dead_letter_queue) {
  if (impl_->guard.closed()) return impl_->guard.error("stats");
  if (auto e = bad_queue(queue)) return *e;
  std::string dlq =
      dead_letter_queue.empty() ? default_dead_letter_name(queue) : std::string(dead_letter_queue);
  return impl_->run("stats", [q = std::string(queue), dlq = std::move(dlq)](Session& s) {
    return s.stats(q, dlq);
  });
}

Result<std::vector<PeekedMessage>> AmqpTransport::peek(std::string_view queue, std::size_t max) {
  if (impl_->guard.closed()) return impl_->guard.error("peek");
  if (auto e = bad_queue(queue)) return *e;
  return impl_->run("peek", [q = std::string(queue), max](Session& s) { return s.peek(q, max); });
}

void AmqpTransport::close() {
  if (!impl_->guard.close()) return;
  impl_->close();
}

}  // namespace babelqueue::amqp
