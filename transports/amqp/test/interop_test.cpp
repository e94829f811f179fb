// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Interop with the Python reference SDK (PyPI `babelqueue` 1.24.0 with `pika`) on the same real
// RabbitMQ node (issue 9; spec/04 §10 AMQP-T3, T6, T7, T8): the C++ App on AmqpTransport on one
// side, support/python_peer.py (PikaTransport and the SDK's App) on the other, in both
// directions, with retries and dead-letter records crossing over.
//
// The peer runs as a subprocess of the venv python_peer_env.sh makes once in the build tree; each
// of its stdout lines is one JSON event. Without the venv (no package index) these tests skip
// locally and fail under CI, like a missing broker.

#include <babelqueue/amqp/transport.hpp>
#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/redrive.hpp>
#include <babelqueue/testing/broker_process.hpp>
#include <babelqueue/testing/contract.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "rabbit_server.hpp"

extern char** environ;

namespace {

namespace bq = babelqueue;
namespace amqp = babelqueue::amqp;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr milliseconds kWithin = 20s;
// Bounds the first venv creation: pip's own retries and timeouts end well before it.
constexpr milliseconds kVenvLimit = 150s;
constexpr char kUrn[] = "urn:babel:interop:ping";
constexpr char kTraceparent[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

// ---- the peer process ----

struct ProcessRun {
  // The exit status; 128 + N when killed by signal N.
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::ostream& operator<<(std::ostream& os, const ProcessRun& r) {
  return os << "exit " << r.exit_code << "\n--- stdout ---\n"
            << r.out << "--- stderr ---\n"
            << r.err;
}

class Pipe {
 public:
  Pipe() {
    if (::pipe2(fds_.data(), O_CLOEXEC) != 0)
      throw std::system_error(errno, std::generic_category());
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  [[nodiscard]] int read_end() const { return fds_[0]; }
  [[nodiscard]] int write_end() const { return fds_[1]; }
  void close_read() { close_fd(fds_[0]); }
  void close_write() { close_fd(fds_[1]); }

 private:
  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  std::array<int, 2> fds_{-1, -1};
};

// Runs `argv` (argv[0] a path) with stdin on /dev/null until it exits and both of its output
// streams are closed; SIGKILLed by its PID (and reported as such) once `limit` has passed.
ProcessRun run_process(const std::vector<std::string>& argv, milliseconds limit) {
  Pipe out;
  Pipe err;
  std::vector<std::string> args = argv;
  std::vector<char*> arg_ptrs;
  for (std::string& a : args)
    arg_ptrs.push_back(a.data());
  arg_ptrs.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write_end(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write_end(), STDERR_FILENO);
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, arg_ptrs[0], &actions, nullptr, arg_ptrs.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return ProcessRun{127, "", "cannot start " + argv[0] + ": " + std::strerror(spawned)};
  }
  out.close_write();
  err.close_write();

  ProcessRun run;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::array<pollfd, 2> fds{pollfd{out.read_end(), POLLIN, 0}, pollfd{err.read_end(), POLLIN, 0}};
  std::array<std::string*, 2> sinks{&run.out, &run.err};
  bool killed = false;
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left =
        std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left <= 0ms) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    if (::poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
      }
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (killed) run.err += "\n[killed after " + std::to_string(limit.count()) + " ms]";
  return run;
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

struct PythonPeer {
  // The venv's interpreter.
  std::string python;
  // Why the peer cannot run here; nullopt when it can.
  std::optional<std::string> unavailable;
};

// python_peer_env.sh, run once per test binary: it makes the venv on the first run of the build
// tree and afterwards only checks its stamp.
const PythonPeer& python_peer() {
  static const PythonPeer peer = [] {
    const std::string bash = bq::testing::find_executable("bash").value_or("/bin/bash");
    const ProcessRun run = run_process(
        {bash, BABELQUEUE_AMQP_PYTHON_PEER_ENV, BABELQUEUE_AMQP_PYTHON_PEER_VENV}, kVenvLimit);
    PythonPeer p;
    if (run.exit_code == 0 && !trimmed(run.out).empty()) {
      p.python = trimmed(run.out);
    } else {
      p.unavailable = "the Python reference SDK peer cannot run here (python_peer_env.sh exit " +
                      std::to_string(run.exit_code) + "): " + trimmed(run.err);
    }
    return p;
  }();
  return peer;
}

// ---- reading what the peer printed ----

std::string from_base64(std::string_view text) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes;
  std::uint32_t bits = 0;
  int count = 0;
  for (const char c : text) {
    if (c == '=') break;
    const std::size_t value = kAlphabet.find(c);
    if (value == std::string_view::npos)
      throw std::invalid_argument("not base64: " + std::string(text));
    bits = (bits << 6) | static_cast<std::uint32_t>(value);
    count += 6;
    if (count >= 8) {
      count -= 8;
      bytes += static_cast<char>(static_cast<unsigned char>((bits >> count) & 0xffU));
    }
  }
  return bytes;
}

const bq::Json& at(const bq::Json& object, std::string_view key) {
  const bq::Json* member = object.find(key);
  if (member == nullptr) {
    throw std::out_of_range("no \"" + std::string(key) + "\" in " + object.dump());
  }
  return *member;
}

const std::string& text_at(const bq::Json& object, std::string_view key) {
  return at(object, key).as_string();
}

std::int64_t int_at(const bq::Json& object, std::string_view key) {
  const std::optional<std::int64_t> n = at(object, key).as_int64();
  if (!n) throw std::out_of_range("\"" + std::string(key) + "\" is no integer in " + object.dump());
  return *n;
}

std::vector<bq::Json> events_of(const std::vector<bq::Json>& events, std::string_view event,
                                std::string_view kind = {}) {
  std::vector<bq::Json> out;
  for (const bq::Json& e : events) {
    if (text_at(e, "event") == event && (kind.empty() || text_at(e, "kind") == kind)) {
      out.push_back(e);
    }
  }
  return out;
}

// ---- the C++ side ----

// Counts handler calls; the test thread waits for a number of them.
class Tally {
 public:
  void bump() {
    std::lock_guard lock(mu_);
    ++count_;
    cv_.notify_all();
  }
  bool wait_for(std::size_t n, milliseconds within) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, within, [&] { return count_ >= n; });
  }
  std::size_t count() {
    std::lock_guard lock(mu_);
    return count_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t count_ = 0;
};

// One handler call as the C++ App saw it.
struct Seen {
  std::string id;
  std::int64_t attempts = 0;
  std::string body;
  bq::Headers headers;
  std::string urn;
  std::string trace_id;
  std::string lang;
  bq::Json data;
};

Seen seen_of(const bq::Context& ctx, const bq::Envelope& env) {
  return Seen{std::string(env.meta().id),   env.attempts(),
              ctx.message().body,           ctx.headers(),
              std::string(env.urn()),       std::string(env.trace_id()),
              std::string(env.meta().lang), env.data()};
}

std::string header(const bq::Headers& headers, const std::string& key) {
  const auto it = headers.find(key);
  return it == headers.end() ? "<absent>" : it->second;
}

// Runs `app.consume(queue)` on a thread until `tally` reaches `n` (or kWithin passes), then stops
// it: the handler call in flight still settles (acks, republishes or dead-letters) before consume
// returns its status.
bq::Status consume_until(bq::App& app, std::string_view queue, Tally& tally, std::size_t n) {
  bq::Status status;
  std::thread worker([&] { status = app.consume(queue); });
  const bool reached = tally.wait_for(n, kWithin);
  app.stop();
  worker.join();
  EXPECT_TRUE(reached) << "the C++ App handled " << tally.count() << " of " << n << " deliveries";
  return status;
}

#define ASSERT_OK(expr)                              \
  do {                                               \
    const ::babelqueue::Status bq_st = (expr);       \
    ASSERT_TRUE(bq_st.ok()) << bq_st.error().what(); \
  } while (false)

class PythonInteropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BABELQUEUE_REQUIRE_RABBITMQ();
    BABELQUEUE_REQUIRE_BROKER(python_peer().unavailable);
    queue_ = bq::testing::unique_queue_name();
    url_ = amqp::test::shared_rabbit_server().url();
    transport_ = std::make_shared<amqp::AmqpTransport>(url_);
  }

  // `python_peer.py <command> --url <url> --queue <queue> <args>`; its events, after expecting
  // exit 0. `limit` bounds the process (a consume gets its own --timeout below it).
  std::vector<bq::Json> peer(std::string_view command, std::string_view queue,
                             const std::vector<std::string>& args, milliseconds limit = kWithin) {
    std::vector<std::string> argv = {python_peer().python,
                                     BABELQUEUE_AMQP_PYTHON_PEER,
                                     std::string(command),
                                     "--url",
                                     url_,
                                     "--queue",
                                     std::string(queue)};
    argv.insert(argv.end(), args.begin(), args.end());
    const ProcessRun run = run_process(argv, limit);
    EXPECT_EQ(run.exit_code, 0) << "python_peer.py " << command << ": " << run;
    std::vector<bq::Json> events;
    std::istringstream lines(run.out);
    for (std::string line; std::getline(lines, line);)
      events.push_back(bq::Json::parse(line));
    return events;
  }

  // The SDK's App consuming `queue` until `count` messages are settled.
  std::vector<bq::Json> python_consume(std::string_view queue, std::size_t count,
                                       std::vector<std::string> args = {}) {
    args.insert(
        args.end(),
        {"--count", std::to_string(count), "--timeout",
         std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kWithin).count())});
    return peer("consume", queue, args, kWithin + 10s);
  }

  // PikaTransport publishing `count` envelopes to the test's queue; one "produced" event each.
  std::vector<bq::Json> python_produce(std::size_t count, std::vector<std::string> args) {
    args.insert(args.end(), {"--count", std::to_string(count)});
    std::vector<bq::Json> produced = events_of(peer("produce", queue_, args), "produced");
    EXPECT_EQ(produced.size(), count);
    return produced;
  }

  bq::AppOptions app_options() const {
    bq::AppOptions o;
    o.default_queue = queue_;
    o.poll_timeout = 50ms;
    return o;
  }

  // The C++ App publishing `count` envelopes (with a traceparent) to the test's queue; their ids.
  std::vector<std::string> cpp_publish(std::size_t count) {
    bq::App app(transport_, app_options());
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < count; ++i) {
      ids.push_back(app.publish_with_headers(
          kUrn, bq::Json::object({{"origin", "cpp"}, {"seq", i}, {"note", "caf\u00e9 / \u2713"}}),
          {{"traceparent", kTraceparent}}, {.queue = queue_}));
    }
    return ids;
  }

  // The ready counts of the test's queue and of its `<q>.dlq`, once every ack is written.
  void expect_depths(std::int64_t ready, std::int64_t dead_letter) {
    ASSERT_OK(transport_->flush());
    const bq::Result<bq::QueueStats> stats = transport_->stats(queue_, "");
    ASSERT_TRUE(stats) << stats.error().what();
    EXPECT_EQ(stats.value().ready, ready);
    EXPECT_EQ(stats.value().dead_letter, dead_letter);
  }

  std::string queue_;
  std::string url_;
  std::shared_ptr<amqp::AmqpTransport> transport_;
};

// AMQP-T3 / AMQP-T8: Python PikaTransport -> C++ App. Every message once, the body byte for byte,
// the contract headers Python wrote (native `I`/`S`, stringified) and its traceparent.
TEST_F(PythonInteropTest, AmqpT3PythonProducerToCppAppKeepsBodyBytesIdsAndHeaders) {
  constexpr std::size_t kCount = 50;
  const std::vector<bq::Json> produced = python_produce(
      kCount, {"--prefix", "t3", "--data", R"({"origin":"python","note":"café / ✓","n":1.5})",
               "--header", std::string("traceparent=") + kTraceparent});

  bq::App app(transport_, app_options());
  Tally tally;
  std::vector<Seen> seen;
  app.handle(kUrn, [&](bq::Context& ctx, const bq::Envelope& env) {
    seen.push_back(seen_of(ctx, env));
    tally.bump();
  });
  ASSERT_OK(consume_until(app, queue_, tally, kCount));

  ASSERT_EQ(seen.size(), kCount);
  std::map<std::string, const Seen*> by_id;
  for (const Seen& s : seen)
    EXPECT_TRUE(by_id.emplace(s.id, &s).second) << "delivered twice: " << s.id;
  for (const bq::Json& p : produced) {
    SCOPED_TRACE(p.dump());
    const auto it = by_id.find(text_at(p, "id"));
    ASSERT_NE(it, by_id.end());
    const Seen& s = *it->second;
    EXPECT_EQ(s.body, from_base64(text_at(p, "body_b64")));
    EXPECT_EQ(s.urn, kUrn);
    EXPECT_EQ(s.trace_id, text_at(p, "trace_id"));
    EXPECT_EQ(s.lang, "python");
    EXPECT_EQ(s.attempts, 0);
    EXPECT_EQ(s.data,
              bq::Json::parse(R"({"origin":"python","note":"café / ✓","n":1.5,"run":"t3","seq":)" +
                              std::to_string(int_at(p, "seq")) + "}"));
    EXPECT_EQ(header(s.headers, "x-attempts"), "0");
    EXPECT_EQ(header(s.headers, "x-schema-version"), "1");
    EXPECT_EQ(header(s.headers, "x-source-lang"), "python");
    EXPECT_EQ(header(s.headers, "traceparent"), kTraceparent);
  }
  expect_depths(0, 0);
}

// AMQP-T3 / AMQP-T8, the other way: C++ App -> the SDK's App. Python sees every id once with its
// data, attempts 0, the C++ projection's headers and the traceparent; the body it got is exactly
// the C++ codec's encoding of that envelope.
TEST_F(PythonInteropTest, AmqpT3CppAppToPythonConsumerSeesDataAttemptsAndHeaders) {
  constexpr std::size_t kCount = 50;
  const std::vector<std::string> ids = cpp_publish(kCount);

  const std::vector<bq::Json> deliveries = events_of(python_consume(queue_, kCount), "delivery");
  ASSERT_EQ(deliveries.size(), kCount);
  std::set<std::string> seen;
  for (const bq::Json& d : deliveries) {
    SCOPED_TRACE(d.dump());
    const std::string& id = text_at(d, "id");
    EXPECT_TRUE(seen.insert(id).second) << "delivered twice";
    const bq::Envelope body = bq::decode(from_base64(text_at(d, "body_b64")));
    EXPECT_EQ(body.meta().id, id);
    EXPECT_EQ(body.meta().lang, "cpp");
    EXPECT_EQ(bq::encode(body), from_base64(text_at(d, "body_b64")));
    EXPECT_EQ(text_at(d, "urn"), kUrn);
    EXPECT_EQ(text_at(d, "trace_id"), body.trace_id());
    EXPECT_EQ(int_at(d, "attempts"), 0);
    EXPECT_EQ(text_at(d, "outcome"), "handled");
    EXPECT_EQ(at(d, "data"), body.data());
    EXPECT_EQ(text_at(at(d, "data"), "note"), "caf\u00e9 / \u2713");
    const bq::Json& headers = at(d, "headers");
    EXPECT_EQ(text_at(headers, "x-attempts"), "0");
    EXPECT_EQ(text_at(headers, "x-schema-version"), "1");
    EXPECT_EQ(text_at(headers, "x-source-lang"), "cpp");
    EXPECT_EQ(text_at(headers, "traceparent"), kTraceparent);
  }
  EXPECT_EQ(seen, std::set<std::string>(ids.begin(), ids.end()));
  expect_depths(0, 0);
}

// AMQP-T6 across SDKs: the SDK's App retries a C++ message once (republish with attempts + 1,
// then ack) and handles the second delivery, which C++ decodes like any envelope.
TEST_F(PythonInteropTest, AmqpT6PythonRetriesACppMessageOnceThenHandlesIt) {
  constexpr std::size_t kCount = 10;
  const std::vector<std::string> ids = cpp_publish(kCount);

  const std::vector<bq::Json> events = python_consume(queue_, kCount, {"--fail-first", "1"});
  const std::vector<bq::Json> deliveries = events_of(events, "delivery");
  const std::vector<bq::Json> retries = events_of(events, "published", "retry");
  ASSERT_EQ(deliveries.size(), 2 * kCount);
  ASSERT_EQ(retries.size(), kCount);
  std::map<std::string, std::vector<bq::Json>> by_id;
  for (const bq::Json& d : deliveries)
    by_id[text_at(d, "id")].push_back(d);
  ASSERT_EQ(by_id.size(), kCount);
  for (const std::string& id : ids) {
    SCOPED_TRACE(id);
    const std::vector<bq::Json>& two = by_id[id];
    ASSERT_EQ(two.size(), 2U);
    EXPECT_EQ(int_at(two[0], "attempts"), 0);
    EXPECT_EQ(text_at(two[0], "outcome"), "retry");
    EXPECT_EQ(int_at(two[1], "attempts"), 1);
    EXPECT_EQ(text_at(two[1], "outcome"), "handled");
    EXPECT_EQ(text_at(at(two[1], "headers"), "x-attempts"), "1");
    EXPECT_EQ(text_at(at(two[1], "headers"), "x-source-lang"), "cpp");
    EXPECT_EQ(at(two[1], "data"), at(two[0], "data"));
    EXPECT_EQ(text_at(two[1], "trace_id"), text_at(two[0], "trace_id"));
    // Python re-encodes the body on retry: the same JSON with attempts 1.
    bq::Json first = bq::Json::parse(from_base64(text_at(two[0], "body_b64")));
    first["attempts"] = 1;
    EXPECT_EQ(bq::Json::parse(from_base64(text_at(two[1], "body_b64"))), first);
  }
  for (const bq::Json& r : retries) {
    const bq::Envelope retry = bq::decode(from_base64(text_at(r, "body_b64")));
    EXPECT_EQ(retry.attempts(), 1);
    EXPECT_EQ(retry.meta().lang, "cpp");
    EXPECT_TRUE(by_id.contains(std::string(retry.meta().id)));
  }
  expect_depths(0, 0);
}

// AMQP-T6 / AMQP-25 the other way: the C++ App retries a Python message by republishing it with
// attempts + 1 (AmqpTransport has no in-place release without a delay) and acking it; the second
// delivery carries attempts 1 in the body and in x-attempts.
TEST_F(PythonInteropTest, AmqpT6CppRetriesAPythonMessageOnceThenHandlesIt) {
  constexpr std::size_t kCount = 10;
  const std::vector<bq::Json> produced = python_produce(kCount, {"--prefix", "t6"});

  bq::App app(transport_, app_options());
  Tally handled;
  std::vector<Seen> seen;
  app.handle(kUrn, [&](bq::Context& ctx, const bq::Envelope& env) {
    seen.push_back(seen_of(ctx, env));
    if (env.attempts() == 0) throw std::runtime_error("first delivery fails on purpose");
    handled.bump();
  });
  ASSERT_OK(consume_until(app, queue_, handled, kCount));

  ASSERT_EQ(seen.size(), 2 * kCount);
  std::map<std::string, std::vector<const Seen*>> by_id;
  for (const Seen& s : seen)
    by_id[s.id].push_back(&s);
  for (const bq::Json& p : produced) {
    SCOPED_TRACE(p.dump());
    const std::vector<const Seen*>& two = by_id[text_at(p, "id")];
    ASSERT_EQ(two.size(), 2U);
    const Seen& first = *two[0];
    const Seen& second = *two[1];
    EXPECT_EQ(first.body, from_base64(text_at(p, "body_b64")));
    EXPECT_EQ(first.attempts, 0);
    EXPECT_EQ(header(first.headers, "x-attempts"), "0");
    EXPECT_EQ(second.attempts, 1);
    EXPECT_EQ(header(second.headers, "x-attempts"), "1");
    EXPECT_EQ(header(second.headers, "x-source-lang"), "python");
    EXPECT_EQ(second.trace_id, text_at(p, "trace_id"));
    EXPECT_EQ(second.lang, "python");
    bq::Json expected = bq::Json::parse(first.body);
    expected["attempts"] = 1;
    EXPECT_EQ(bq::Json::parse(second.body), expected);
  }
  expect_depths(0, 0);
}

// AMQP-T7: the C++ App exhausts max_attempts 2 on Python messages and writes its record to
// `<q>.dlq`. Plain pika reads the record's projection and the C++ dead_letter block, and the
// SDK's App then consumes the record like any envelope.
TEST_F(PythonInteropTest, AmqpT7CppDeadLettersPythonMessagesAndPythonReadsTheRecords) {
  constexpr std::size_t kCount = 5;
  const std::vector<bq::Json> produced = python_produce(kCount, {"--prefix", "t7"});

  bq::AppOptions options = app_options();
  options.max_attempts = 2;
  options.dead_letter = true;
  bq::App app(transport_, options);
  Tally calls;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    calls.bump();
    throw std::runtime_error("the C++ handler fails on purpose");
  });
  ASSERT_OK(consume_until(app, queue_, calls, 2 * kCount));
  EXPECT_EQ(calls.count(), 2 * kCount);
  expect_depths(0, static_cast<std::int64_t>(kCount));

  const std::string dlq = queue_ + ".dlq";
  const std::vector<bq::Json> records = events_of(peer("peek", dlq, {}), "message");
  ASSERT_EQ(records.size(), kCount);
  std::map<std::string, bq::Json> by_id;
  for (const bq::Json& p : produced)
    by_id.emplace(text_at(p, "id"), p);
  for (const bq::Json& r : records) {
    SCOPED_TRACE(r.dump());
    const bq::Json body = bq::Json::parse(from_base64(text_at(r, "body_b64")));
    const std::string& id = text_at(at(body, "meta"), "id");
    ASSERT_TRUE(by_id.contains(id));
    const bq::Json& props = at(r, "properties");
    EXPECT_EQ(text_at(props, "message_id"), id);
    EXPECT_EQ(text_at(props, "correlation_id"), text_at(by_id.at(id), "trace_id"));
    EXPECT_EQ(text_at(props, "type"), kUrn);
    EXPECT_EQ(text_at(props, "content_type"), "application/json");
    EXPECT_EQ(text_at(props, "app_id"), "babelqueue");
    EXPECT_EQ(int_at(props, "delivery_mode"), 2);
    const bq::Json& headers = at(r, "headers");
    EXPECT_EQ(int_at(headers, "x-attempts"), 2);
    EXPECT_EQ(int_at(headers, "x-schema-version"), 1);
    EXPECT_EQ(text_at(headers, "x-source-lang"), "python");
    EXPECT_EQ(text_at(at(r, "header_types"), "x-attempts"), "int");
    EXPECT_EQ(int_at(body, "attempts"), 2);
    const bq::Json& block = at(body, "dead_letter");
    EXPECT_EQ(text_at(block, "reason"), "failed");
    EXPECT_EQ(text_at(block, "error"), "the C++ handler fails on purpose");
    EXPECT_EQ(text_at(block, "exception"), "std::runtime_error");
    EXPECT_EQ(text_at(block, "original_queue"), queue_);
    EXPECT_EQ(int_at(block, "attempts"), 2);
    EXPECT_EQ(text_at(block, "lang"), "cpp");
    EXPECT_GT(int_at(block, "failed_at"), 0);
  }

  // The peek requeued the records; the SDK's App accepts them.
  const std::vector<bq::Json> deliveries = events_of(python_consume(dlq, kCount), "delivery");
  ASSERT_EQ(deliveries.size(), kCount);
  for (const bq::Json& d : deliveries) {
    EXPECT_TRUE(by_id.contains(text_at(d, "id"))) << d.dump();
    EXPECT_EQ(int_at(d, "attempts"), 2) << d.dump();
    EXPECT_EQ(text_at(d, "outcome"), "handled") << d.dump();
  }
  expect_depths(0, 0);
}

// AMQP-T7 the other way, and HLP-20: the SDK's App dead-letters C++ messages; C++ reads Python's
// records byte for byte (Inspector peek), its codec accepts their dead_letter block, and
// `babelqueue::redrive` moves them back to `<q>`, where the SDK's App handles them afresh.
TEST_F(PythonInteropTest, AmqpT7PythonDeadLettersCppMessagesAndCppRedrivesThem) {
  constexpr std::size_t kCount = 5;
  const std::vector<std::string> ids = cpp_publish(kCount);
  const std::set<std::string> id_set(ids.begin(), ids.end());

  const std::vector<bq::Json> failed =
      python_consume(queue_, kCount, {"--fail-all", "--max-attempts", "2"});
  EXPECT_EQ(events_of(failed, "delivery").size(), 2 * kCount);
  EXPECT_EQ(events_of(failed, "published", "retry").size(), kCount);
  std::set<std::string> written;
  for (const bq::Json& w : events_of(failed, "published", "dead_letter"))
    written.insert(from_base64(text_at(w, "body_b64")));
  ASSERT_EQ(written.size(), kCount);
  expect_depths(0, static_cast<std::int64_t>(kCount));

  const std::string dlq = queue_ + ".dlq";
  const bq::Result<std::vector<bq::PeekedMessage>> peeked = transport_->peek(dlq, 0);
  ASSERT_TRUE(peeked) << peeked.error().what();
  ASSERT_EQ(peeked.value().size(), kCount);
  for (const bq::PeekedMessage& m : peeked.value()) {
    SCOPED_TRACE(m.body);
    EXPECT_TRUE(written.contains(m.body));
    const bq::Envelope record = bq::decode(m.body);
    EXPECT_TRUE(id_set.contains(std::string(record.meta().id)));
    EXPECT_EQ(record.meta().lang, "cpp");
    EXPECT_EQ(record.attempts(), 2);
    ASSERT_TRUE(record.dead_letter().has_value());
    const bq::DeadLetter& block = *record.dead_letter();
    EXPECT_EQ(block.reason, "failed");
    EXPECT_EQ(block.error, "python_peer: failing delivery with attempts 1 on purpose");
    EXPECT_EQ(block.exception, "RuntimeError");
    EXPECT_EQ(block.original_queue, queue_);
    EXPECT_EQ(block.attempts, 2);
    EXPECT_EQ(block.lang, "python");
    EXPECT_GT(block.failed_at, 0);
    EXPECT_EQ(header(m.headers, "x-attempts"), "2");
    EXPECT_EQ(header(m.headers, "x-source-lang"), "cpp");
  }

  bq::RedriveOptions redrive;
  redrive.max = kCount;
  redrive.timeout = kWithin;
  const bq::RedriveResult result = bq::redrive(*transport_, dlq, redrive);
  ASSERT_TRUE(result.ok()) << result.status.error().what();
  EXPECT_EQ(result.redriven, kCount);
  ASSERT_EQ(result.items.size(), kCount);
  for (const bq::RedriveItem& item : result.items) {
    EXPECT_TRUE(item.redriven);
    EXPECT_EQ(item.reason, "failed");
    EXPECT_EQ(item.to, queue_);
    EXPECT_TRUE(id_set.contains(item.message_id));
  }
  expect_depths(static_cast<std::int64_t>(kCount), 0);

  const std::vector<bq::Json> deliveries = events_of(python_consume(queue_, kCount), "delivery");
  ASSERT_EQ(deliveries.size(), kCount);
  std::set<std::string> replayed;
  for (const bq::Json& d : deliveries) {
    SCOPED_TRACE(d.dump());
    replayed.insert(text_at(d, "id"));
    EXPECT_EQ(int_at(d, "attempts"), 0);
    EXPECT_EQ(text_at(d, "outcome"), "handled");
    EXPECT_EQ(text_at(at(d, "headers"), "x-attempts"), "0");
    EXPECT_EQ(text_at(at(d, "headers"), "x-source-lang"), "cpp");
    EXPECT_EQ(text_at(at(d, "data"), "origin"), "cpp");
    EXPECT_EQ(bq::Json::parse(from_base64(text_at(d, "body_b64"))).find("dead_letter"), nullptr);
  }
  EXPECT_EQ(replayed, id_set);
  expect_depths(0, 0);
}

}  // namespace
