// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// SqsTransport (D-11): batched sends, pops served from a per-queue prefetch buffer filled by
// one ReceiveMessage of up to 10, deletes batched per queue, and one housekeeping thread that
// flushes the deletes on a timer and keeps the visibility of held messages alive.
//
// Locking: `mu_` guards the reservations (their state and deadlines), the held set, the per-queue
// consume state and the housekeeper's schedule; no HTTP call is made with it held. A queue's
// `send_mu` serialises its DeleteMessageBatch sends (so close() waits for one in flight).

#include <babelqueue/binding/common.hpp>
#include <babelqueue/binding/sqs.hpp>
#include <babelqueue/spi/ack_batcher.hpp>
#include <babelqueue/spi/backoff.hpp>
#include <babelqueue/spi/closed_guard.hpp>
#include <babelqueue/spi/prefetch_buffer.hpp>
#include <babelqueue/spi/schema_gate.hpp>
#include <babelqueue/spi/text.hpp>
#include <babelqueue/spi/unshared.hpp>
#include <babelqueue/sqs/transport.hpp>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "api.hpp"
#include "messages.hpp"
#include "options.hpp"
#include "sigv4.hpp"

namespace babelqueue::sqs {
namespace {

using spi::quoted;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Steady = std::chrono::steady_clock;

// Entry-level retries of a SendMessageBatch (D-11): 100, 200, 400, 800 ms apart.
constexpr int kBatchTries = 5;
// Entries per batch request and messages per receive: SQS's limit.
constexpr std::size_t kBatch = detail::kMaxBatch;
constexpr seconds kDefaultWindow{30};
constexpr seconds kPeekWindow{30};
constexpr seconds kPollSlack{10};

struct Reservation {
  enum class State { Prefetched, HandedOut, Settled };
  std::string queue;
  std::string queue_url;
  std::string receipt_handle;
  std::string message_id;
  seconds window{kDefaultWindow};
  // Guarded by Impl::mu_.
  Steady::time_point deadline;
  State state = State::Prefetched;
  bool extending = false;
};
using ReservationPtr = std::shared_ptr<Reservation>;

// ReceivedMessage::handle.
struct Handle {
  ReservationPtr reservation;
};

// What the transport keeps per queue.
struct QueueState {
  explicit QueueState(std::size_t ack_batch) : acks(ack_batch) {}
  spi::AckBatcher<ReservationPtr> acks;
  std::mutex send_mu;
  spi::Backoff ack_backoff;  // guarded by send_mu
  // Guarded by Impl::mu_.
  std::optional<Steady::time_point> ack_due;
  bool info_loaded = false;
  seconds window{kDefaultWindow};
  bool has_redrive = false;
  bool warned_no_redrive = false;
};
using QueueStatePtr = std::shared_ptr<QueueState>;

seconds ceil_seconds(milliseconds d) {
  return std::chrono::ceil<seconds>(std::max(d, milliseconds(0)));
}

using detail::EntryFailure;
using detail::string_member;

// Worth resending: not the sender's fault, or throttled.
bool retryable(const EntryFailure& f) {
  return !f.sender_fault || detail::is_transient_code(f.code);
}

std::string describe(const EntryFailure& f) {
  return f.code.empty() ? f.message : f.message.empty() ? f.code : f.code + ": " + f.message;
}

Error usage(std::string_view operation) {
  return Error(ErrorCode::Usage,
               "sqs: " + std::string(operation) + " of a message this transport did not deliver");
}

}  // namespace

class SqsTransport::Impl {
 public:
  explicit Impl(Options o)
      : options(detail::validated(std::move(o))),
        client_(options.client ? options.client : make_curl_client(options.curl)),
        api_(options, client_) {}

  ~Impl() { close(); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  const Options options;

  // ---- publishing ----

  Status publish(std::string_view queue, std::string_view body, const Headers& riders,
                 int delay_seconds) {
    if (guard_.closed()) return guard_.error("publish");
    const auto projection = binding::sqs::projection(body, riders);
    if (auto e = detail::check_sendable(body, projection.attributes)) return *e;
    log_dropped(queue, projection.dropped_riders);
    auto url = queue_url(queue);
    if (!url) return url.error();
    detail::JsonBody request;
    request.str("QueueUrl", *url);
    detail::add_message(request, body, projection.attributes, fifo_ids(queue, body), delay_seconds);
    auto r = api_.call("SendMessage", request.done(), queue);
    if (!r) return r.error();
    return {};
  }

  Status publish_batch(std::string_view queue, const std::vector<std::string>& bodies) {
    if (guard_.closed()) return guard_.error("publish_batch");
    if (bodies.empty()) return {};
    // Every body is checked before the first request, so a bad one sends nothing (SQS-8).
    std::vector<std::string> entries;
    std::vector<std::size_t> sizes;
    entries.reserve(bodies.size());
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      const auto projection = binding::sqs::projection(bodies[i]);
      if (auto e = detail::check_sendable(bodies[i], projection.attributes)) {
        return Error(e->code(),
                     std::string(e->what()) + " (entry " + std::to_string(i) + " of the batch)");
      }
      detail::JsonBody entry;
      detail::add_message(entry, bodies[i], projection.attributes, fifo_ids(queue, bodies[i]), 0);
      entries.push_back(entry.done());
      sizes.push_back(detail::message_size(bodies[i], projection.attributes));
    }
    auto url = queue_url(queue);
    if (!url) return url.error();
    std::size_t start = 0;
    while (start < bodies.size()) {
      std::size_t end = start;
      std::size_t bytes = 0;
      while (end < bodies.size() && end - start < kBatch &&
             (end == start || bytes + sizes[end] <= detail::kMaxMessageBytes)) {
        bytes += sizes[end++];
      }
      std::vector<std::size_t> indices;
      for (std::size_t i = start; i < end; ++i)
        indices.push_back(i);
      if (Status s = send_batch(queue, *url, entries, std::move(indices), bodies.size()); !s.ok()) {
        return s;
      }
      start = end;
    }
    return {};
  }

  Status publish_delayed(std::string_view queue, std::string body, milliseconds delay) {
    if (delay.count() <= 0) return publish(queue, body, {}, 0);
    if (guard_.closed()) return guard_.error("publish_delayed");
    if (options.fifo || queue.ends_with(".fifo")) {
      return Error(ErrorCode::DelayUnsupported,
                   "sqs: FIFO queue " + quoted(queue) +
                       " has no per-message delay (DelaySeconds is for standard queues)");
    }
    const seconds delay_s = ceil_seconds(delay);
    if (delay_s.count() > detail::kMaxDelaySeconds) {
      return Error(ErrorCode::Usage, "sqs: publish_delayed to " + quoted(queue) + ": a delay of " +
                                         std::to_string(delay_s.count()) +
                                         " s is over SQS's limit of 900 s");
    }
    return publish(queue, body, {}, static_cast<int>(delay_s.count()));
  }

  // ---- consuming ----

  Result<std::optional<ReceivedMessage>> pop(std::string_view queue, milliseconds timeout) {
    if (guard_.closed()) return guard_.error("pop");
    start_housekeeper();
    auto state = consume_state(queue);
    if (!state) return state.error();
    if (auto m = take_prefetched(queue, **state))
      return std::optional<ReceivedMessage>(std::move(*m));

    const auto url = queue_url(queue);
    if (!url) return url.error();
    // A FIFO group stays blocked while a message of it is in flight: its pending deletes go
    // first, so the receive can return the group's next messages.
    if (queue.ends_with(".fifo")) (void)send_acks(std::string(queue), **state);
    seconds wait = std::min(ceil_seconds(timeout), seconds(detail::kMaxWaitSeconds));
    if (options.wait_time_seconds > 0) wait = std::min(wait, seconds(options.wait_time_seconds));
    auto response = api_.call(
        "ReceiveMessage",
        receive_request(*url, options.prefetch, wait, seconds(options.visibility_timeout)), queue,
        wait + kPollSlack);
    const Steady::time_point received_at = Steady::now();
    if (!response) return response.error();

    std::vector<ReceivedMessage> messages = to_received(queue, *url, (*state)->window, *response);
    if (messages.empty()) return std::optional<ReceivedMessage>();
    std::unique_lock<std::mutex> lock(mu_);
    if (guard_.closed()) {
      lock.unlock();
      give_back(queue, *url, reservations_of(messages));
      return guard_.error("pop");
    }
    for (auto& m : messages) {
      const ReservationPtr& r = std::any_cast<const Handle&>(m.handle).reservation;
      r->deadline = received_at + r->window;
      held_.insert(r);
    }
    std::any_cast<const Handle&>(messages.front().handle).reservation->state =
        Reservation::State::HandedOut;
    ReceivedMessage first = std::move(messages.front());
    messages.erase(messages.begin());
    prefetched_.put(queue, std::move(messages));
    lock.unlock();
    wake_.notify_all();
    return std::optional<ReceivedMessage>(std::move(first));
  }

  // ---- settling ----

  Status ack(const ReceivedMessage& msg) {
    const Handle* h = std::any_cast<Handle>(&msg.handle);
    if (h == nullptr || !h->reservation) return usage("ack");
    const ReservationPtr& r = h->reservation;
    QueueStatePtr state;
    bool full = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (guard_.closed()) return guard_.error("ack");
      if (r->state == Reservation::State::Settled) return already_settled("ack", *r);
      r->state = Reservation::State::Settled;
      held_.erase(r);
      state = state_locked(r->queue);
      full = state->acks.add(r);
      if (!state->ack_due) state->ack_due = Steady::now() + options.ack_flush_interval;
      start_housekeeper_locked();
    }
    wake_.notify_all();
    // A failure is retried by the housekeeper or recorded for flush().
    if (full) (void)send_acks(r->queue, *state);
    return {};
  }

  Status release(const ReceivedMessage& msg, milliseconds delay) {
    const Handle* h = std::any_cast<Handle>(&msg.handle);
    if (h == nullptr || !h->reservation) return usage("release");
    const ReservationPtr& r = h->reservation;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (guard_.closed()) return guard_.error("release");
      if (r->state == Reservation::State::Settled) return already_settled("release", *r);
      r->state = Reservation::State::Settled;
      held_.erase(r);
      // An extension in flight must not land after the release and undo its delay.
      extended_.wait(lock, [&] { return !r->extending; });
    }
    const auto visibility = std::min(ceil_seconds(delay), seconds(detail::kMaxVisibilitySeconds));
    detail::JsonBody request;
    request.str("QueueUrl", r->queue_url)
        .str("ReceiptHandle", r->receipt_handle)
        .num("VisibilityTimeout", visibility.count());
    auto response = api_.call("ChangeMessageVisibility", request.done(), r->queue);
    if (!response) return response.error();
    return {};
  }

  Status hand_to_broker(const ReceivedMessage& msg) {
    const Handle* h = std::any_cast<Handle>(&msg.handle);
    if (h == nullptr || !h->reservation) return usage("hand_to_broker");
    const ReservationPtr& r = h->reservation;
    std::string warning;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (guard_.closed()) return guard_.error("hand_to_broker");
      if (r->state == Reservation::State::Settled) return already_settled("hand_to_broker", *r);
      r->state = Reservation::State::Settled;
      held_.erase(r);
      const QueueStatePtr state = state_locked(r->queue);
      if (state->info_loaded && !state->has_redrive && !state->warned_no_redrive) {
        state->warned_no_redrive = true;
        warning = "sqs: queue " + quoted(r->queue) +
                  " has no RedrivePolicy: messages handed to the broker (poison, rejected schema "
                  "versions) are redelivered until the queue's retention period ends (SQS-15)";
      }
    }
    if (!warning.empty()) log(LogLevel::Warning, warning);
    return {};
  }

  Status flush() {
    if (guard_.closed()) return guard_.error("flush");
    Status first = flush_all();
    std::lock_guard<std::mutex> lock(mu_);
    if (ack_error_) {
      if (first.ok()) first = spi::unshared(*ack_error_);
      ack_error_.reset();
    }
    return first;
  }

  // ---- inspection ----

  Result<QueueStats> stats(std::string_view queue, std::string_view dead_letter_queue) {
    if (guard_.closed()) return guard_.error("stats");
    constexpr std::string_view kReady = "ApproximateNumberOfMessages";
    constexpr std::string_view kInFlight = "ApproximateNumberOfMessagesNotVisible";
    constexpr std::string_view kDelayed = "ApproximateNumberOfMessagesDelayed";
    auto attributes = queue_attributes(queue, detail::string_array({kReady, kInFlight, kDelayed}));
    if (!attributes) return attributes.error();
    QueueStats out;
    out.ready = number_of(*attributes, kReady);
    out.in_flight = number_of(*attributes, kInFlight);
    out.delayed = number_of(*attributes, kDelayed);
    for (const std::string_view name : {kReady, kInFlight, kDelayed})
      out.details.emplace_back(name, attribute(*attributes, name));
    std::string dlq;
    try {
      dlq = binding::is_ascii_blank(dead_letter_queue) ? sqs::dead_letter_name(queue, std::nullopt)
                                                       : std::string(dead_letter_queue);
    } catch (const ConfigError& e) {
      return Error(e.code(), e.what());
    }
    bool missing = false;
    auto dlq_attributes = queue_attributes(dlq, detail::string_array({kReady}), &missing);
    if (dlq_attributes) {
      out.dead_letter = number_of(*dlq_attributes, kReady);
      out.details.emplace_back("DeadLetterQueue", dlq);
      out.details.emplace_back("DeadLetterQueue." + std::string(kReady),
                               attribute(*dlq_attributes, kReady));
    } else if (!missing) {
      return dlq_attributes.error();
    }
    return out;
  }

  Result<std::vector<PeekedMessage>> peek(std::string_view queue, std::size_t max) {
    if (guard_.closed()) return guard_.error("peek");
    const auto url = queue_url(queue);
    if (!url) return url.error();
    std::vector<PeekedMessage> out;
    std::set<std::string> seen;
    std::vector<std::string> receipts;
    std::optional<Error> failure;
    while (max == 0 || out.size() < max) {
      const std::size_t want = max == 0 ? kBatch : std::min(kBatch, max - out.size());
      auto response = api_.call(
          "ReceiveMessage",
          receive_request(*url, static_cast<std::int64_t>(want), seconds(0), kPeekWindow), queue);
      if (!response) {
        failure = response.error();
        break;
      }
      std::size_t skipped = 0;
      std::size_t fresh = 0;
      for (auto& in : detail::parse_messages(*response, skipped)) {
        receipts.push_back(in.receipt_handle);
        if (!seen.insert(in.message_id).second) continue;
        ++fresh;
        out.push_back(PeekedMessage{std::move(in.body), std::move(in.headers)});
      }
      if (fresh == 0) break;
    }
    change_visibility(queue, *url, receipts, seconds(0), "peek");
    if (failure) return *failure;
    return out;
  }

  // ---- lifecycle ----

  void close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!guard_.close()) return;
      stopping_ = true;
    }
    wake_.notify_all();
    retry_wait_.interrupt();
    if (housekeeper_.joinable()) housekeeper_.join();
    if (Status s = flush_all(); !s.ok()) {
      log(LogLevel::Error,
          std::string("sqs: close: deletes not sent (their messages reappear after "
                      "their visibility timeout): ") +
              s.error().what());
    }
    std::vector<std::pair<std::string, std::vector<ReceivedMessage>>> prefetched;
    {
      std::lock_guard<std::mutex> lock(mu_);
      prefetched = prefetched_.take_all();
      held_.clear();
    }
    for (auto& [queue, messages] : prefetched) {
      if (messages.empty()) continue;
      const std::string url =
          std::any_cast<const Handle&>(messages.front().handle).reservation->queue_url;
      give_back(queue, url, reservations_of(messages));
    }
    client_->close();
  }

  std::string dead_letter_name(std::string_view queue,
                               std::optional<std::string_view> explicit_suffix) const {
    return sqs::dead_letter_name(queue, explicit_suffix);
  }

 private:
  void log(LogLevel level, std::string_view text) const { log_to(options.logger, level, text); }

  void log_dropped(std::string_view queue, const std::vector<std::string>& dropped) const {
    if (dropped.empty()) return;
    std::string names;
    for (const auto& n : dropped) {
      if (!names.empty()) names += ", ";
      names += n;
    }
    log(LogLevel::Debug, "sqs: publish to " + quoted(queue) +
                             ": riders over SQS's 10-attribute limit not sent: " + names);
  }

  // SQS-9: every message attribute, the receive count, the visibility only when > 0.
  static std::string receive_request(const std::string& url, std::int64_t max, seconds wait,
                                     seconds visibility) {
    detail::JsonBody request;
    request.str("QueueUrl", url)
        .num("MaxNumberOfMessages", max)
        .num("WaitTimeSeconds", wait.count())
        .raw("MessageAttributeNames", detail::string_array({"All"}))
        .raw("AttributeNames", detail::string_array({"ApproximateReceiveCount"}));
    if (visibility.count() > 0) request.num("VisibilityTimeout", visibility.count());
    return request.done();
  }

  static Error already_settled(std::string_view operation, const Reservation& r) {
    return Error(ErrorCode::StaleDelivery, "sqs: " + std::string(operation) + " of message " +
                                               quoted(r.message_id) + " of queue " +
                                               quoted(r.queue) +
                                               ": it was already acked, released or handed back");
  }

  std::optional<detail::FifoIds> fifo_ids(std::string_view queue, std::string_view body) const {
    if (!options.fifo) return std::nullopt;
    detail::FifoIds ids;
    ids.group = options.message_group_id.empty() ? std::string(queue) : options.message_group_id;
    if (!options.content_dedup) {
      const auto contract = binding::contract_of(body);
      ids.dedup = contract && !contract->message_id.empty() ? contract->message_id
                                                            : detail::sha256_hex(body);
    }
    return ids;
  }

  // SQS-5: the prefix, else GetQueueUrl once per name.
  Result<std::string> queue_url(std::string_view queue, bool* missing = nullptr) {
    if (!detail::valid_queue_name(queue)) {
      return ConfigError("sqs: " + quoted(queue) +
                         " is not a valid SQS queue name ([A-Za-z0-9_-], at most 80 characters "
                         "with a .fifo ending)");
    }
    if (!options.queue_url_prefix.empty())
      return options.queue_url_prefix + "/" + std::string(queue);
    std::lock_guard<std::mutex> lock(url_mu_);
    if (const auto it = urls_.find(queue); it != urls_.end()) return it->second;
    std::string code;
    auto response = api_.call("GetQueueUrl", detail::JsonBody().str("QueueName", queue).done(),
                              queue, options.request_timeout, &code);
    if (!response) {
      if (missing != nullptr) *missing = detail::is_missing_queue_code(code);
      return response.error();
    }
    const std::string* url = string_member(*response, "QueueUrl");
    if (url == nullptr || url->empty()) {
      return TransportError("sqs: GetQueueUrl of " + quoted(queue) + " returned no QueueUrl", true);
    }
    urls_.emplace(std::string(queue), *url);
    return *url;
  }

  // GetQueueAttributes of `names` (a JSON array); `missing` is set when the queue does not exist.
  Result<Json> queue_attributes(std::string_view queue, std::string_view names,
                                bool* missing = nullptr) {
    auto url = queue_url(queue, missing);
    if (!url) return url.error();
    std::string code;
    auto response =
        api_.call("GetQueueAttributes",
                  detail::JsonBody().str("QueueUrl", *url).raw("AttributeNames", names).done(),
                  queue, options.request_timeout, &code);
    if (!response) {
      if (missing != nullptr) *missing = detail::is_missing_queue_code(code);
      return response.error();
    }
    const Json* attributes = response->find("Attributes");
    return attributes != nullptr && attributes->is_object() ? *attributes : Json::object();
  }

  static std::string attribute(const Json& attributes, std::string_view name) {
    const std::string* v = string_member(attributes, name);
    return v == nullptr ? std::string() : *v;
  }

  static std::optional<std::int64_t> number_of(const Json& attributes, std::string_view name) {
    return binding::parse_attempts_header(attribute(attributes, name));
  }

  QueueStatePtr state_locked(std::string_view queue) {
    auto it = queues_.find(queue);
    if (it == queues_.end()) {
      it = queues_
               .emplace(std::string(queue),
                        std::make_shared<QueueState>(static_cast<std::size_t>(options.ack_batch)))
               .first;
    }
    return it->second;
  }

  // The queue's window and RedrivePolicy, read once per queue by its first pop (SQS-15).
  Result<QueueStatePtr> consume_state(std::string_view queue) {
    QueueStatePtr state;
    {
      std::lock_guard<std::mutex> lock(mu_);
      state = state_locked(queue);
      if (state->info_loaded) return state;
    }
    auto attributes =
        queue_attributes(queue, detail::string_array({"VisibilityTimeout", "RedrivePolicy"}));
    if (!attributes) return attributes.error();
    const auto window = number_of(*attributes, "VisibilityTimeout");
    std::lock_guard<std::mutex> lock(mu_);
    state->window = options.visibility_timeout > 0 ? seconds(options.visibility_timeout)
                    : window && *window > 0        ? seconds(*window)
                                                   : kDefaultWindow;
    state->has_redrive = !attribute(*attributes, "RedrivePolicy").empty();
    state->info_loaded = true;
    return state;
  }

  // A prefetched message with enough of its window left (D-11), else nullopt.
  std::optional<ReceivedMessage> take_prefetched(std::string_view queue, const QueueState& state) {
    const milliseconds margin = std::min(
        options.handout_margin, std::chrono::duration_cast<milliseconds>(state.window) / 4);
    while (auto m = prefetched_.take(queue)) {
      const ReservationPtr& r = std::any_cast<const Handle&>(m->handle).reservation;
      std::lock_guard<std::mutex> lock(mu_);
      if (r->state != Reservation::State::Prefetched) continue;
      if (r->deadline - Steady::now() < margin) {
        // About to lapse: it reappears on its own.
        r->state = Reservation::State::Settled;
        held_.erase(r);
        continue;
      }
      r->state = Reservation::State::HandedOut;
      return m;
    }
    return std::nullopt;
  }

  std::vector<ReceivedMessage> to_received(std::string_view queue, const std::string& url,
                                           seconds window, const Json& response) {
    std::size_t skipped = 0;
    std::vector<detail::Incoming> incoming = detail::parse_messages(response, skipped);
    if (skipped > 0) {
      log(LogLevel::Error, "sqs: ReceiveMessage on " + quoted(queue) + ": " +
                               std::to_string(skipped) +
                               " message(s) without a Body or ReceiptHandle ignored (they "
                               "reappear after their visibility timeout)");
    }
    std::vector<ReceivedMessage> out;
    out.reserve(incoming.size());
    for (auto& in : incoming) {
      auto r = std::make_shared<Reservation>();
      r->queue = std::string(queue);
      r->queue_url = url;
      r->receipt_handle = std::move(in.receipt_handle);
      r->message_id = std::move(in.message_id);
      r->window = window;
      ReceivedMessage m;
      m.body = std::move(in.body);
      m.queue = std::string(queue);
      m.headers = std::move(in.headers);
      m.delivery_count = binding::sqs::delivery_count(in.receive_count);
      const auto gate = binding::schema_version_gate(in.schema_version);
      if (gate.reject) {
        m.route = gate.route;
        spi::notify_schema_version_rejected(options.on_schema_version_rejected, gate.version, queue,
                                            options.logger, "sqs");
      }
      m.handle = Handle{std::move(r)};
      out.push_back(std::move(m));
    }
    return out;
  }

  static std::vector<ReservationPtr> reservations_of(const std::vector<ReceivedMessage>& messages) {
    std::vector<ReservationPtr> out;
    out.reserve(messages.size());
    for (const auto& m : messages)
      out.push_back(std::any_cast<const Handle&>(m.handle).reservation);
    return out;
  }

  // Makes `reservations` visible again at once (prefetched messages at close, a receive that
  // raced close).
  void give_back(std::string_view queue, const std::string& url,
                 const std::vector<ReservationPtr>& reservations) {
    std::vector<std::string> receipts;
    receipts.reserve(reservations.size());
    for (const auto& r : reservations)
      receipts.push_back(r->receipt_handle);
    change_visibility(queue, url, receipts, seconds(0), "close");
  }

  // ChangeMessageVisibilityBatch of `receipts` to `visibility`, failures logged.
  void change_visibility(std::string_view queue, const std::string& url,
                         const std::vector<std::string>& receipts, seconds visibility,
                         std::string_view why) {
    for (std::size_t start = 0; start < receipts.size(); start += kBatch) {
      const std::size_t end = std::min(receipts.size(), start + kBatch);
      std::vector<std::pair<std::string, seconds>> changes;
      for (std::size_t i = start; i < end; ++i)
        changes.emplace_back(receipts[i], visibility);
      auto result = visibility_batch(queue, url, changes);
      if (!result) {
        log(LogLevel::Warning, "sqs: " + std::string(why) + ": " + std::to_string(end - start) +
                                   " message(s) of " + quoted(queue) +
                                   " not made visible again (they reappear after their "
                                   "visibility timeout): " +
                                   result.error().what());
        continue;
      }
      for (std::size_t i = 0; i < changes.size(); ++i) {
        if (const EntryFailure* f = result->failure(i)) {
          log(LogLevel::Debug, "sqs: " + std::string(why) + ": a message of " + quoted(queue) +
                                   " could not change its visibility: " + describe(*f));
        }
      }
    }
  }

  // One batch request of `entries` (JSON objects without their Id) to `url`.
  Result<detail::BatchResult> batch_call(std::string_view action, std::string_view queue,
                                         const std::string& url,
                                         const std::vector<std::string>& entries) {
    auto response = api_.call(action,
                              detail::JsonBody()
                                  .str("QueueUrl", url)
                                  .raw("Entries", detail::batch_entries(entries))
                                  .done(),
                              queue);
    if (!response) return response.error();
    return detail::BatchResult(*response, entries.size());
  }

  // ChangeMessageVisibilityBatch of up to 10 receipt handles, each to its visibility.
  Result<detail::BatchResult> visibility_batch(
      std::string_view queue, const std::string& url,
      const std::vector<std::pair<std::string, seconds>>& changes) {
    std::vector<std::string> entries;
    entries.reserve(changes.size());
    for (const auto& [receipt, visibility] : changes) {
      entries.push_back(detail::JsonBody()
                            .str("ReceiptHandle", receipt)
                            .num("VisibilityTimeout", visibility.count())
                            .done());
    }
    return batch_call("ChangeMessageVisibilityBatch", queue, url, entries);
  }

  // SendMessageBatch of entries[pending...]; entries that fail transiently are resent.
  Status send_batch(std::string_view queue, const std::string& url,
                    const std::vector<std::string>& entries, std::vector<std::size_t> pending,
                    std::size_t total) {
    spi::Backoff backoff;
    for (int attempt = 1; !pending.empty(); ++attempt) {
      std::vector<std::string> request;
      request.reserve(pending.size());
      for (const std::size_t i : pending)
        request.push_back(entries[i]);
      auto result = batch_call("SendMessageBatch", queue, url, request);
      if (!result) return result.error();
      std::vector<std::size_t> again;
      for (std::size_t k = 0; k < pending.size(); ++k) {
        const EntryFailure* f = result->failure(k);
        if (f == nullptr) continue;
        if (!retryable(*f)) {
          return TransportError("sqs: SendMessageBatch on queue " + quoted(queue) + ": entry " +
                                    std::to_string(pending[k]) + " (of " + std::to_string(total) +
                                    ") refused: " + describe(*f) +
                                    "; the entries after its request were not sent",
                                false);
        }
        again.push_back(pending[k]);
      }
      if (again.empty()) return {};
      if (attempt == kBatchTries || !retry_wait_.wait_for(backoff.next())) {
        return TransportError("sqs: SendMessageBatch on queue " + quoted(queue) + ": entry " +
                                  std::to_string(again.front()) + " (of " + std::to_string(total) +
                                  ") and " + std::to_string(again.size() - 1) +
                                  " other(s) still failing after " + std::to_string(attempt) +
                                  " tries; the entries after its request were not sent",
                              true);
      }
      pending = std::move(again);
    }
    return {};
  }

  // ---- deletes ----

  Status flush_all() {
    std::vector<std::pair<std::string, QueueStatePtr>> states;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [name, state] : queues_)
        states.emplace_back(name, state);
    }
    Status first;
    for (const auto& [name, state] : states) {
      if (Status s = send_acks(name, *state); !s.ok() && first.ok()) first = s;
    }
    return first;
  }

  // Sends the pending deletes of `queue`. Failed entries: an invalid or expired receipt handle is
  // logged and kept for flush() (StaleDelivery), a transient failure is restored and retried.
  Status send_acks(const std::string& queue, QueueState& state) {
    std::lock_guard<std::mutex> send(state.send_mu);
    {
      std::lock_guard<std::mutex> lock(mu_);
      state.ack_due.reset();
    }
    const Status status = state.acks.flush([&](std::vector<ReservationPtr>& batch) -> Status {
      std::vector<ReservationPtr> again;
      std::size_t done = 0;
      Status result;
      while (done < batch.size()) {
        const std::size_t n =
            std::min(batch.size() - done, static_cast<std::size_t>(options.ack_batch));
        Status s = delete_batch(queue, batch, done, n, again);
        if (!s.ok() && s.error().is_transient()) {
          result = s;
          break;
        }
        done += n;
      }
      batch.erase(batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(done));
      batch.insert(batch.begin(), again.begin(), again.end());
      if (result.ok() && !batch.empty()) {
        result = TransportError("sqs: DeleteMessageBatch on queue " + quoted(queue) + ": " +
                                    std::to_string(batch.size()) +
                                    " delete(s) failed transiently; they are retried",
                                true);
      }
      return result;
    });
    if (status.ok()) {
      state.ack_backoff.reset();
    } else {
      {
        std::lock_guard<std::mutex> lock(mu_);
        state.ack_due = Steady::now() + state.ack_backoff.next();
      }
      wake_.notify_all();
    }
    return status;
  }

  // One DeleteMessageBatch of batch[from, from + n); transiently failed entries go to `again`.
  Status delete_batch(const std::string& queue, const std::vector<ReservationPtr>& batch,
                      std::size_t from, std::size_t n, std::vector<ReservationPtr>& again) {
    std::vector<std::string> entries;
    entries.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      entries.push_back(
          detail::JsonBody().str("ReceiptHandle", batch[from + i]->receipt_handle).done());
    auto result = batch_call("DeleteMessageBatch", queue, batch[from]->queue_url, entries);
    if (!result) {
      if (result.error().is_transient()) return result.error();
      record_ack_error(Error(result.error().code(),
                             std::string(result.error().what()) + " (" + std::to_string(n) +
                                 " delete(s) not done; the messages reappear)"));
      return result.error();
    }
    for (std::size_t i = 0; i < n; ++i) {
      const EntryFailure* f = result->failure(i);
      if (f == nullptr) continue;
      if (retryable(*f)) {
        again.push_back(batch[from + i]);
        continue;
      }
      record_ack_error(Error(ErrorCode::StaleDelivery,
                             "sqs: delete of message " + quoted(batch[from + i]->message_id) +
                                 " of queue " + quoted(queue) + " failed: " + describe(*f) +
                                 " (its reservation lapsed; it is delivered again)"));
    }
    return {};
  }

  void record_ack_error(const Error& e) {
    log(LogLevel::Error, e.what());
    std::lock_guard<std::mutex> lock(mu_);
    if (!ack_error_) ack_error_ = spi::unshared(e);
  }

  // ---- housekeeping ----

  void start_housekeeper() {
    std::lock_guard<std::mutex> lock(mu_);
    start_housekeeper_locked();
  }

  void start_housekeeper_locked() {
    if (housekeeper_.joinable() || stopping_) return;
    housekeeper_ = std::thread([this] { housekeep(); });
  }

  void housekeep() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      const Steady::time_point now = Steady::now();
      std::vector<std::pair<std::string, QueueStatePtr>> due;
      std::optional<Steady::time_point> next;
      const auto sooner = [&](Steady::time_point t) {
        if (!next || t < *next) next = t;
      };
      for (const auto& [name, state] : queues_) {
        if (!state->ack_due) continue;
        if (*state->ack_due <= now) {
          due.emplace_back(name, state);
        } else {
          sooner(*state->ack_due);
        }
      }
      std::vector<ReservationPtr> extend;
      if (options.keep_visibility) {
        for (auto it = held_.begin(); it != held_.end();) {
          const ReservationPtr& r = *it;
          if (r->extending) {
            ++it;
            continue;
          }
          if (r->state == Reservation::State::Prefetched && r->deadline <= now) {
            r->state = Reservation::State::Settled;  // lapsed: it reappears on its own
            it = held_.erase(it);
            continue;
          }
          const Steady::time_point at =
              std::max(r->deadline - std::chrono::duration_cast<milliseconds>(r->window) / 3,
                       extend_not_before_);
          if (at <= now) {
            r->extending = true;
            extend.push_back(r);
          } else {
            sooner(at);
          }
          ++it;
        }
      }
      if (due.empty() && extend.empty()) {
        if (next) {
          wake_.wait_until(lock, *next);
        } else {
          wake_.wait(lock);
        }
        continue;
      }
      lock.unlock();
      for (const auto& [name, state] : due)
        (void)send_acks(name, *state);
      if (!extend.empty()) extend_visibility(extend);
      lock.lock();
      for (const auto& r : extend)
        r->extending = false;
      extended_.notify_all();
    }
  }

  // ChangeMessageVisibilityBatch(window) of held messages whose window is two thirds gone.
  void extend_visibility(const std::vector<ReservationPtr>& reservations) {
    std::map<std::pair<std::string, std::string>, std::vector<ReservationPtr>> by_queue;
    for (const auto& r : reservations)
      by_queue[{r->queue, r->queue_url}].push_back(r);
    bool failed_any = false;
    for (const auto& [key, list] : by_queue) {
      for (std::size_t start = 0; start < list.size(); start += kBatch) {
        const std::size_t n = std::min(list.size() - start, kBatch);
        std::vector<std::pair<std::string, seconds>> changes;
        for (std::size_t i = 0; i < n; ++i)
          changes.emplace_back(list[start + i]->receipt_handle, list[start + i]->window);
        const Steady::time_point sent_at = Steady::now();
        auto result = visibility_batch(key.first, key.second, changes);
        if (!result) {
          failed_any = true;
          log(LogLevel::Warning, std::string("sqs: keeping visibility: ") + result.error().what());
          continue;
        }
        std::lock_guard<std::mutex> lock(mu_);
        for (std::size_t i = 0; i < n; ++i) {
          const ReservationPtr& r = list[start + i];
          const EntryFailure* f = result->failure(i);
          if (f == nullptr) {
            r->deadline = sent_at + r->window;
          } else if (retryable(*f)) {
            failed_any = true;
          } else {
            // The reservation is gone: nothing more to keep alive.
            held_.erase(r);
            if (r->state == Reservation::State::Prefetched) r->state = Reservation::State::Settled;
          }
        }
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_any) {
      extend_not_before_ = Steady::now() + extend_backoff_.next();
    } else {
      extend_backoff_.reset();
      extend_not_before_ = {};
    }
  }

  std::shared_ptr<HttpClient> client_;
  detail::Api api_;
  spi::ClosedGuard guard_{"sqs transport"};
  spi::InterruptibleWait retry_wait_;

  std::mutex url_mu_;
  std::map<std::string, std::string, std::less<>> urls_;

  std::mutex mu_;
  std::condition_variable wake_;      // the housekeeper's schedule changed
  std::condition_variable extended_;  // an extension finished
  std::map<std::string, QueueStatePtr, std::less<>> queues_;
  std::set<ReservationPtr> held_;
  spi::PrefetchBuffer<ReceivedMessage> prefetched_;
  std::optional<Error> ack_error_;
  Steady::time_point extend_not_before_{};
  spi::Backoff extend_backoff_;
  bool stopping_ = false;
  std::thread housekeeper_;
};

SqsTransport::SqsTransport(Options options) : impl_(std::make_unique<Impl>(std::move(options))) {}

SqsTransport::SqsTransport(std::string_view url) : SqsTransport(parse_url(url)) {}

SqsTransport::~SqsTransport() {
  close();
}

const Options& SqsTransport::options() const noexcept {
  return impl_->options;
}

Status SqsTransport::publish(std::string_view queue, std::string body) {
  return impl_->publish(queue, body, {}, 0);
}

Result<std::optional<ReceivedMessage>> SqsTransport::pop(std::string_view queue,
                                                         std::chrono::milliseconds timeout) {
  return impl_->pop(queue, timeout);
}

Status SqsTransport::ack(const ReceivedMessage& msg) {
  return impl_->ack(msg);
}

void SqsTransport::close() {
  impl_->close();
}

Status SqsTransport::publish_with_headers(std::string_view queue, std::string body,
                                          const Headers& headers) {
  return impl_->publish(queue, body, headers, 0);
}

Status SqsTransport::publish_batch(std::string_view queue, std::vector<std::string> bodies) {
  return impl_->publish_batch(queue, bodies);
}

Status SqsTransport::release(const ReceivedMessage& msg, std::chrono::milliseconds delay) {
  return impl_->release(msg, delay);
}

Status SqsTransport::publish_delayed(std::string_view queue, std::string body,
                                     std::chrono::milliseconds delay) {
  return impl_->publish_delayed(queue, std::move(body), delay);
}

Status SqsTransport::hand_to_broker(const ReceivedMessage& msg, std::string_view) {
  return impl_->hand_to_broker(msg);
}

std::string SqsTransport::dead_letter_name(std::string_view source_queue,
                                           std::optional<std::string_view> explicit_suffix) const {
  return impl_->dead_letter_name(source_queue, explicit_suffix);
}

Status SqsTransport::flush() {
  return impl_->flush();
}

Result<QueueStats> SqsTransport::stats(std::string_view queue, std::string_view dead_letter_queue) {
  return impl_->stats(queue, dead_letter_queue);
}

Result<std::vector<PeekedMessage>> SqsTransport::peek(std::string_view queue, std::size_t max) {
  return impl_->peek(queue, max);
}

}  // namespace babelqueue::sqs
