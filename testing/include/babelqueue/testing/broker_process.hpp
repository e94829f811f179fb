// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <gtest/gtest.h>

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// The broker-process fixture of the testing kit: a private broker (redis-server today; RabbitMQ,
/// Kafka, Artemis, ... later) started by a test on 127.0.0.1 and free ports, with its own data
/// directory and log, that a test can kill -9, restart on the same data and stop, and that never
/// outlives the test process.
///
/// A transport's test support wraps it in a small class that knows the broker's command line and
/// readiness probe (see transports/redis/test/support/redis_server.cpp):
///
/// @code
///   babelqueue::testing::BrokerProcess::Spec spec;
///   spec.name = "redis-server";
///   spec.launch = [exe](const BrokerProcess& p) {
///     return BrokerProcess::Launch{{exe, "--port", std::to_string(p.port()), "--dir", p.dir()}};
///   };
///   spec.ready = [](const BrokerProcess& p) { return ping(p.port()); };  // may throw: not ready
///   spec.port_taken_marker = "Address already in use";
///   babelqueue::testing::BrokerProcess broker(std::move(spec));
/// @endcode

namespace babelqueue::testing {

/// A TCP port on 127.0.0.1 that was free a moment ago: bound with port 0, read back, closed.
/// Another process may take it before the broker binds it; BrokerProcess retries then.
/// @throws std::system_error when no socket can be bound.
[[nodiscard]] int free_loopback_port();

/// True when a TCP connection to 127.0.0.1:`port` is accepted within `timeout`.
[[nodiscard]] bool accepts_tcp(int port, std::chrono::milliseconds timeout);

/// The executable `configured` names when it is one (CMake's find_program leaves "...-NOTFOUND"
/// when it failed), else the first `name` on PATH, else nullopt.
[[nodiscard]] std::optional<std::string> find_executable(std::string_view name,
                                                         std::string_view configured = {});

/// True when the environment variable CI is set: tests that need a broker that is missing fail
/// there instead of skipping (see BABELQUEUE_REQUIRE_BROKER).
[[nodiscard]] bool running_in_ci();

/// Throws std::logic_error ("<what> must be started from the main thread") unless called on the
/// process's main thread, where a shared broker must start: it dies with the thread that started
/// it (PR_SET_PDEATHSIG, see BrokerProcess).
void require_main_thread(std::string_view what);

/// The whole text of the file at `path`; empty when it cannot be read.
[[nodiscard]] std::string read_file(const std::string& path);
/// Writes `content` to the file at `path`, replacing it (a broker's configuration file).
/// @throws std::runtime_error naming the path when it cannot be written.
void write_file(const std::string& path, std::string_view content);
/// The resident set size of process `pid` in KiB (VmRSS of /proc/PID/status), -1 when unknown.
[[nodiscard]] long long rss_kib(pid_t pid);
/// Prints a figure a broker's smoke test measured (start-up time, memory), one line in the test
/// output: "[ figure   ] <what>: <value> <unit>".
void report_figure(std::string_view what, long long value, std::string_view unit = "ms");

/// The one `Broker` (default-constructed: it starts in its constructor) that every test of this
/// process shares, started by the first call and destroyed at exit, which kills it and removes
/// its directory; a binary none of whose tests calls it starts none. A start that throws leaves
/// it unset, and the next call tries again. Call it from the main thread (where GoogleTest runs
/// SetUp() and the test bodies): the first call on another thread throws std::logic_error naming
/// `what` (e.g. "the shared Kafka broker").
template <class Broker>
Broker& shared_broker(std::string_view what) {
  static Broker broker = [what] {
    require_main_thread(what);
    return Broker();
  }();
  return broker;
}

/// One broker process: started by the constructor, stopped by the destructor.
///
/// - Ports: `Spec::ports` free loopback ports are picked once; every (re)start uses the same ones,
///   so clients reconnect to the same address. When the first start loses a port to another
///   process (its log shows `Spec::port_taken_marker`), it retries on new ports.
/// - Data: a fresh directory under $TMPDIR (default /tmp), also the working directory; it is kept
///   across restarts and removed by the destructor.
/// - Log: the process's stdout and stderr are appended to `log_path()`. When a test fails, the
///   tail of the log of every broker still alive (and of a broker destroyed during the failed
///   test) is printed; a failed start throws with the tail in the message.
/// - Stop: by PID only. `stop()` sends SIGTERM and SIGKILL after `Spec::stop_grace`; `kill()`
///   sends SIGKILL (a crash). The destructor kills (its data is deleted next). The process is also
///   SIGKILLed by the kernel when the thread that started it exits (PR_SET_PDEATHSIG), so a test
///   process killed by a timeout leaves nothing behind: construct and (re)start it from a thread
///   that outlives it, normally the test's main thread.
///
/// Thread-safety: not thread-safe; use one object from one thread.
class BrokerProcess {
 public:
  /// How to run the process once: argv[0] is the executable's path; `env` is added to (and
  /// overrides) the test process's environment.
  struct Launch {
    std::vector<std::string> argv;
    std::map<std::string, std::string> env = {};
  };

  /// What to run and how to tell that it is ready.
  struct Spec {
    /// Names the broker in messages, the data directory and the log file, e.g. "redis-server".
    std::string name;
    /// The command for a (re)start; called after the ports and the directory are known.
    std::function<Launch(const BrokerProcess&)> launch;
    /// True once the broker serves requests (e.g. a protocol ping); polled every
    /// `probe_interval` until `start_timeout`. An exception counts as "not yet". Default: port()
    /// accepts a TCP connection.
    std::function<bool(const BrokerProcess&)> ready = {};
    /// How many free loopback ports to pick (`port(i)`).
    std::size_t ports = 1;
    /// A text the broker logs when a port is taken; the first start retries on new ports when the
    /// process exits with it in its log. Empty: no retry.
    std::string port_taken_marker = {};
    std::chrono::milliseconds start_timeout{10'000};
    std::chrono::milliseconds probe_interval{5};
    std::chrono::milliseconds stop_grace{5'000};
  };

  /// Picks the ports, makes the data directory and starts the process (see `start()`).
  /// @throws std::runtime_error (with the log tail) when it does not become ready.
  /// @throws std::system_error when the directory, a port or the process cannot be made.
  explicit BrokerProcess(Spec spec);
  /// Kills the process (SIGKILL), prints its log tail when the current test failed, and removes
  /// the data directory.
  ~BrokerProcess();
  BrokerProcess(const BrokerProcess&) = delete;
  BrokerProcess& operator=(const BrokerProcess&) = delete;
  BrokerProcess(BrokerProcess&&) = delete;
  BrokerProcess& operator=(BrokerProcess&&) = delete;

  /// The first port; `port(i)` the i-th of `Spec::ports`.
  [[nodiscard]] int port(std::size_t i = 0) const { return ports_.at(i); }
  /// PID of the running process, -1 while stopped.
  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] bool running() const { return pid_ > 0; }
  /// The data (and working) directory.
  [[nodiscard]] const std::string& dir() const { return dir_; }
  /// Where stdout and stderr go: `dir()/<name>.log`.
  [[nodiscard]] const std::string& log_path() const { return log_path_; }
  [[nodiscard]] const std::string& name() const { return spec_.name; }

  /// SIGTERM, then SIGKILL after `Spec::stop_grace`; waits until it is gone. No-op if stopped.
  void stop();
  /// SIGKILL (a crash); waits until it is gone. No-op if stopped.
  void kill();
  /// Starts the stopped process again on the same ports and directory and waits until it is
  /// ready. @throws std::logic_error if it is running. @throws std::runtime_error (with the log
  /// tail) when it exits or is not ready within `Spec::start_timeout`.
  void start();

  /// The last `lines` lines of the log.
  [[nodiscard]] std::string log_tail(std::size_t lines = 20) const;
  /// Prints the log tail to stderr, headed with name, PID and ports.
  void print_log_tail(std::size_t lines = 50) const;

 private:
  enum class Started { Ready, PortTaken };

  Started spawn_and_wait();
  void spawn();
  void reap(int signal_number, bool escalate);

  Spec spec_;
  std::string dir_;
  std::string log_path_;
  std::vector<int> ports_;
  pid_t pid_ = -1;
};

/// The base of a broker fixture that runs one BrokerProcess (KafkaServer, ArtemisServer,
/// PulsarServer, SqsEmulator, ...): what it exposes of the process, and its timed (re)start. The
/// derived constructor builds its Spec and calls start().
///
/// Thread-safety: not thread-safe; use one object from one thread (see BrokerProcess).
class BrokerFixture {
 public:
  /// PID of the running process, -1 while stopped.
  [[nodiscard]] pid_t pid() const { return node_->pid(); }
  [[nodiscard]] bool running() const { return node_->running(); }
  /// The data (and working) directory.
  [[nodiscard]] const std::string& dir() const { return node_->dir(); }
  /// SIGKILL: a crash. No-op if stopped.
  void kill() { node_->kill(); }
  /// SIGTERM, then SIGKILL after the Spec's stop grace. No-op if stopped.
  void stop() { node_->stop(); }
  /// Starts the stopped broker again on the same ports and data and waits as the first start
  /// did. @throws std::logic_error if it is running.
  void restart();
  /// The last `lines` lines of the broker's log.
  [[nodiscard]] std::string log_tail(std::size_t lines = 60) const {
    return node_->log_tail(lines);
  }
  /// How long the last start (the first one or restart()) took until ready.
  [[nodiscard]] std::chrono::milliseconds started_in() const { return started_in_; }

 protected:
  BrokerFixture() = default;
  ~BrokerFixture() = default;
  BrokerFixture(const BrokerFixture&) = delete;
  BrokerFixture& operator=(const BrokerFixture&) = delete;

  /// The first start: makes the BrokerProcess of `spec` (see its constructor) and times it.
  void start(BrokerProcess::Spec spec);
  [[nodiscard]] const BrokerProcess& node() const { return *node_; }

 private:
  std::optional<BrokerProcess> node_;
  std::chrono::milliseconds started_in_{0};
};

}  // namespace babelqueue::testing

/// Skips the current test, printing `reason`, when `reason` (an std::optional<std::string>: why
/// the broker cannot be started here, nullopt when it can) is set; fails it instead under CI
/// (running_in_ci()), because tests are never skipped there. Use at the top of a test body or
/// SetUp(), or in a function they call.
#define BABELQUEUE_REQUIRE_BROKER(reason)                                                        \
  do {                                                                                           \
    if (const std::optional<std::string> bq_reason = (reason)) {                                 \
      if (::babelqueue::testing::running_in_ci()) FAIL() << *bq_reason << " (CI: not skipping)"; \
      GTEST_SKIP() << *bq_reason;                                                                \
    }                                                                                            \
  } while (false)
