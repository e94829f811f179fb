// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// babelqueue publish | work | queue stats | dlq list | dlq redrive | bench redis, over the Redis
// transport. Every message is handled through the App, so its retry, dead-letter and poison
// rules apply exactly as in a program that links the SDK.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/redis/transport.hpp>
#include <babelqueue/redrive.hpp>
#include <babelqueue/secure_random.hpp>

#include "cli.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace babelqueue::cli {
namespace {

using redis::Layout;
using redis::RedisTransport;

constexpr const char* kUrlEnv = "BABELQUEUE_REDIS_URL";

// ------------------------------------------------------------------------------ connection

// The options every Redis command shares. The CLI11 options are kept so that an action can
// tell "not given" (the URL's value wins) from an explicit value.
struct ConnectionArgs {
  std::string url;
  std::string layout;
  std::string prefix;
  CLI::Option* prefix_opt = nullptr;
};

void add_connection_options(CLI::App* cmd, ConnectionArgs& a) {
  cmd->add_option("--url", a.url,
                  "redis://[[user]:password@]host[:port][/db][?option=value&...] or\n"
                  "unix:///path")
      ->required()
      ->envname(kUrlEnv);
  cmd->add_option("--layout", a.layout,
                  "Key layout: default (reliable queue) or laravel (default: the URL's\n"
                  "layout= option, else default)");
  a.prefix_opt = cmd->add_option("--prefix", a.prefix,
                                 "Laravel layout: the prefix of every key (default: the URL's\n"
                                 "prefix= option, else queues:)");
}

// parse_url and the transport constructor throw ConfigError (exit 2) on a bad URL or value.
redis::Options redis_options(const ConnectionArgs& a) {
  redis::Options options = redis::parse_url(a.url);
  if (!a.layout.empty()) options.layout = redis::parse_layout(a.layout);
  if (a.prefix_opt->count() > 0) {
    if (options.layout != Layout::Laravel) {
      throw UsageError("--prefix applies to the laravel layout only (add --layout laravel)");
    }
    options.laravel_key_prefix = a.prefix;
  }
  return options;
}

std::string_view layout_name(Layout layout) {
  return layout == Layout::Laravel ? "laravel" : "default";
}

std::string checked_queue(const std::string& queue, std::string_view option) {
  if (trim_w(queue).empty()) throw UsageError(std::string(option) + " must not be blank");
  return queue;
}

// hiredis writes to its sockets with write(2): a server that closes the connection must give
// an EPIPE error, not kill the process. The same holds for an --exec command that exits
// without reading its stdin.
void ignore_sigpipe() {
  ::signal(SIGPIPE, SIG_IGN);
}

// The pipelined acknowledgements the transport still holds are sent now; a failure is printed
// because close() would drop it silently. False when it failed.
bool flush_acks(RedisTransport& transport) {
  const Status st = transport.flush();
  if (st.ok()) return true;
  print_error(std::string("babelqueue: sending the last acknowledgements failed (the messages ") +
              "are redelivered after retry_after): " + st.error().what());
  return false;
}

// ---------------------------------------------------------------------------------- publish

struct PublishArgs {
  ConnectionArgs conn;
  std::string queue;
  double delay_seconds = 0;
  CLI::Option* delay_opt = nullptr;
  std::vector<std::string> headers;
  std::string urn;
  std::string data;
  CLI::Option* data_opt = nullptr;
};

Json parse_data(const PublishArgs& a) {
  if (a.data_opt->count() == 0) return Json::object();
  auto parsed = Json::try_parse(a.data);
  if (!parsed)
    throw UsageError(std::string("DATA_JSON is not valid JSON: ") + parsed.error().what());
  if (!parsed->is_object()) throw UsageError("DATA_JSON must be a JSON object");
  return std::move(parsed).value();
}

Headers parse_headers(const std::vector<std::string>& pairs) {
  Headers out;
  for (const std::string& pair : pairs) {
    const std::size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError("--header " + pair + ": expected KEY=VALUE with a non-empty KEY");
    }
    out[pair.substr(0, eq)] = pair.substr(eq + 1);
  }
  return out;
}

int run_publish(const PublishArgs& a) {
  const std::string queue = checked_queue(a.queue, "--queue");
  Json data = parse_data(a);
  const Headers headers = parse_headers(a.headers);
  const bool delayed = a.delay_opt->count() > 0;
  if (delayed && !headers.empty()) {
    throw UsageError(
        "--header cannot be combined with --delay: a delayed publish carries no "
        "headers");
  }
  const redis::Options options = redis_options(a.conn);
  ignore_sigpipe();
  auto transport = std::make_shared<RedisTransport>(options);
  std::string id;
  if (delayed) {
    const Envelope env = make(a.urn, std::move(data), {.queue = queue});
    const auto delay =
        std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(a.delay_seconds * 1000.0)));
    transport->publish_delayed(queue, encode(env), delay).throw_if_error();
    id = env.meta().id;
  } else {
    if (!headers.empty() && options.layout == Layout::Laravel) {
      print_error(
          "warning: the laravel layout drops headers; publishing the envelope without them");
    }
    App app(transport, AppOptions{.default_queue = queue});
    id = app.publish_with_headers(a.urn, std::move(data), headers, {.queue = queue});
  }
  transport->close();
  write_stdout(id + "\n");
  return kExitOk;
}

// ------------------------------------------------------------------------------------- work

// Turns SIGINT/SIGTERM into App::stop(). The handler only writes the signal number to a pipe
// (async-signal-safe); a watcher thread reads it and calls stop(), which is not. After the
// first signal the default action is back, so a second one ends a worker whose handler hangs.
int g_signal_pipe = -1;

extern "C" void forward_signal(int signal_number) {
  const int saved_errno = errno;
  const auto byte = static_cast<unsigned char>(signal_number);
  if (::write(g_signal_pipe, &byte, 1) < 0) {
    // Nothing to do: the pipe is non-blocking, and a full one already holds a signal.
  }
  errno = saved_errno;
}

class StopOnSignal {
 public:
  explicit StopOnSignal(App& app) {
    if (::pipe2(fds_, O_CLOEXEC) != 0 || ::fcntl(fds_[1], F_SETFL, O_NONBLOCK) != 0) {
      throw std::system_error(errno, std::generic_category(), "cannot create the signal pipe");
    }
    g_signal_pipe = fds_[1];
    struct sigaction action = {};
    action.sa_handler = forward_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &action, &old_int_);
    ::sigaction(SIGTERM, &action, &old_term_);
    watcher_ = std::thread([this, &app] { watch(app); });
  }
  ~StopOnSignal() {
    const unsigned char quit = 0;
    while (::write(fds_[1], &quit, 1) < 0 && errno == EINTR) {
    }
    watcher_.join();
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
    g_signal_pipe = -1;
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  // The first signal that arrived, 0 if none.
  [[nodiscard]] int signal_number() const { return signal_.load(); }

 private:
  void watch(App& app) {
    for (;;) {
      unsigned char byte = 0;
      const ssize_t n = ::read(fds_[0], &byte, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || byte == 0) return;
      int none = 0;
      if (signal_.compare_exchange_strong(none, byte)) {
        ::signal(SIGINT, SIG_DFL);
        ::signal(SIGTERM, SIG_DFL);
        app.stop();
      }
    }
  }

  int fds_[2] = {-1, -1};
  struct sigaction old_int_ = {};
  struct sigaction old_term_ = {};
  std::atomic<int> signal_{0};
  std::thread watcher_;
};

// Closes a file descriptor on every path out of run_command.
class Fd {
 public:
  explicit Fd(int fd) noexcept : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const noexcept { return fd_; }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

Status command_error(const std::string& what) {
  return Error(ErrorCode::Handler, what);
}

// Runs `command` with /bin/sh -c, `input` on its stdin, our stdout and stderr; OK iff it exits
// with status 0.
Status run_command(const std::string& command, std::string_view input) {
  int fds[2];
  // O_CLOEXEC: a command started by another worker thread must not inherit this write end, or
  // our command would never see end-of-file.
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return command_error(std::string("--exec: cannot create a pipe: ") + std::strerror(errno));
  }
  Fd read_end(fds[0]);
  Fd write_end(fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, read_end.get(), STDIN_FILENO);
  // The Redis connections are not close-on-exec; the command has no business with them.
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);  // ignored here (ignore_sigpipe); a shell expects the default
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);

  std::string sh = "sh";
  std::string dash_c = "-c";
  std::string script = command;
  char* argv[] = {sh.data(), dash_c.data(), script.data(), nullptr};
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  read_end.reset();
  if (spawned != 0) {
    return command_error(std::string("--exec: cannot start /bin/sh: ") + std::strerror(spawned));
  }

  // A command that exits without reading its input is judged by its exit status alone (EPIPE).
  while (!input.empty()) {
    const ssize_t n = ::write(write_end.get(), input.data(), input.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    input.remove_prefix(static_cast<std::size_t>(n));
  }
  write_end.reset();

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return command_error(std::string("--exec: waitpid failed: ") + std::strerror(errno));
    }
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  if (WIFEXITED(status)) {
    return command_error("--exec command exited with status " +
                         std::to_string(WEXITSTATUS(status)));
  }
  if (WIFSIGNALED(status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(status));
    return command_error("--exec command was killed by signal " + std::to_string(WTERMSIG(status)) +
                         (name != nullptr ? std::string(" (SIG") + name + ")" : std::string()));
  }
  return command_error("--exec command ended with wait status " + std::to_string(status));
}

struct WorkArgs {
  ConnectionArgs conn;
  std::string queue;
  std::string dlq;
  int max_attempts = 3;
  bool dead_letter = false;
  std::string retry_after;
  CLI::Option* retry_after_opt = nullptr;
  int concurrency = 1;
  int prefetch = 16;
  CLI::Option* prefetch_opt = nullptr;
  bool drain = false;
  bool print = false;
  std::string exec;
  CLI::Option* exec_opt = nullptr;
};

std::optional<std::chrono::seconds> parse_retry_after(const std::string& text) {
  if (text == "none") return std::nullopt;
  std::int64_t seconds = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size() || seconds < 0) {
    throw UsageError("--retry-after must be a whole number of seconds >= 0 or none, got " + text);
  }
  return std::chrono::seconds(seconds);
}

// Handler outcomes, counted from the worker threads.
struct Tally {
  std::atomic<long> handled{0};
  std::atomic<long> failed{0};
};

Handler counted(Handler inner, Tally& tally) {
  return [inner = std::move(inner), &tally](babelqueue::Context& ctx, const Envelope& env) {
    Status st;
    try {
      st = inner(ctx, env);
    } catch (...) {
      ++tally.failed;
      throw;  // the App turns it into a handler error (RT-12)
    }
    ++(st.ok() ? tally.handled : tally.failed);
    return st;
  };
}

Handler print_handler() {
  auto mu = std::make_shared<std::mutex>();  // one whole line at a time from any worker
  return [mu](babelqueue::Context&, const Envelope& env) {
    std::string line = encode(env);
    line.push_back('\n');
    const std::lock_guard lock(*mu);
    write_stdout(line);  // a failed write throws: a handler error, the message is retried
    return Status{};
  };
}

int run_work(const WorkArgs& a) {
  const std::string queue = checked_queue(a.queue, "--queue");
  if (!a.print && a.exec_opt->count() == 0) throw UsageError("give --print or --exec CMD");
  redis::Options options = redis_options(a.conn);
  if (a.retry_after_opt->count() > 0) options.retry_after = parse_retry_after(a.retry_after);
  if (a.prefetch_opt->count() > 0) options.prefetch = a.prefetch;
  ignore_sigpipe();
  auto transport = std::make_shared<RedisTransport>(options);
  App app(transport, AppOptions{.default_queue = queue,
                                .max_attempts = a.max_attempts,
                                .dead_letter = a.dead_letter,
                                .dead_letter_queue = a.dlq,
                                .concurrency = a.concurrency});
  const std::string dlq = app.dead_letter_queue_for(queue);
  // Fails fast when the server is unreachable: consume would ride that out forever (D-3).
  // The dead-letter count is the baseline of the summary.
  const redis::QueueStats before = transport->stats(queue, dlq).value();

  Tally tally;
  app.handle_any(counted(a.print
                             ? print_handler()
                             : Handler([cmd = a.exec](babelqueue::Context& ctx, const Envelope&) {
                                 return run_command(cmd, ctx.message().body);
                               }),
                         tally));
  Status status;
  int signal_number = 0;
  {
    const StopOnSignal stop_on_signal(app);
    status = a.drain ? app.drain(queue).status : app.consume(queue);
    signal_number = stop_on_signal.signal_number();
  }
  const bool flushed = flush_acks(*transport);
  const auto after = transport->stats(queue, dlq);
  transport->close();

  std::string summary = "babelqueue work: queue " + queue + ": " +
                        std::to_string(tally.handled.load()) + " handled, " +
                        std::to_string(tally.failed.load()) + " failed";
  if (after) {
    summary +=
        ", " + std::to_string(after->dead_letter - before.dead_letter) + " dead-lettered to " + dlq;
  }
  if (signal_number != 0) {
    const char* name = ::sigabbrev_np(signal_number);
    summary += std::string("; stopped by SIG") + (name != nullptr ? name : "?");
  } else if (a.drain && status.ok()) {
    summary += "; queue drained";
  }
  print_error(summary);
  if (!status.ok() && !status.is(ErrorCode::Cancelled)) {
    print_error(std::string("babelqueue: consuming ") + queue +
                " failed: " + status.error().what());
    return kExitRejected;
  }
  return flushed ? kExitOk : kExitRejected;
}

// ------------------------------------------------------------------------------ queue stats

struct StatsArgs {
  ConnectionArgs conn;
  std::string queue;
  std::string dlq;
  bool json = false;
};

int run_stats(const StatsArgs& a) {
  const std::string queue = checked_queue(a.queue, "--queue");
  const std::string dlq = a.dlq.empty() ? queue + ".dlq" : a.dlq;
  ignore_sigpipe();
  RedisTransport transport(redis_options(a.conn));
  const redis::QueueStats s = transport.stats(queue, dlq).value();
  const redis::Keys keys = transport.keys(queue);
  const std::string dlq_key = transport.keys(dlq).ready;
  const bool laravel = transport.options().layout == Layout::Laravel;
  const std::string_view layout = layout_name(transport.options().layout);
  transport.close();
  if (a.json) {
    write_stdout(Json::object({{"queue", queue},
                               {"layout", layout},
                               {"ready", s.ready},
                               {"in_flight", s.in_flight},
                               {"delayed", s.delayed},
                               {"dead_letter", s.dead_letter}})
                     .dump() +
                 "\n");
    return kExitOk;
  }
  std::string out = "queue " + queue + " (" + std::string(layout) + " layout)\n";
  char line[512];
  const auto row = [&](const char* name, std::int64_t n, const std::string& key) {
    std::snprintf(line, sizeof line, "  %-12s %10lld  %s\n", name, static_cast<long long>(n),
                  key.c_str());
    out += line;
  };
  row("ready", s.ready, keys.ready);
  row("in-flight", s.in_flight, keys.in_flight);
  row("delayed", s.delayed, laravel ? keys.schedule : "(no delayed set in this layout)");
  row("dead-letter", s.dead_letter, dlq_key);
  write_stdout(out);
  return kExitOk;
}

// -------------------------------------------------------------------------------------- dlq

struct DlqArgs {
  ConnectionArgs conn;
  std::string queue;
  std::string dlq;
  std::size_t max = 0;
};

std::string dlq_name(const DlqArgs& a) {
  if (!trim_w(a.dlq).empty()) return a.dlq;
  if (trim_w(a.queue).empty())
    throw UsageError("give --queue (its dead-letter queue is QUEUE.dlq) or --dlq");
  return a.queue + ".dlq";
}

// Keeps a listed field on its line: control characters (newlines, tabs) become spaces.
std::string one_line(std::string_view text) {
  std::string out(text);
  std::replace_if(
      out.begin(), out.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }, ' ');
  return out;
}

std::string string_member(const Json* object, std::string_view name) {
  const Json* value = object != nullptr ? object->find(name) : nullptr;
  return value != nullptr && value->is_string() ? value->as_string() : std::string();
}

// "<meta.id>\t<dead_letter.reason>\t<dead_letter.error>", "-" for what is absent. Read as plain
// JSON, not decoded: a poison record is not an envelope (ADR-0035), and an annotated one may no
// longer be accepted.
std::string describe_record(const std::string& record) {
  const auto parsed = Json::try_parse(record);
  if (!parsed || !parsed->is_object()) {
    return "(undecodable record)\t-\t" +
           one_line(parsed ? "not a JSON object" : parsed.error().what());
  }
  const Json* dead_letter = parsed->find("dead_letter");
  std::string id = string_member(parsed->find("meta"), "id");
  if (id.empty()) id = parsed->find("raw") != nullptr ? "(poison record)" : "-";
  std::string reason = string_member(dead_letter, "reason");
  std::string error = string_member(dead_letter, "error");
  return one_line(id) + "\t" + (reason.empty() ? "-" : one_line(reason)) + "\t" +
         (error.empty() ? "-" : one_line(error));
}

struct DlqListArgs : DlqArgs {
  bool json = false;
};

int run_dlq_list(const DlqListArgs& a) {
  const std::string dlq = dlq_name(a);
  ignore_sigpipe();
  RedisTransport transport(redis_options(a.conn));
  const std::vector<std::string> records = transport.peek(dlq, a.max).value();
  transport.close();
  std::string out;
  for (const std::string& record : records) {
    out += a.json ? record : describe_record(record);
    out.push_back('\n');
  }
  write_stdout(out);
  return kExitOk;
}

struct RedriveArgs : DlqArgs {
  std::string to;
  bool dry_run = false;
  bool bypass = false;
};

std::string or_dash(const std::string& s) {
  return s.empty() ? "-" : s;
}

std::string describe_item(const RedriveItem& item, bool dry_run) {
  if (item.redriven) {
    return "redriven " + or_dash(item.message_id) + " " + or_dash(item.urn) + " " + item.from +
           " -> " + item.to + (item.bypassed ? " (replay bypass)" : "");
  }
  if (dry_run && !item.to.empty()) {
    return "would redrive " + or_dash(item.message_id) + " " + or_dash(item.urn) + " " + item.from +
           " -> " + item.to;
  }
  return "kept " + or_dash(item.message_id) + " (" +
         (item.reason.empty() ? std::string("no dead_letter block") : item.reason) + ") in " +
         item.from;
}

int run_dlq_redrive(const RedriveArgs& a) {
  const std::string dlq = dlq_name(a);
  const redis::Options options = redis_options(a.conn);
  if (a.bypass && options.layout == Layout::Laravel) {
    print_error("warning: the laravel layout drops headers, so --bypass marks nothing");
  }
  ignore_sigpipe();
  RedisTransport transport(options);
  const RedriveResult result = redrive(
      transport, dlq,
      RedriveOptions{.to_queue = a.to,
                     .max = a.max,
                     .dry_run = a.dry_run,
                     .bypass = a.bypass,
                     .on_ack_error = [](const ReceivedMessage&, const Error& err) {
                       print_error(std::string("warning: acknowledging a dead-letter delivery ") +
                                   "failed; it returns to the dead-letter queue after " +
                                   "retry_after: " + err.what());
                     }});
  const bool flushed = flush_acks(transport);
  transport.close();
  std::string out;
  for (const RedriveItem& item : result.items) {
    out += describe_item(item, a.dry_run) + "\n";
  }
  out += std::string(a.dry_run ? "dry run: " : "") + std::to_string(result.redriven) +
         " redriven, " + std::to_string(result.skipped) + " kept in " + dlq + "\n";
  write_stdout(out);
  if (!result.ok()) {
    print_error(std::string("babelqueue: redrive stopped: ") + result.status.error().what());
    return kExitRejected;
  }
  return flushed ? kExitOk : kExitRejected;
}

// ------------------------------------------------------------------------------ bench redis

struct RedisBenchArgs {
  ConnectionArgs conn;
  long messages = 100'000;
  int prefetch = 16;
  CLI::Option* prefetch_opt = nullptr;
  bool json = false;
};

constexpr std::string_view kBenchUrn = "urn:babel:orders:created";
// The pipeline depth of `redis-benchmark -P 16`, the figure the batched publish compares with.
constexpr std::size_t kBenchBatch = 16;
// The untimed warm-up round: connections open, scripts loaded, allocator warm.
constexpr long kWarmUpMessages = 1000;

using Clock = std::chrono::steady_clock;

double rate(long messages, Clock::time_point start) {
  return static_cast<double>(messages) /
         std::max(std::chrono::duration<double>(Clock::now() - start).count(), 1e-9);
}

int run_bench_redis(const RedisBenchArgs& a) {
  redis::Options options = redis_options(a.conn);
  if (a.prefetch_opt->count() > 0) options.prefetch = a.prefetch;
  ignore_sigpipe();
  auto transport = std::make_shared<RedisTransport>(options);
  const std::string queue = "bench-" + secure_random_hex(6);
  const Json data = Json::object({{"order_id", 1042}});
  // poll_timeout 0: every message is published before the drain, so the first empty pop means
  // done and the timed drain does not end with a wasted wait.
  App app(transport,
          AppOptions{.default_queue = queue, .poll_timeout = std::chrono::milliseconds(0)});
  long handled = 0;  // drain dispatches on this thread
  app.handle(kBenchUrn, Handler([&handled](babelqueue::Context&, const Envelope&) {
               ++handled;
               return Status{};
             }));

  const auto publish_each = [&](long n) {
    for (long i = 0; i < n; ++i)
      app.publish(kBenchUrn, data);
  };
  const auto publish_batched = [&](long n) {
    std::vector<std::string> batch;
    for (long i = 0; i < n; ++i) {
      batch.push_back(encode(make(kBenchUrn, data, {.queue = queue})));
      if (batch.size() == kBenchBatch || i + 1 == n) {
        transport->publish_batch(queue, std::move(batch)).throw_if_error();
        batch = {};
      }
    }
  };
  const auto consume = [&](long n) {
    handled = 0;
    app.drain(queue).status.throw_if_error();
    if (handled != n) {
      throw Error(ErrorCode::Transport, "bench redis: consumed " + std::to_string(handled) +
                                            " of " + std::to_string(n) + " messages");
    }
  };

  const long warm = std::min(a.messages, kWarmUpMessages);
  publish_each(warm);
  publish_batched(warm);
  consume(2 * warm);

  const auto p0 = Clock::now();
  publish_each(a.messages);
  const double publish_rate = rate(a.messages, p0);
  const auto b0 = Clock::now();
  publish_batched(a.messages);
  const double batch_rate = rate(a.messages, b0);
  const auto c0 = Clock::now();
  consume(2 * a.messages);
  const double consume_rate = rate(2 * a.messages, c0);

  // The drain emptied the queue; with the last acknowledgements sent nothing may be left, or
  // the figures above did not measure what they claim.
  transport->flush().throw_if_error();
  const redis::QueueStats left = transport->stats(queue).value();
  transport->close();
  if (left.ready + left.in_flight + left.delayed + left.dead_letter != 0) {
    throw Error(ErrorCode::Transport,
                "bench redis: queue " + queue + " still holds " + std::to_string(left.ready) +
                    " ready, " + std::to_string(left.in_flight) + " in-flight, " +
                    std::to_string(left.delayed) + " delayed, " + std::to_string(left.dead_letter) +
                    " dead-lettered messages");
  }

  const std::string_view layout = layout_name(options.layout);
  if (a.json) {
    write_stdout(Json::object({{"messages", a.messages},
                               {"layout", layout},
                               {"publish_msgs_per_s", std::round(publish_rate)},
                               {"publish_batch_msgs_per_s", std::round(batch_rate)},
                               {"consume_msgs_per_s", std::round(consume_rate)}})
                     .dump() +
                 "\n");
    return kExitOk;
  }
  const std::size_t bytes = encode(make(kBenchUrn, data, {.queue = queue})).size();
  char out[640];
  std::snprintf(out, sizeof out,
                "redis, %s layout, %ld messages of %zu bytes, prefetch %d\n"
                "  publish, one at a time    %12.0f msg/s\n"
                "  publish, batches of %-2zu    %12.0f msg/s\n"
                "  consume, no-op handler    %12.0f msg/s (%ld messages, 1 worker)\n",
                std::string(layout).c_str(), a.messages, bytes, options.prefetch, publish_rate,
                kBenchBatch, batch_rate, consume_rate, 2 * a.messages);
  write_stdout(out);
  return kExitOk;
}

}  // namespace

void add_redis_commands(CLI::App& app, Context& ctx) {
  // ---- publish
  auto pub = std::make_shared<PublishArgs>();
  CLI::App* publish =
      app.add_subcommand("publish",
                         "Publish one new envelope to a Redis queue and print its meta.id.\n"
                         "The default layout has no delayed set: --delay needs --layout laravel.");
  add_connection_options(publish, pub->conn);
  publish->add_option("--queue", pub->queue, "Queue to publish to")->required();
  pub->delay_opt =
      publish->add_option("--delay", pub->delay_seconds, "Deliver after SECONDS (laravel layout)")
          ->check(CLI::Range(0.0, 1e9));
  publish
      ->add_option("--header", pub->headers,
                   "Out-of-band header KEY=VALUE, repeatable (default layout: stored in a\n"
                   "__bq_frame; the laravel layout drops headers)")
      ->allow_extra_args(false);
  publish->add_option("urn", pub->urn, "Message URN, e.g. urn:babel:orders:created")->required();
  pub->data_opt = publish->add_option("data", pub->data, "Payload: a JSON object (default {})");
  publish->callback([&ctx, pub] { ctx.action = [pub] { return run_publish(*pub); }; });

  // ---- work
  auto work_args = std::make_shared<WorkArgs>();
  CLI::App* work = app.add_subcommand(
      "work",
      "Consume a Redis queue through the App: every URN goes to one handler that prints the\n"
      "envelope or runs a command. Handler errors are retried and, with --dead-letter,\n"
      "dead-lettered after --max-attempts; poison bodies always end in the dead-letter queue.\n"
      "Runs until SIGINT/SIGTERM (in-flight messages finish first), or with --drain until the\n"
      "queue is empty. Prints a summary to stderr: handled, failed, and how much the dead-letter\n"
      "queue grew during the run.");
  add_connection_options(work, work_args->conn);
  work->add_option("--queue", work_args->queue, "Queue to consume")->required();
  work->add_option("--dlq", work_args->dlq, "Dead-letter queue (default QUEUE.dlq)");
  work->add_option("--max-attempts", work_args->max_attempts,
                   "Deliveries before a failing message is dead-lettered or dropped (default 3)")
      ->check(CLI::Range(1, 1'000'000));
  work->add_flag("--dead-letter", work_args->dead_letter,
                 "Dead-letter exhausted messages instead of dropping them");
  work_args->retry_after_opt = work->add_option(
      "--retry-after", work_args->retry_after,
      "Seconds before an unacknowledged reservation is recovered, or none (default: the\n"
      "URL's retry_after= option, else 90)");
  work->add_option("--concurrency", work_args->concurrency,
                   "Handlers at once while consuming (default 1; --drain runs one at a time)")
      ->check(CLI::Range(1, 256));
  work_args->prefetch_opt =
      work->add_option("--prefetch", work_args->prefetch,
                       "Messages reserved per round trip (default: the URL's prefetch=, else 16)")
          ->check(CLI::Range(1, 10'000));
  work->add_flag("--drain", work_args->drain, "Return once the queue is empty");
  CLI::Option* print = work->add_flag("--print", work_args->print,
                                      "Handler: print each envelope (canonical JSON, one line)");
  work_args->exec_opt = work->add_option(
      "--exec", work_args->exec,
      "Handler: run CMD with /bin/sh -c, the message body on its stdin; exit status 0 is\n"
      "success, anything else a handler error");
  print->excludes(work_args->exec_opt);
  work->callback([&ctx, work_args] { ctx.action = [work_args] { return run_work(*work_args); }; });

  // ---- queue stats
  CLI::App* queue = app.add_subcommand("queue", "Inspect Redis queues");
  queue->require_subcommand(1);
  auto stats_args = std::make_shared<StatsArgs>();
  CLI::App* stats = queue->add_subcommand(
      "stats", "Ready, in-flight, delayed and dead-letter counts of a queue, with their keys");
  add_connection_options(stats, stats_args->conn);
  stats->add_option("--queue", stats_args->queue, "Queue")->required();
  stats->add_option("--dlq", stats_args->dlq, "Dead-letter queue (default QUEUE.dlq)");
  stats->add_flag("--json", stats_args->json, "Print one JSON object");
  stats->callback(
      [&ctx, stats_args] { ctx.action = [stats_args] { return run_stats(*stats_args); }; });

  // ---- dlq list | redrive
  CLI::App* dlq = app.add_subcommand("dlq", "Inspect and redrive a Redis dead-letter queue");
  dlq->require_subcommand(1);
  const auto add_dlq_options = [](CLI::App* cmd, DlqArgs& a) {
    add_connection_options(cmd, a.conn);
    cmd->add_option("--queue", a.queue, "The queue whose dead-letter queue (QUEUE.dlq) to use");
    cmd->add_option("--dlq", a.dlq, "The dead-letter queue itself (wins over --queue)");
  };

  auto list_args = std::make_shared<DlqListArgs>();
  CLI::App* list = dlq->add_subcommand(
      "list",
      "Print the dead-letter records, oldest first, without removing them: one line each,\n"
      "\"meta.id<TAB>dead_letter.reason<TAB>dead_letter.error\" (\"(poison record)\" for an\n"
      "ADR-0035 record of undecodable bytes), or with --json the records themselves");
  add_dlq_options(list, *list_args);
  list->add_option("--max", list_args->max, "Records to print (default 0 = all)");
  list->add_flag("--json", list_args->json, "Print each stored record as it is");
  list->callback(
      [&ctx, list_args] { ctx.action = [list_args] { return run_dlq_list(*list_args); }; });

  auto redrive_args = std::make_shared<RedriveArgs>();
  CLI::App* redrive_cmd = dlq->add_subcommand(
      "redrive",
      "Move dead-lettered messages back for reprocessing (dead_letter block dropped, attempts\n"
      "0). Poison records and undecodable entries stay. One line per message, then a summary.");
  add_dlq_options(redrive_cmd, *redrive_args);
  redrive_cmd->add_option(
      "--to", redrive_args->to,
      "Target queue (default: each message's dead_letter.original_queue, else meta.queue)");
  redrive_cmd->add_option("--max", redrive_args->max, "Messages to take (default 0 = all)");
  redrive_cmd->add_flag("--dry-run", redrive_args->dry_run,
                        "Print the plan; every message stays in the dead-letter queue");
  redrive_cmd->add_flag("--bypass", redrive_args->bypass,
                        "Mark the replays with the bq-replay-bypass header so that handlers\n"
                        "skip external effects (default layout only)");
  redrive_cmd->callback([&ctx, redrive_args] {
    ctx.action = [redrive_args] { return run_dlq_redrive(*redrive_args); };
  });

  // ---- bench redis (under the `bench` command of bench_cmd.cpp)
  auto bench_args = std::make_shared<RedisBenchArgs>();
  CLI::App* bench = app.get_subcommand("bench")->add_subcommand(
      "redis",
      "Redis throughput on a fresh queue bench-<hex> (msg/s): N one-at-a-time App publishes,\n"
      "N publishes in batches of 16 (compare redis-benchmark -P 16 -d 260), then an App drain\n"
      "of the 2N messages with a no-op handler; after an untimed warm-up. The queue is left\n"
      "empty.");
  add_connection_options(bench, bench_args->conn);
  bench->add_option("--messages", bench_args->messages, "N (default 100000)")
      ->check(CLI::Range(1L, 100'000'000L));
  bench_args->prefetch_opt =
      bench
          ->add_option("--prefetch", bench_args->prefetch,
                       "Messages reserved per round trip (default: the URL's prefetch=, else 16)")
          ->check(CLI::Range(1, 10'000));
  bench->add_flag("--json", bench_args->json, "Print one JSON object");
  bench->callback(
      [&ctx, bench_args] { ctx.action = [bench_args] { return run_bench_redis(*bench_args); }; });
}

}  // namespace babelqueue::cli
