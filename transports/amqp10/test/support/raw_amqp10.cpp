// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "raw_amqp10.hpp"

#include <proton/annotation_key.hpp>
#include <proton/codec/map.hpp>
#include <proton/connection.hpp>
#include <proton/connection_options.hpp>
#include <proton/container.hpp>
#include <proton/delivery.hpp>
#include <proton/error_condition.hpp>
#include <proton/message.hpp>
#include <proton/message_id.hpp>
#include <proton/messaging_handler.hpp>
#include <proton/receiver.hpp>
#include <proton/receiver_options.hpp>
#include <proton/sender.hpp>
#include <proton/sender_options.hpp>
#include <proton/source.hpp>
#include <proton/source_options.hpp>
#include <proton/symbol.hpp>
#include <proton/target_options.hpp>
#include <proton/timestamp.hpp>
#include <proton/tracker.hpp>
#include <proton/transport.hpp>
#include <proton/types.hpp>
#include <proton/work_queue.hpp>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

namespace babelqueue::amqp10::test {
namespace {

using std::chrono::milliseconds;

// Artemis's management address and the properties of a management request.
constexpr const char* kManagement = "activemq.management";

const std::vector<proton::symbol>& queue_capability() {
  static const std::vector<proton::symbol> caps = {proton::symbol("queue")};
  return caps;
}

std::string scalar_text(const proton::scalar& s) {
  return s.type() == proton::STRING ? proton::get<std::string>(s) : proton::to_string(s);
}

RawMessage from_proton(const proton::message& m) {
  RawMessage out;
  const proton::value& body = m.body();
  if (body.type() == proton::BINARY) {
    const auto bytes = proton::get<proton::binary>(body);
    out.body.assign(bytes.begin(), bytes.end());
    out.body_section = m.inferred() ? "data" : "binary";
  } else if (body.type() == proton::STRING) {
    out.body = proton::get<std::string>(body);
    out.body_section = "string";
  } else if (!body.empty()) {
    out.body = proton::to_string(body);
    out.body_section = "other";
  }
  std::map<proton::symbol, proton::value> annotations;
  if (!m.message_annotations().empty()) proton::get(m.message_annotations().value(), annotations);
  for (const auto& [key, value] : annotations) {
    out.annotations[key] =
        value.type() == proton::STRING ? proton::get<std::string>(value) : proton::to_string(value);
    out.annotation_types[key] = proton::type_name(value.type());
  }
  if (!m.correlation_id().empty()) {
    const proton::message_id id = m.correlation_id();
    out.correlation_id =
        id.type() == proton::STRING ? proton::get<std::string>(id) : proton::to_string(id);
    out.correlation_id_type = proton::type_name(id.type());
  }
  if (m.creation_time().milliseconds() != 0)
    out.creation_time_ms = m.creation_time().milliseconds();
  out.durable = m.durable();
  out.delivery_count = m.delivery_count();
  std::map<std::string, proton::scalar> props;
  if (!m.properties().empty()) proton::get(m.properties().value(), props);
  for (const auto& [key, value] : props)
    out.properties[key] = scalar_text(value);
  return out;
}

// One connection that does one job: the job's `start` opens its links on the open connection,
// and it calls finish() (closing the connection) or fail(); a timeout fails it. The container
// runs on a thread of its own, so the caller can bound it: a proton timer would keep
// container::run() going until it fires, even after stop().
class OneShot : public proton::messaging_handler {
 public:
  OneShot(std::string url, proton::connection_options options, milliseconds timeout)
      : url_(std::move(url)), options_(std::move(options)), timeout_(timeout) {}

  // Runs the job until it ended; throws std::runtime_error with the reason it failed.
  void run() {
    proton::container container(*this);
    std::thread runner([&container] { container.run(); });
    std::unique_lock lock(mutex_);
    if (!stopped_cv_.wait_for(lock, timeout_, [this] { return stopped_; })) {
      // The timeout, on the container thread; a job that does not end then is stopped.
      if (work_queue_ == nullptr || !work_queue_->add([this] { on_timeout(); }) ||
          !stopped_cv_.wait_for(lock, kGrace, [this] { return stopped_; }))
        container.stop();
    }
    lock.unlock();
    runner.join();
    if (error_) throw std::runtime_error("raw AMQP 1.0 client: " + *error_);
  }

 protected:
  virtual void start(proton::connection& connection) = 0;

  void finish() {
    done_ = true;
    connection_.close();
  }
  void fail(std::string reason) {
    if (done_) return;
    done_ = true;
    error_ = std::move(reason);
    connection_.container().stop();
  }

 private:
  static constexpr milliseconds kGrace{5'000};

  void on_container_start(proton::container& c) override {
    connection_ = c.connect(url_, options_);
  }
  void on_container_stop(proton::container&) override {
    const std::lock_guard lock(mutex_);
    stopped_ = true;
    stopped_cv_.notify_all();
  }
  void on_connection_open(proton::connection& c) override {
    {
      const std::lock_guard lock(mutex_);
      work_queue_ = &c.work_queue();
    }
    start(c);
  }
  void on_transport_close(proton::transport&) override {
    const std::lock_guard lock(mutex_);
    work_queue_ = nullptr;
  }
  void on_connection_close(proton::connection& c) override {
    {
      const std::lock_guard lock(mutex_);
      work_queue_ = nullptr;
    }
    if (!done_ && ended_by_close()) done_ = true;
    if (!done_) fail("connection closed: " + c.error().what());
    c.container().stop();
  }
  void on_error(const proton::error_condition& e) override {
    if (!done_ && ended_by_close()) {
      done_ = true;
      connection_.container().stop();
      return;
    }
    fail(e.what());
  }
  // True when the peer closing the connection (or the transport failing) ends the job as done:
  // a management operation that closes the caller's own connection among others.
  virtual bool ended_by_close() const { return false; }
  void on_timeout() {
    if (!done_) timeout_reached();
  }
  // What a timeout means; default: a failure.
  virtual void timeout_reached() { fail("timed out"); }

  std::string url_;
  proton::connection_options options_;
  milliseconds timeout_;
  // Container thread only, and the caller's after the join.
  proton::connection connection_;
  bool done_ = false;
  std::optional<std::string> error_;
  // Set when container::run() ends; the open connection's work queue.
  std::mutex mutex_;
  proton::work_queue* work_queue_ = nullptr;
  std::condition_variable stopped_cv_;
  bool stopped_ = false;
};

class Send final : public OneShot {
 public:
  Send(std::string url, proton::connection_options options, milliseconds timeout,
       std::string address, const RawMessage& message)
      : OneShot(std::move(url), std::move(options), timeout), address_(std::move(address)) {
    if (message.body_section == "string") {
      message_.body(message.body);
    } else {
      message_.body(proton::binary(message.body));
      // A data section unless an AMQP binary value was asked for.
      message_.inferred(message.body_section != "binary");
    }
    message_.durable(message.durable);
    for (const auto& [key, value] : message.properties)
      message_.properties().put(key, value);
    for (const auto& [key, value] : message.long_properties)
      message_.properties().put(key, value);
  }

 private:
  void start(proton::connection& c) override {
    c.open_sender(address_, proton::sender_options().target(
                                proton::target_options().capabilities(queue_capability())));
  }
  void on_sendable(proton::sender& s) override {
    if (sent_) return;
    sent_ = true;
    s.send(message_);
  }
  void on_tracker_accept(proton::tracker&) override { finish(); }
  void on_tracker_reject(proton::tracker&) override { fail("rejected"); }
  void on_tracker_release(proton::tracker&) override { fail("released or modified"); }
  void on_sender_error(proton::sender& s) override { fail("sender: " + s.error().what()); }

  std::string address_;
  proton::message message_;
  bool sent_ = false;
};

class Receive final : public OneShot {
 public:
  Receive(std::string url, proton::connection_options options, milliseconds timeout,
          std::string address, std::size_t n)
      : OneShot(std::move(url), std::move(options), timeout), address_(std::move(address)), n_(n) {}

  std::vector<RawMessage> messages;

 private:
  void start(proton::connection& c) override {
    if (n_ == 0) return finish();
    // Exactly n credits (a credit window would top up as messages arrive).
    c.open_receiver(address_, proton::receiver_options().credit_window(0).source(
                                  proton::source_options().capabilities(queue_capability())));
  }
  void on_receiver_open(proton::receiver& r) override {
    r.add_credit(static_cast<std::uint32_t>(n_));
  }
  void on_message(proton::delivery&, proton::message& m) override {
    messages.push_back(from_proton(m));  // accepted by the handler after this returns
    if (messages.size() == n_) finish();
  }
  void on_receiver_error(proton::receiver& r) override { fail("receiver: " + r.error().what()); }
  void timeout_reached() override { finish(); }

  std::string address_;
  std::size_t n_;
};

// One management operation: a request to activemq.management naming the resource and the
// operation, the JSON array of its parameters as the body, the reply to a dynamic receiver.
class Management final : public OneShot {
 public:
  Management(std::string url, proton::connection_options options, milliseconds timeout,
             std::string resource, std::string operation, std::string params,
             bool closes_own_connection)
      : OneShot(std::move(url), std::move(options), timeout),
        resource_(std::move(resource)),
        operation_(std::move(operation)),
        params_(std::move(params)),
        closes_own_connection_(closes_own_connection) {}

  // The reply's body (a JSON array), empty when the operation closed the connection first.
  std::string result;

 private:
  bool ended_by_close() const override { return closes_own_connection_ && sent_; }
  void start(proton::connection& c) override {
    sender_ = c.open_sender(kManagement);
    c.open_receiver("", proton::receiver_options().source(proton::source_options().dynamic(true)));
  }
  void on_receiver_open(proton::receiver& r) override {
    reply_to_ = r.source().address();
    send_request();
  }
  void on_sendable(proton::sender&) override { send_request(); }
  void send_request() {
    if (sent_ || reply_to_.empty() || sender_.credit() <= 0) return;
    sent_ = true;
    proton::message request;
    request.to(kManagement);
    request.reply_to(reply_to_);
    request.properties().put("_AMQ_ResourceName", resource_);
    request.properties().put("_AMQ_OperationName", operation_);
    request.body(params_);
    sender_.send(request);
  }
  void on_message(proton::delivery&, proton::message& m) override {
    // The reply body is a JSON array holding the result, e.g. "[8]"; an error is a string.
    const RawMessage reply = from_proton(m);
    const auto succeeded = reply.properties.find("_AMQ_OperationSucceeded");
    if (succeeded == reply.properties.end() || succeeded->second != "true")
      return fail(operation_ + " of " + resource_ + " failed: " + reply.body);
    result = reply.body;
    finish();
  }
  void on_tracker_reject(proton::tracker&) override { fail("management request rejected"); }

  std::string resource_;
  std::string operation_;
  std::string params_;
  bool closes_own_connection_;
  proton::sender sender_;
  std::string reply_to_;
  bool sent_ = false;
};

}  // namespace

RawAmqp10::RawAmqp10(std::string host_port, std::string user, std::string password)
    : url_("amqp://" + std::move(host_port)),
      user_(std::move(user)),
      password_(std::move(password)) {}

namespace {
proton::connection_options options_for(const std::string& user, const std::string& password) {
  proton::connection_options options;
  options.sasl_enabled(true);
  if (user.empty()) {
    options.sasl_allowed_mechs("ANONYMOUS");
  } else {
    options.user(user).password(password).sasl_allowed_mechs("PLAIN").sasl_allow_insecure_mechs(
        true);
  }
  return options;
}
}  // namespace

void RawAmqp10::send(const std::string& address, const RawMessage& message,
                     milliseconds timeout) const {
  Send job(url_, options_for(user_, password_), timeout, address, message);
  job.run();
}

std::vector<RawMessage> RawAmqp10::receive(const std::string& address, std::size_t n,
                                           milliseconds timeout) const {
  Receive job(url_, options_for(user_, password_), timeout, address, n);
  job.run();
  return std::move(job.messages);
}

std::string RawAmqp10::management(const std::string& resource, const std::string& operation,
                                  const std::string& params, bool closes_own_connection,
                                  milliseconds timeout) const {
  Management job(url_, options_for(user_, password_), timeout, resource, operation, params,
                 closes_own_connection);
  job.run();
  return job.result;
}

std::int64_t RawAmqp10::message_count(const std::string& queue, milliseconds timeout) const {
  const std::string body = management("queue." + queue, "getMessageCount", "[]", false, timeout);
  // A JSON array holding the count, e.g. "[8]".
  try {
    if (body.size() >= 3 && body.front() == '[' && body.back() == ']')
      return std::stoll(body.substr(1, body.size() - 2));
  } catch (const std::exception&) {
  }
  throw std::runtime_error("raw AMQP 1.0 client: management reply is not a count: " + body);
}

}  // namespace babelqueue::amqp10::test
