// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// babelqueue demo: an order workflow on the embedded in-memory transport.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/in_memory_transport.hpp>

#include "cli.hpp"

#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace babelqueue::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct DemoArgs {
  int orders = 10000;
  int workers = 4;
  bool json = false;
};

constexpr std::string_view kCreated = "urn:babel:orders:created";
constexpr std::string_view kPaid = "urn:babel:payments:requested";
constexpr std::string_view kShipped = "urn:babel:orders:shipped";
constexpr std::string_view kNoHandler = "urn:babel:orders:gift-wrapped";

// What the handlers saw; shared by the worker threads.
struct Tally {
  std::atomic<long> processed{0};  // handler successes
  std::atomic<long> failures{0};   // handler errors (retried or dead-lettered)
  std::atomic<long> shipped{0};
  std::mutex mu;
  std::vector<double> latency_us;  // one entry per handler run
  std::map<long, int> payment_tries;

  void record(Clock::time_point start) {
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    const std::lock_guard lock(mu);
    latency_us.push_back(us);
  }
};

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

int run_demo(const DemoArgs& a) {
  if (a.orders < 1 || a.workers < 1) throw UsageError("--orders and --workers must be >= 1");
  auto transport = std::make_shared<InMemoryTransport>();
  std::atomic<long> warnings{0};
  App app(transport, AppOptions{.default_queue = "orders",
                                .max_attempts = 3,
                                .dead_letter = true,
                                .poll_timeout = std::chrono::milliseconds(20),
                                .concurrency = a.workers,
                                .logger = [&warnings](LogLevel level, std::string_view) {
                                  if (level >= LogLevel::Warning) ++warnings;
                                }});
  Tally tally;

  // Every order: created -> payment -> shipped. Every 10th payment fails once (a flaky gateway,
  // retried), every 500th always fails (declined: dead-lettered after 3 attempts).
  app.handle(kCreated, [&](babelqueue::Context&, const Envelope& env) {
    const auto start = Clock::now();
    const long id = *env.data().find("order_id")->as_int64();
    app.publish(kPaid, Json::object({{"order_id", id}, {"amount_cents", 1299 + id % 100}}),
                {.trace_id = env.trace_id()});
    ++tally.processed;
    tally.record(start);
  });
  app.handle(kPaid, [&](babelqueue::Context&, const Envelope& env) {
    const auto start = Clock::now();
    const long id = *env.data().find("order_id")->as_int64();
    int tries = 0;
    {
      const std::lock_guard lock(tally.mu);
      tries = ++tally.payment_tries[id];
    }
    if (id % 500 == 0 || (id % 10 == 0 && tries == 1)) {
      ++tally.failures;
      tally.record(start);
      throw std::runtime_error(id % 500 == 0 ? "card declined" : "payment gateway timeout");
    }
    app.publish(kShipped, Json::object({{"order_id", id}}), {.trace_id = env.trace_id()});
    ++tally.processed;
    tally.record(start);
  });
  app.handle(kShipped, [&](babelqueue::Context&, const Envelope&) {
    const auto start = Clock::now();
    ++tally.shipped;
    ++tally.processed;
    tally.record(start);
  });

  const long declined = a.orders / 500;
  const long expected_end = a.orders + 2;  // every order shipped or declined, + poison + no handler
  const bool tty = isatty(STDOUT_FILENO) == 1 && !a.json;

  const auto started = Clock::now();
  std::thread consumer([&app] { (void)app.consume(); });
  std::thread producer([&] {
    for (long id = 1; id <= a.orders; ++id)
      app.publish(kCreated, Json::object({{"order_id", id}}));
    (void)transport->publish("orders", "{\"job\":\"urn:babel:orders:created\",\"data\":[1]}");
    app.publish(kNoHandler, Json::object({{"order_id", 1}}));
  });

  // The monitor: a live progress line on a terminal, and stop() once every message has ended.
  long ended = 0;
  while (true) {
    const long dlq = static_cast<long>(transport->size("orders.dlq"));
    ended = tally.shipped.load() + dlq;
    const double secs = std::chrono::duration<double>(Clock::now() - started).count();
    if (tty) {
      std::printf("\r  %ld/%ld orders settled, %ld handler runs, %ld dead-lettered, %.0f runs/s   ",
                  ended, expected_end, tally.processed.load() + tally.failures.load(), dlq,
                  secs > 0 ? static_cast<double>(tally.processed + tally.failures) / secs : 0.0);
      std::fflush(stdout);
    }
    if (ended >= expected_end || secs > 120) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(tty ? 100 : 5));
  }
  producer.join();
  app.stop();
  consumer.join();
  const double secs = std::chrono::duration<double>(Clock::now() - started).count();
  if (tty) std::printf("\n");

  std::map<std::string, long> by_reason;
  for (const std::string& record : transport->peek_all("orders.dlq")) {
    const auto env = try_decode(record);
    std::string why = "poison";  // a poison record is usually poison again (ENV-45)
    if (env && env->dead_letter()) why = env->dead_letter()->reason;
    ++by_reason[why];
  }
  const long runs = tally.processed + tally.failures;
  const long retried = tally.failures - declined;  // a declined payment's last failure is final
  std::vector<double> lat = tally.latency_us;
  const double p50 = percentile(lat, 0.50);
  const double p99 = percentile(lat, 0.99);
  const bool ok = ended == expected_end && tally.shipped == a.orders - declined &&
                  by_reason["failed"] == declined && by_reason["poison"] == 1 &&
                  by_reason["unknown_urn"] == 1 && transport->size("orders") == 0;

  if (a.json) {
    Json out = Json::object({{"orders", a.orders},
                             {"workers", a.workers},
                             {"seconds", secs},
                             {"handler_runs", runs},
                             {"processed", tally.processed.load()},
                             {"retried", retried},
                             {"shipped", tally.shipped.load()},
                             {"runs_per_second", static_cast<double>(runs) / secs},
                             {"p50_us", p50},
                             {"p99_us", p99},
                             {"ok", ok}});
    Json dl = Json::object();
    for (const auto& [reason, n] : by_reason)
      dl[reason] = n;
    out["dead_lettered"] = dl;
    write_stdout(out.dump() + "\n");
  } else {
    std::string dl;
    for (const auto& [reason, n] : by_reason) {
      dl += (dl.empty() ? "" : ", ") + reason + " " + std::to_string(n);
    }
    char buf[1024];
    std::snprintf(buf, sizeof buf,
                  "babelqueue demo: %d orders, in-memory transport, %d workers\n"
                  "  handler runs     %ld in %.2f s (%.0f runs/s)\n"
                  "  processed        %ld successes (%ld orders shipped)\n"
                  "  retried          %ld (handler failed, attempts + 1 < 3)\n"
                  "  dead-lettered    %ld: %s\n"
                  "  handler latency  p50 %.1f us, p99 %.1f us\n"
                  "  warnings logged  %ld\n"
                  "  %s\n",
                  a.orders, a.workers, runs, secs, static_cast<double>(runs) / secs,
                  tally.processed.load(), tally.shipped.load(), retried,
                  static_cast<long>(transport->size("orders.dlq")), dl.c_str(), p50, p99,
                  warnings.load(),
                  ok ? "every order settled: shipped or dead-lettered, nothing lost"
                     : "MISMATCH: some messages are unaccounted for");
    write_stdout(buf);
  }
  return ok ? kExitOk : kExitRejected;
}

}  // namespace

void add_demo_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* demo = app.add_subcommand(
      "demo",
      "An order workflow on the in-memory transport: orders are created, paid (every 10th\n"
      "payment fails once, every 500th always), shipped; one poison body and one URN without\n"
      "a handler end in the dead-letter queue. Prints a live progress line and a summary.");
  demo->add_option("--orders", args->orders, "Orders to process (default 10000)")
      ->check(CLI::Range(1, 10'000'000));
  demo->add_option("--workers", args->workers, "Handlers at once (default 4)")
      ->check(CLI::Range(1, 256));
  demo->add_flag("--json", args->json, "Print the summary as one JSON object");
  demo->callback([&ctx, args] { ctx.action = [args] { return run_demo(*args); }; });
}

}  // namespace babelqueue::cli
