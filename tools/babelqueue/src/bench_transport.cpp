// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// babelqueue bench transport --url URL: publish and consume throughput of any transport,
// through the App, with a no-op handler or a CPU-bound one (--cpu-work).

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/json.hpp>

#include "bench_work.hpp"
#include "cli.hpp"
#include "transport_args.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace babelqueue::cli {
namespace {

struct TransportBenchArgs {
  TransportArgs transport;
  long messages = 100'000;
  int workers = 4;
  int cpu_work = 0;
  // Empty: fresh queues bench-<8 hex>.
  std::string queue;
  bool json = false;
};

constexpr std::string_view kBenchUrn = "urn:babel:orders:created";
// Bodies per publish_batch call: the pipeline depth of the broker benchmark the README compares
// the batched publish with.
constexpr std::size_t kBenchBatch = 16;
// The untimed warm-up round: connections open, scripts loaded, allocator warm.
constexpr long kWarmUpMessages = 1000;

using Clock = std::chrono::steady_clock;

double rate(long messages, Clock::duration elapsed) {
  return static_cast<double>(messages) /
         std::max(std::chrono::duration<double>(elapsed).count(), 1e-9);
}

// A timed consume round: its duration and what it cost per message.
struct ConsumeRound {
  Clock::duration took{};
  double cpu_ns_per_msg = 0;
  double waits_per_msg = 0;
};

// Two queues, `each` (fresh unless named) and `each`-batch: `each` is filled one publish at a
// time, `batched` in batches (or one at a time when the transport has no BatchPublisher); one
// worker drains `each`, N workers `batched`.
class TransportBench {
 public:
  TransportBench(OpenedTransport opened, int workers, int cpu_work, const std::string& queue)
      : opened_(std::move(opened)),
        workers_(workers),
        cpu_work_(cpu_work),
        each_(queue.empty() ? "bench-" + uuid_v4().substr(0, 8) : queue),
        batched_(each_ + "-batch"),
        batch_(capability<BatchPublisher>(*opened_.transport)),
        publisher_(opened_.transport, AppOptions{.default_queue = each_}) {}

  [[nodiscard]] bool has_batches() const { return batch_ != nullptr; }
  [[nodiscard]] const std::string& queue() const { return each_; }

  Clock::duration publish_each(long n) { return publish_one_at_a_time(each_, n); }

  // The batched round; without a BatchPublisher the queue is still filled, untimed (nullopt).
  std::optional<Clock::duration> publish_batched(long n) {
    if (batch_ == nullptr) {
      (void)publish_one_at_a_time(batched_, n);
      return std::nullopt;
    }
    const auto start = Clock::now();
    std::vector<std::string> bodies;
    for (long i = 0; i < n; ++i) {
      bodies.push_back(encode(make(kBenchUrn, data_, {.queue = batched_})));
      if (bodies.size() == kBenchBatch || i + 1 == n) {
        batch_->publish_batch(batched_, std::move(bodies)).throw_if_error();
        bodies = {};
      }
    }
    return Clock::now() - start;
  }

  // Drains warm + n messages; the time and cost of the last n.
  ConsumeRound consume_each(long warm, long n) { return consume(each_, warm, n, 1); }
  ConsumeRound consume_batched(long warm, long n) { return consume(batched_, warm, n, workers_); }

  // With the last acknowledgements sent both queues must be empty, or the figures did not
  // measure what they claim. A transport without an Inspector is taken at its word.
  void check_empty_and_close() {
    if (!flush_pending(*opened_.transport)) {
      throw Error(ErrorCode::Transport, "bench transport: the last acknowledgements failed");
    }
    if (Inspector* inspector = capability<Inspector>(*opened_.transport)) {
      for (const std::string& queue : {each_, batched_}) {
        const QueueStats s = inspector->stats(queue, {}).value();
        const std::int64_t left = s.ready.value_or(0) + s.in_flight.value_or(0) +
                                  s.delayed.value_or(0) + s.dead_letter.value_or(0);
        if (left != 0) {
          throw Error(ErrorCode::Transport, "bench transport: queue " + queue + " still holds " +
                                                std::to_string(left) + " messages");
        }
      }
    }
    opened_.transport->close();
  }

  [[nodiscard]] std::size_t message_bytes() const {
    return encode(make(kBenchUrn, data_, {.queue = each_})).size();
  }

 private:
  Clock::duration publish_one_at_a_time(const std::string& queue, long n) {
    const auto start = Clock::now();
    for (long i = 0; i < n; ++i)
      publisher_.publish(kBenchUrn, data_, {.queue = queue});
    return Clock::now() - start;
  }

  // Until warm + n messages were handled by `workers` handlers at once; the time from the
  // warm-th to the last one (in one run: the App would take more than `warm` from a queue that
  // holds more, and the timed run would miss them).
  ConsumeRound consume(const std::string& queue, long warm, long n, int workers) {
    App app(opened_.transport, AppOptions{.default_queue = queue,
                                          .poll_timeout = std::chrono::milliseconds(100),
                                          .concurrency = workers});
    const long total = warm + n;
    std::atomic<long> handled{0};
    std::atomic<bool> done{false};
    std::atomic<Clock::rep> warmed{0};
    // Written before `warmed` and `done` are stored, read after they were seen.
    Usage at_warm = Usage::now();
    Usage at_end;
    const auto finish = [&done] {
      done.store(true);
      done.notify_all();
    };
    app.handle(kBenchUrn, Handler([&](babelqueue::Context&, const Envelope& env) {
                 if (cpu_work_ > 0) {
                   const auto seed = static_cast<std::uint64_t>(env.meta().created_at);
                   work_sink_.fetch_xor(cpu_work(seed, cpu_work_), std::memory_order_relaxed);
                 }
                 const long count = handled.fetch_add(1, std::memory_order_relaxed) + 1;
                 if (count == warm) {
                   at_warm = Usage::now();
                   warmed.store(Clock::now().time_since_epoch().count());
                 }
                 if (count == total) {
                   at_end = Usage::now();
                   finish();
                 }
                 return Status{};
               }));
    Status status;
    const auto start = Clock::now();
    std::thread consumer([&] {
      status = app.consume(queue);
      finish();
    });
    done.wait(false);
    const auto end = Clock::now();
    app.stop();
    consumer.join();
    if (handled.load() != total) {
      throw Error(ErrorCode::Transport,
                  "bench transport: consumed " + std::to_string(handled.load()) + " of " +
                      std::to_string(total) + " messages" +
                      (status.ok() ? std::string() : std::string(": ") + status.error().what()));
    }
    const auto per_msg = [n](double v) { return v / static_cast<double>(n); };
    return {end - (warm == 0 ? start : Clock::time_point(Clock::duration(warmed.load()))),
            per_msg(at_end.cpu_ns - at_warm.cpu_ns),
            per_msg(static_cast<double>(at_end.waits - at_warm.waits))};
  }

  OpenedTransport opened_;
  int workers_;
  int cpu_work_;
  std::atomic<std::uint64_t> work_sink_{0};
  std::string each_;
  std::string batched_;
  BatchPublisher* batch_;
  App publisher_;
  Json data_ = Json::object({{"order_id", 1042}});
};

int run_bench_transport(const TransportBenchArgs& a) {
  OpenedTransport opened = open_transport_of(a.transport);
  const std::string component = opened.component;
  const std::string url = opened.redacted_url;
  TransportBench bench(std::move(opened), a.workers, a.cpu_work, a.queue);

  // Each pattern is warmed up right before it is timed, so no warm-up leaves the broker work
  // (an ack backlog to write, say) that runs into another pattern's timing; the queues then
  // hold warm + N messages, and the consumers' timing starts after the first `warm`.
  const long warm = std::min(a.messages, kWarmUpMessages);
  (void)bench.publish_each(warm);
  const double publish_rate = rate(a.messages, bench.publish_each(a.messages));
  (void)bench.publish_batched(warm);
  const std::optional<Clock::duration> batched = bench.publish_batched(a.messages);
  const ConsumeRound one = bench.consume_each(warm, a.messages);
  const ConsumeRound many = bench.consume_batched(warm, a.messages);
  const double consume_rate = rate(a.messages, one.took);
  const double workers_rate = rate(a.messages, many.took);
  const std::size_t bytes = bench.message_bytes();
  bench.check_empty_and_close();

  if (a.json) {
    write_stdout(
        Json::object(
            {{"transport", component},
             {"messages", a.messages},
             {"workers", a.workers},
             {"cpu_work", a.cpu_work},
             {"publish_msgs_per_s", std::round(publish_rate)},
             {"publish_batch_msgs_per_s",
              batched ? Json(std::round(rate(a.messages, *batched))) : Json(nullptr)},
             {"consume_msgs_per_s", std::round(consume_rate)},
             {"consume_workers_msgs_per_s", std::round(workers_rate)},
             {"consume_cpu_ns_per_msg", std::round(one.cpu_ns_per_msg)},
             {"consume_waits_per_msg", std::round(one.waits_per_msg * 1000) / 1000},
             {"consume_workers_cpu_ns_per_msg", std::round(many.cpu_ns_per_msg)},
             {"consume_workers_waits_per_msg", std::round(many.waits_per_msg * 1000) / 1000}})
            .dump() +
        "\n");
    return kExitOk;
  }
  char line[256];
  std::snprintf(line, sizeof line, "%s (%s), %ld messages of %zu bytes, %s\n", url.c_str(),
                component.c_str(), a.messages, bytes, handler_description(a.cpu_work).c_str());
  std::string out = line;
  const auto row = [&](const std::string& label, const std::optional<double>& msgs_per_s) {
    if (msgs_per_s) {
      std::snprintf(line, sizeof line, "  %-24s %12.0f msg/s\n", label.c_str(), *msgs_per_s);
    } else {
      std::snprintf(line, sizeof line, "  %-24s %12s (the %s transport cannot batch)\n",
                    label.c_str(), "n/a", component.c_str());
    }
    out += line;
  };
  row("publish, one at a time", publish_rate);
  row("publish, batches of " + std::to_string(kBenchBatch),
      batched ? std::optional<double>(rate(a.messages, *batched)) : std::nullopt);
  row("consume, 1 worker", consume_rate);
  row("consume, " + std::to_string(a.workers) + (a.workers == 1 ? " worker" : " workers"),
      workers_rate);
  std::snprintf(line, sizeof line,
                "  per message consumed (the process, every thread): 1 worker %.0f ns CPU, %.3f "
                "waits; %d: %.0f ns CPU, %.3f waits\n",
                one.cpu_ns_per_msg, one.waits_per_msg, a.workers, many.cpu_ns_per_msg,
                many.waits_per_msg);
  out += line;
  write_stdout(out);
  return kExitOk;
}

}  // namespace

void add_bench_transport_command(CLI::App& bench, Context& ctx) {
  auto args = std::make_shared<TransportBenchArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "transport",
      "Throughput of the transport at --url (msg/s) on fresh queues bench-<hex>: N\n"
      "one-at-a-time App publishes, N publishes in batches of 16 (a transport that can batch),\n"
      "then the first N consumed by one worker and the other N by --workers handlers at once,\n"
      "no-op handler (or --cpu-work); after an untimed warm-up. The queues are left empty.");
  add_transport_options(cmd, args->transport);
  cmd->add_option("--messages", args->messages, "N (default 100000)")
      ->check(CLI::Range(1L, 100'000'000L));
  cmd->add_option("--workers", args->workers, "Handlers of the second consume (default 4)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--cpu-work", args->cpu_work, kCpuWorkHelp)->check(CLI::Range(0, 100'000'000));
  cmd->add_option("--queue", args->queue,
                  "Use the existing empty queues NAME and NAME-batch instead of fresh ones (a "
                  "broker that never creates queues: SQS)");
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->callback([&ctx, args] { ctx.action = [args] { return run_bench_transport(*args); }; });
}

}  // namespace babelqueue::cli
