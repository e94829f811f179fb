// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// What the integration tests on the shared SQS emulator share: a fixture with a fresh queue
// name, queues created by the raw client (SQS never creates queues, SQS-5), raw SendMessage /
// ReceiveMessage / GetQueueAttributes through the fixture's signed client (never through the
// transport), transports on the emulator, and SeamClient: the HTTP seam (Options::client) around
// the real libcurl client that counts requests per action and injects faults (D-11, SQS-17).

#include <babelqueue/app.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/sqs/transport.hpp>
#include <babelqueue/testing/contract.hpp>
#include <babelqueue/testing/fault_kit.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "sqs_emulator.hpp"

namespace babelqueue::sqs::test {

using Attributes = std::map<std::string, std::string>;

// The kit's eventually, bounded by kWithin unless told otherwise.
template <class Pred>
bool eventually(Pred&& done,
                std::chrono::steady_clock::duration within = babelqueue::testing::kWithin) {
  return babelqueue::testing::eventually(std::forward<Pred>(done), within);
}

// A queue attribute that names how many messages it holds (ApproximateNumberOfMessages, ...).
inline std::int64_t count_attribute(const std::map<std::string, std::string>& attributes,
                                    const std::string& name) {
  const auto it = attributes.find(name);
  return it == attributes.end() ? -1 : std::stoll(it->second);
}

// A RedrivePolicy attribute value: after `max_receive_count` receives a message moves to the
// queue `dead_letter_arn`.
inline std::string redrive_policy(const std::string& dead_letter_arn, int max_receive_count) {
  return Json::object({{"deadLetterTargetArn", dead_letter_arn},
                       {"maxReceiveCount", std::to_string(max_receive_count)}})
      .dump();
}

// The JSON 1.0 error answers a seam injects (SQS-17: both transient).
inline HttpResponse throttling_response() {
  return {
      400,
      R"({"__type":"com.amazon.coral.availability#ThrottlingException","message":"Rate exceeded"})",
      {{"x-amzn-query-error", "ThrottlingException;Sender"}}};
}
inline HttpResponse server_error_response() {
  return {500,
          R"({"__type":"com.amazon.coral.service#InternalFailure","message":"injected failure"})",
          {}};
}

// An HttpClient around the real one (make_curl_client()) that counts every request by action,
// and lets a test answer a request itself instead of sending it (`set_fault`), look at or
// rewrite what came back (`set_rewrite`), or hold every request until released (`hold`).
//
// Thread-safety: every member is safe from any thread (the transport calls `post` from its pop,
// publish, ack and housekeeping threads).
class SeamClient final : public HttpClient {
 public:
  // Called with each request and its 1-based number among all requests: a response to answer
  // with instead of sending the request, or nullopt to send it.
  using Fault = std::function<std::optional<HttpResponse>(const HttpRequest&, std::uint64_t)>;
  // Called with each request that was sent and the response that came back, before the
  // transport sees it.
  using Rewrite = std::function<void(const HttpRequest&, HttpResponse&)>;

  explicit SeamClient(std::shared_ptr<HttpClient> inner = make_curl_client())
      : inner_(std::move(inner)) {}

  Result<HttpResponse> post(const HttpRequest& request) override {
    Fault fault;
    Rewrite rewrite;
    std::uint64_t n = 0;
    {
      std::unique_lock lock(mu_);
      released_.wait(lock, [&] { return !held_; });
      n = ++total_;
      ++counts_[request.action];
      fault = fault_;
      rewrite = rewrite_;
    }
    if (fault) {
      if (std::optional<HttpResponse> answer = fault(request, n)) {
        std::lock_guard lock(mu_);
        ++injected_;
        return std::move(*answer);
      }
    }
    Result<HttpResponse> got = inner_->post(request);
    if (got.has_value() && rewrite) rewrite(request, *got);
    return got;
  }
  void close() override {
    open();
    inner_->close();
  }

  void set_fault(Fault fault) {
    std::lock_guard lock(mu_);
    fault_ = std::move(fault);
  }
  void set_rewrite(Rewrite rewrite) {
    std::lock_guard lock(mu_);
    rewrite_ = std::move(rewrite);
  }
  // From now on every request waits in `post` until `open()`.
  void hold() {
    std::lock_guard lock(mu_);
    held_ = true;
  }
  void open() {
    {
      std::lock_guard lock(mu_);
      held_ = false;
    }
    released_.notify_all();
  }

  // Requests per action so far (sent or answered by the fault hook).
  [[nodiscard]] std::map<std::string, std::uint64_t> counts() const {
    std::lock_guard lock(mu_);
    return counts_;
  }
  [[nodiscard]] std::uint64_t count(const std::string& action) const {
    std::lock_guard lock(mu_);
    const auto it = counts_.find(action);
    return it == counts_.end() ? 0 : it->second;
  }
  [[nodiscard]] std::uint64_t total() const {
    std::lock_guard lock(mu_);
    return total_;
  }
  // Requests the fault hook answered.
  [[nodiscard]] std::uint64_t injected() const {
    std::lock_guard lock(mu_);
    return injected_;
  }

 private:
  std::shared_ptr<HttpClient> inner_;
  mutable std::mutex mu_;
  std::condition_variable released_;
  bool held_ = false;
  std::uint64_t total_ = 0;
  std::uint64_t injected_ = 0;
  std::map<std::string, std::uint64_t> counts_;
  Fault fault_;
  Rewrite rewrite_;
};

// "Action: n" per action, for failure messages and the printed figures.
inline std::string describe_counts(const std::map<std::string, std::uint64_t>& counts) {
  std::string out;
  for (const auto& [action, n] : counts) {
    out += (out.empty() ? "" : ", ") + action + ": " + std::to_string(n);
  }
  return out;
}

// The raw client's view of queues on an emulator: names to URLs, SendMessage, ReceiveMessage
// and the queue's counts, all through SqsEmulator::call (never through a transport).
class RawQueues {
 public:
  explicit RawQueues(SqsEmulator& emulator) : emulator_(&emulator) {}

  // Creates `name` with `attributes`; remembers its URL.
  void create(const std::string& name, const Attributes& attributes = {}) {
    urls_[name] = emulator_->create_queue(name, attributes);
  }
  // Creates the queue `dead_letter`, then `name` with a RedrivePolicy that moves its messages
  // there after `max_receive_count` receives.
  void create_with_redrive(const std::string& name, const std::string& dead_letter,
                           int max_receive_count, Attributes attributes = {}) {
    create(dead_letter);
    attributes["RedrivePolicy"] =
        redrive_policy(emulator_->queue_arn(dead_letter), max_receive_count);
    create(name, attributes);
  }
  const std::string& url(const std::string& name) {
    auto it = urls_.find(name);
    if (it == urls_.end()) {
      it = urls_
               .emplace(name, emulator_->call("GetQueueUrl", Json::object({{"QueueName", name}}))
                                  .find("QueueUrl")
                                  ->as_string())
               .first;
    }
    return it->second;
  }
  // SendMessage of `body` with `message_attributes` (a MessageAttributes object); its MessageId.
  std::string send(const std::string& name, const std::string& body,
                   const Json& message_attributes = Json::object()) {
    Json request = Json::object({{"QueueUrl", url(name)}, {"MessageBody", body}});
    if (message_attributes.size() > 0) request["MessageAttributes"] = message_attributes;
    return emulator_->call("SendMessage", request).find("MessageId")->as_string();
  }
  // One ReceiveMessage of up to `max` messages with every attribute, waiting up to `wait_seconds`;
  // `visibility` overrides the queue's VisibilityTimeout. The Messages array (empty when none).
  JsonArray receive(const std::string& name, int max = 10, int wait_seconds = 1,
                    std::optional<int> visibility = std::nullopt) {
    Json request = Json::object({{"QueueUrl", url(name)},
                                 {"MaxNumberOfMessages", max},
                                 {"WaitTimeSeconds", wait_seconds},
                                 {"MessageAttributeNames", Json::array({"All"})},
                                 {"AttributeNames", Json::array({"All"})}});
    if (visibility) request["VisibilityTimeout"] = *visibility;
    Json got = emulator_->call("ReceiveMessage", request);
    Json* messages = got.find("Messages");
    return messages == nullptr ? JsonArray{} : std::move(messages->as_array());
  }
  // Receives up to `max` messages, waiting until at least `n` came or kWithin passed.
  JsonArray receive_at_least(const std::string& name, std::size_t n,
                             std::optional<int> visibility = std::nullopt) {
    JsonArray all;
    eventually([&] {
      for (Json& m : receive(name, 10, 1, visibility))
        all.push_back(std::move(m));
      return all.size() >= n;
    });
    return all;
  }
  void delete_message(const std::string& name, const Json& message) {
    emulator_->call("DeleteMessage",
                    Json::object({{"QueueUrl", url(name)},
                                  {"ReceiptHandle", message.find("ReceiptHandle")->as_string()}}));
  }
  // ApproximateNumberOfMessages, ...NotVisible, ...Delayed.
  std::int64_t visible(const std::string& name) {
    return count_attribute(emulator_->queue_attributes(name), "ApproximateNumberOfMessages");
  }
  std::int64_t not_visible(const std::string& name) {
    return count_attribute(emulator_->queue_attributes(name),
                           "ApproximateNumberOfMessagesNotVisible");
  }
  // True when `name` holds no message at all (visible, in flight or delayed).
  bool empty(const std::string& name) {
    const auto a = emulator_->queue_attributes(name);
    return count_attribute(a, "ApproximateNumberOfMessages") == 0 &&
           count_attribute(a, "ApproximateNumberOfMessagesNotVisible") == 0 &&
           count_attribute(a, "ApproximateNumberOfMessagesDelayed") == 0;
  }

 private:
  SqsEmulator* emulator_;
  std::map<std::string, std::string> urls_;
};

// A received message's attribute `name`: its StringValue, or nullopt when absent.
inline std::optional<std::string> string_attribute(const Json& message, std::string_view name) {
  const Json* attributes = message.find("MessageAttributes");
  const Json* a = attributes == nullptr ? nullptr : attributes->find(name);
  const Json* value = a == nullptr ? nullptr : a->find("StringValue");
  if (value == nullptr) return std::nullopt;
  return value->as_string();
}

// A received message's system attribute `name` (Attributes), or nullopt when absent.
inline std::optional<std::string> system_attribute(const Json& message, std::string_view name) {
  const Json* attributes = message.find("Attributes");
  const Json* value = attributes == nullptr ? nullptr : attributes->find(name);
  if (value == nullptr) return std::nullopt;
  return value->as_string();
}

// App::consume of one queue on a thread of its own, every handled delivery going to `handler`
// (handle_any), until stop().
//
// Thread-safety: construct, stop and destroy from one thread; the handler runs on the App's.
class Worker {
 public:
  Worker(std::shared_ptr<Transport> transport, std::string queue, AppOptions options,
         Handler handler)
      : app_(std::move(transport), std::move(options)) {
    app_.handle_any(std::move(handler));
    thread_ = std::thread([this, q = std::move(queue)] { status_ = app_.consume(q); });
  }
  ~Worker() { (void)stop(); }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Stops consuming (in-flight handlers finish); the consume loop's status.
  Status stop() {
    if (thread_.joinable()) {
      app_.stop();
      thread_.join();
    }
    return status_;
  }

 private:
  App app_;
  Status status_;
  std::thread thread_;
};

// A fixture on the shared emulator: a fresh queue name (not yet created), the raw client, and
// transports on the emulator.
class SharedEmulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BABELQUEUE_REQUIRE_SQS_EMULATOR();
    raw_.emplace(shared_sqs_emulator());
    queue_ = babelqueue::testing::unique_queue_name();
  }

  static SqsEmulator& emulator() { return shared_sqs_emulator(); }
  RawQueues& raw() { return *raw_; }
  // This test's queue name; create it with create_queue().
  const std::string& queue() const { return queue_; }
  // The SQS-14 dead-letter queue of queue(): `<queue>-dlq`.
  std::string dlq() const { return sqs::dead_letter_name(queue_, std::nullopt); }
  // Creates queue() with `attributes` (e.g. {{"VisibilityTimeout", "2"}}).
  void create_queue(const Attributes& attributes = {}) { raw_->create(queue_, attributes); }

  // Options for a transport on the emulator; `client` set when given.
  static Options options(std::shared_ptr<HttpClient> client = nullptr) {
    Options o = emulator().options();
    o.client = std::move(client);
    return o;
  }
  static std::shared_ptr<SqsTransport> transport(Options o = options()) {
    return std::make_shared<SqsTransport>(std::move(o));
  }

 private:
  std::optional<RawQueues> raw_;
  std::string queue_;
};

}  // namespace babelqueue::sqs::test
