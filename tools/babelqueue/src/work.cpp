// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// babelqueue work: consume a queue of any transport through the App, so its retry, dead-letter
// and poison rules apply exactly as in a program that links the SDK.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/json.hpp>

#include "cli.hpp"
#include "exec.hpp"
#include "signals.hpp"
#include "transport_args.hpp"

#include <CLI/CLI.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace babelqueue::cli {
namespace {

struct WorkArgs {
  TransportArgs transport;
  std::string queue;
  std::string dlq;
  int max_attempts = 3;
  bool dead_letter = false;
  int concurrency = 1;
  bool drain = false;
  bool print = false;
  bool print_headers = false;
  std::string exec;
  CLI::Option* exec_opt = nullptr;
};

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

// One line per envelope, its canonical encoding; with `headers`
// {"headers":{...},"envelope":<that encoding>}.
Handler print_handler(bool headers) {
  auto mu = std::make_shared<std::mutex>();  // one whole line at a time from any worker
  return [mu, headers](babelqueue::Context& ctx, const Envelope& env) {
    std::string line;
    if (headers) {
      Json object = Json::object();
      for (const auto& [name, value] : ctx.message().headers)
        object[name] = value;
      line = R"({"headers":)" + object.dump() + R"(,"envelope":)" + encode(env) + "}";
    } else {
      line = encode(env);
    }
    line.push_back('\n');
    const std::lock_guard lock(*mu);
    write_stdout(line);  // a failed write throws: a handler error, the message is retried
    return Status{};
  };
}

Handler exec_handler(std::string command) {
  return [command = std::move(command)](babelqueue::Context& ctx, const Envelope&) {
    return run_command(command, ctx.message().body, ctx.message().headers);
  };
}

// The dead-letter depth, when the transport can tell it.
std::optional<std::int64_t> dead_letter_depth(Inspector* inspector, const std::string& queue,
                                              const std::string& dlq) {
  if (inspector == nullptr) return std::nullopt;
  const auto stats = inspector->stats(queue, dlq);
  return stats ? stats->dead_letter : std::nullopt;
}

int run_work(const WorkArgs& a) {
  if (!a.print && a.exec_opt->count() == 0) throw UsageError("give --print or --exec CMD");
  const OpenedTransport opened = open_transport_of(a.transport);
  const std::string queue = checked_queue(a.queue);
  App app(opened.transport, AppOptions{.default_queue = queue,
                                       .max_attempts = a.max_attempts,
                                       .dead_letter = a.dead_letter,
                                       .dead_letter_queue = a.dlq,
                                       .concurrency = a.concurrency});
  const std::string dlq = app.dead_letter_queue_for(queue);
  Inspector* inspector = capability<Inspector>(*opened.transport);
  // An Inspector fails fast when the broker is unreachable: consume would ride that out forever
  // (D-3). The dead-letter depth is the baseline of the summary.
  std::optional<std::int64_t> dead_before;
  if (inspector != nullptr) dead_before = inspector->stats(queue, dlq).value().dead_letter;

  Tally tally;
  app.handle_any(counted(a.print ? print_handler(a.print_headers) : exec_handler(a.exec), tally));
  Status status;
  int signal_number = 0;
  {
    const StopOnSignal stop_on_signal(app);
    status = a.drain ? app.drain(queue).status : app.consume(queue);
    signal_number = stop_on_signal.signal_number();
  }
  const bool flushed = flush_pending(*opened.transport);
  const std::optional<std::int64_t> dead_after = dead_letter_depth(inspector, queue, dlq);
  opened.transport->close();

  std::string summary = "babelqueue work: queue " + queue + ": " +
                        std::to_string(tally.handled.load()) + " handled, " +
                        std::to_string(tally.failed.load()) + " failed";
  if (dead_before && dead_after) {
    summary += ", " + std::to_string(*dead_after - *dead_before) + " dead-lettered to " + dlq;
  }
  if (signal_number != 0) {
    const char* name = ::sigabbrev_np(signal_number);
    summary += std::string("; stopped by SIG") + (name != nullptr ? name : "?");
  } else if (a.drain && status.ok()) {
    summary += "; queue drained";
  }
  print_error(summary);
  if (!status.ok()) {  // after stop() consume returns OK
    print_error(std::string("babelqueue: consuming ") + queue +
                " failed: " + status.error().what());
    return kExitRejected;
  }
  return flushed ? kExitOk : kExitRejected;
}

}  // namespace

void add_work_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<WorkArgs>();
  CLI::App* cmd = app.add_subcommand(
      "work",
      "Consume a queue through the App: every URN goes to one handler that prints the\n"
      "envelope or runs a command. Handler errors are retried and, with --dead-letter,\n"
      "dead-lettered after --max-attempts; poison bodies always end in the dead-letter queue.\n"
      "Runs until SIGINT/SIGTERM (in-flight messages finish first), or with --drain until the\n"
      "queue is empty. Prints a summary to stderr: handled, failed, and (on a transport that\n"
      "can inspect queues) how much the dead-letter queue grew during the run.");
  add_transport_options(cmd, args->transport);
  cmd->add_option("--queue", args->queue, "Queue to consume (required)");
  cmd->add_option("--dlq", args->dlq, "Dead-letter queue (default: the transport's, QUEUE.dlq)");
  cmd->add_option("--max-attempts", args->max_attempts,
                  "Deliveries before a failing message is dead-lettered or dropped (default 3)")
      ->check(CLI::Range(1, 1'000'000));
  cmd->add_flag("--dead-letter", args->dead_letter,
                "Dead-letter exhausted messages instead of dropping them");
  cmd->add_option("--concurrency", args->concurrency,
                  "Handlers at once while consuming (default 1; --drain runs one at a time)")
      ->check(CLI::Range(1, 256));
  cmd->add_flag("--drain", args->drain, "Return once the queue is empty");
  CLI::Option* print = cmd->add_flag("--print", args->print,
                                     "Handler: print each envelope (canonical JSON, one line)");
  cmd->add_flag("--print-headers", args->print_headers,
                "With --print: print {\"headers\":{...},\"envelope\":ENVELOPE} lines")
      ->needs(print);
  args->exec_opt = cmd->add_option(
      "--exec", args->exec,
      "Handler: run CMD with /bin/sh -c, the message body on its stdin and each header in\n"
      "$BABELQUEUE_HEADER_<NAME>; exit status 0 is success, anything else a handler error");
  print->excludes(args->exec_opt);
  cmd->callback([&ctx, args] { ctx.action = [args] { return run_work(*args); }; });
}

}  // namespace babelqueue::cli
