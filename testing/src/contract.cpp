// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/testing/contract.hpp>

#include <babelqueue/codec.hpp>
#include <babelqueue/spi/secure_random.hpp>

#include <atomic>
#include <utility>

namespace babelqueue::testing {

using Clock = std::chrono::steady_clock;

std::string unique_queue_name() {
  // The random part keeps names apart across test processes sharing one broker.
  static const std::string process = spi::secure_random_hex(6);
  static std::atomic<int> counter{0};
  return "bq-contract-" + process + "-" + std::to_string(++counter);
}

std::string contract_body(std::int64_t n) {
  return encode(make(kContractUrn, Json::object({{"n", n}})));
}

std::optional<std::int64_t> body_number(std::string_view body) {
  auto env = try_decode(body);
  if (!env) return std::nullopt;
  const Json* n = env->data().find("n");
  return n == nullptr ? std::nullopt : n->as_int64();
}

std::optional<std::int64_t> body_attempts(std::string_view body) {
  auto env = try_decode(body);
  if (!env) return std::nullopt;
  return env->attempts();
}

std::optional<ReceivedMessage> pop_message(Transport& t, std::string_view queue,
                                           std::chrono::milliseconds timeout) {
  auto popped = t.pop(queue, timeout);
  if (!popped.has_value()) {
    ADD_FAILURE() << "pop of " << queue << " failed: " << popped.error().what();
    return std::nullopt;
  }
  return std::move(*popped);
}

Headers published_headers(Headers headers, const Promises& promises) {
  for (const std::string_view key : promises.own_headers)
    headers.erase(std::string(key));
  return headers;
}

Status settle(Transport& t) {
  if (Flusher* f = capability<Flusher>(t)) return f->flush();
  return {};
}

Status ack_and_settle(Transport& t, const ReceivedMessage& msg) {
  if (Status st = t.ack(msg); !st) return st;
  return settle(t);
}

std::string dead_letter_queue_of(Transport& t, std::string_view queue) {
  if (const DeadLetterNaming* naming = capability<DeadLetterNaming>(t)) {
    return naming->dead_letter_name(queue, std::nullopt);
  }
  return default_dead_letter_name(queue);
}

::testing::AssertionResult is_closed(const Status& status) {
  if (status.ok()) return ::testing::AssertionFailure() << "succeeded after close()";
  if (!status.is(ErrorCode::Closed)) {
    return ::testing::AssertionFailure()
           << "failed with code " << static_cast<int>(status.error().code())
           << " instead of ErrorCode::Closed: " << status.error().what();
  }
  if (status.error().is_transient()) {
    return ::testing::AssertionFailure() << "ErrorCode::Closed is marked transient";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult is_promised(const Status& status, std::optional<ErrorCode> error) {
  if (!error) {
    if (status.ok()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "failed although ok was promised: " << status.error().what();
  }
  if (status.is(*error)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << (status.ok()
                 ? std::string("succeeded")
                 : "failed with code " + std::to_string(static_cast<int>(status.error().code())))
         << " instead of the promised code " << static_cast<int>(*error);
}

BackgroundPop::BackgroundPop(Transport& t, std::string queue, std::chrono::milliseconds timeout)
    : transport_(t) {
  thread_ = std::thread([this, queue = std::move(queue), timeout] {
    const auto start = Clock::now();
    auto popped = transport_.pop(queue, timeout);
    const auto took = Clock::now() - start;
    {
      const std::lock_guard lock(mu_);
      result_.emplace(std::move(popped));
      elapsed_ = took;
    }
    done_.notify_all();
  });
}

BackgroundPop::~BackgroundPop() {
  bool running = false;
  {
    const std::lock_guard lock(mu_);
    running = !result_.has_value();
  }
  if (running) transport_.close();
  thread_.join();
}

std::optional<Result<std::optional<ReceivedMessage>>> BackgroundPop::wait(
    std::chrono::milliseconds within) {
  std::unique_lock lock(mu_);
  done_.wait_for(lock, within, [this] { return result_.has_value(); });
  return result_;
}

Clock::duration BackgroundPop::elapsed() const {
  const std::lock_guard lock(mu_);
  return elapsed_;
}

}  // namespace babelqueue::testing
