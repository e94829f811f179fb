// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// babelqueue bench codec [--json] [--runs N] [--min-time-ms MS]

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/in_memory_transport.hpp>
#include <babelqueue/json.hpp>

#include "bench_work.hpp"
#include "cli.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace babelqueue::cli {
namespace {

// Keeps a value observable so the optimiser cannot drop the work that produced it.
volatile std::size_t g_sink = 0;

template <class T>
void escape(const T* p) {
#if defined(__GNUC__) || defined(__clang__)
  asm volatile("" : : "g"(p) : "memory");
#else
  g_sink = g_sink + reinterpret_cast<std::uintptr_t>(p);
#endif
}

// One benchmarked envelope: what make() gets, and the compact bytes decode() gets. The values
// are those of the conformance fixtures of the same name (built here, never read from disk).
struct Scenario {
  std::string name;
  std::string urn;
  Json data;
  std::string queue;
  std::string trace_id;
  std::string compact;
};

std::vector<Scenario> scenarios() {
  std::vector<Scenario> out;
  out.push_back(Scenario{
      "order-created", "urn:babel:orders:created", Json::object({{"order_id", 1042}}), "orders",
      "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",
      R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000},"attempts":0})"});
  out.push_back(Scenario{
      "unicode-and-numbers", "urn:babel:catalog:item.indexed",
      Json::object({{"title", "Caf\xC3\xA9 \xE2\x80\x94 na\xC3\xAFve \xE2\x98\x95"},
                    {"qty", 7},
                    {"price_cents", 1299},
                    {"ratio", 0.5},
                    {"active", true},
                    {"note", nullptr}}),
      "catalog", "3f7a1d2e-9b4c-4a8d-bc1e-0f5a6b7c8d90",
      R"({"job":"urn:babel:catalog:item.indexed","trace_id":"3f7a1d2e-9b4c-4a8d-bc1e-0f5a6b7c8d90","data":{"title":")"
      "Caf\xC3\xA9 \xE2\x80\x94 na\xC3\xAFve \xE2\x98\x95"
      R"(","qty":7,"price_cents":1299,"ratio":0.5,"active":true,"note":null},"meta":{"id":"b2c3d4e5-f607-4890-a1b2-c3d4e5f60718","queue":"catalog","lang":"python","schema_version":1,"created_at":1749132727000},"attempts":2})"});
  for (const Scenario& s : out) {
    // The two halves must describe the same message, or the numbers compare different work.
    const Envelope env = decode(s.compact);
    if (!accepts(env) || !(env.data() == s.data) || env.urn() != s.urn ||
        env.trace_id() != s.trace_id || env.meta().queue != s.queue) {
      throw UsageError("bench: built-in scenario " + s.name + " is inconsistent");
    }
  }
  return out;
}

using Clock = std::chrono::steady_clock;

double seconds_for(const std::function<void()>& op, std::uint64_t iterations) {
  const auto start = Clock::now();
  for (std::uint64_t i = 0; i < iterations; ++i) {
    op();
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Median ns per call of `op` over `runs` runs of at least `min_seconds` each, after a warm-up
// that also picks the iteration count.
double median_ns(const std::function<void()>& op, int runs, double min_seconds) {
  std::uint64_t iterations = 16;
  double elapsed = seconds_for(op, iterations);
  while (elapsed < min_seconds / 4) {
    iterations *= 2;
    elapsed = seconds_for(op, iterations);
  }
  iterations = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(
             std::ceil(static_cast<double>(iterations) * min_seconds / std::max(elapsed, 1e-9))));
  std::vector<double> ns;
  ns.reserve(static_cast<std::size_t>(runs));
  for (int r = 0; r < runs; ++r) {
    ns.push_back(seconds_for(op, iterations) * 1e9 / static_cast<double>(iterations));
  }
  std::sort(ns.begin(), ns.end());
  const std::size_t mid = ns.size() / 2;
  return ns.size() % 2 == 1 ? ns[mid] : (ns[mid - 1] + ns[mid]) / 2;
}

struct Result {
  std::string name;
  double encode_ns = 0;
  double decode_ns = 0;
};

struct BenchArgs {
  bool json = false;
  int runs = 7;
  int min_time_ms = 200;
};

int run_bench_codec(const BenchArgs& a) {
  const double min_seconds = a.min_time_ms / 1000.0;
  const std::vector<Scenario> all = scenarios();
  std::vector<Result> results;
  results.reserve(all.size());
  for (const Scenario& s : all) {
    const MakeOptions options{.queue = s.queue, .trace_id = s.trace_id};
    const auto make_encode = [&] {
      const std::string bytes = encode(make(s.urn, s.data, options));
      escape(bytes.data());
      g_sink = g_sink + bytes.size();
    };
    const auto decode_accepts = [&] {
      auto env = try_decode(s.compact);
      const bool ok = env && accepts(*env);
      escape(&env);
      g_sink = g_sink + (ok ? 1U : 0U);
    };
    results.push_back(Result{s.name, median_ns(make_encode, a.runs, min_seconds),
                             median_ns(decode_accepts, a.runs, min_seconds)});
  }

  const auto round1 = [](double v) { return std::round(v * 10) / 10; };
  if (a.json) {
    Json out = Json::object();
    for (const Result& r : results) {
      out[r.name] =
          Json::object({{"encode_ns", round1(r.encode_ns)}, {"decode_ns", round1(r.decode_ns)}});
    }
    write_stdout(out.dump() + "\n");
    return kExitOk;
  }
  std::string out = "codec, ns per operation (median of " + std::to_string(a.runs) +
                    " runs of >= " + std::to_string(a.min_time_ms) + " ms)\n";
  char line[160];
  std::snprintf(line, sizeof line, "%-22s %14s %16s\n", "envelope", "make+encode",
                "decode+accepts");
  out += line;
  for (const Result& r : results) {
    std::snprintf(line, sizeof line, "%-22s %14.1f %16.1f\n", r.name.c_str(), r.encode_ns,
                  r.decode_ns);
    out += line;
  }
  write_stdout(out);
  return kExitOk;
}

struct AppBenchArgs {
  std::vector<int> workers{1};
  long messages = 1'000'000;
  int cpu_work = 0;
  bool json = false;
};

struct AppRun {
  int workers = 0;
  double publish_rate = 0;
  double consume_rate = 0;
  // Process CPU time (every thread) per consumed message: what the pool costs, whatever else
  // runs on the machine.
  double consume_cpu_ns = 0;
};

// One round of `bench app` with `workers` workers: publish every message, then consume them all
// with App::consume on a thread of its own, as a real consumer is never the publishing thread (so
// every worker count frees memory another thread allocated). The handler that settles the last
// message stops the App: the timed span ends with the last handler, not with the poll timeout of
// an idle worker.
AppRun run_app_round(const std::shared_ptr<InMemoryTransport>& transport, const AppBenchArgs& a,
                     int workers) {
  constexpr std::string_view kUrn = "urn:babel:bench:noop";
  App app(transport, AppOptions{.default_queue = "bench",
                                .poll_timeout = std::chrono::milliseconds(10),
                                .concurrency = workers,
                                .logger = [](LogLevel, std::string_view) {}});
  std::atomic<long> handled{0};
  std::atomic<std::uint64_t> work_sink{0};
  Clock::time_point consumed_at;
  app.handle(kUrn, Handler([&](babelqueue::Context&, const Envelope& env) {
               if (a.cpu_work > 0) {
                 const auto seed = static_cast<std::uint64_t>(env.meta().created_at);
                 work_sink.fetch_xor(cpu_work(seed, a.cpu_work), std::memory_order_relaxed);
               }
               if (handled.fetch_add(1, std::memory_order_relaxed) + 1 == a.messages) {
                 consumed_at = Clock::now();
                 app.stop();
               }
               return Status{};
             }));
  const Json data = Json::object({{"order_id", 1042}});
  const auto p0 = Clock::now();
  for (long i = 0; i < a.messages; ++i)
    app.publish(kUrn, data);
  const double publish_s = std::chrono::duration<double>(Clock::now() - p0).count();

  const std::clock_t cpu0 = std::clock();
  const auto c0 = Clock::now();
  Status consumed;
  std::thread consumer([&] { consumed = app.consume("bench"); });
  consumer.join();
  consumed.throw_if_error();
  const double consume_s = std::chrono::duration<double>(consumed_at - c0).count();
  const double cpu_s = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
  g_sink = g_sink + work_sink.load();
  if (handled.load() != a.messages) {
    throw UsageError("bench app: handled " + std::to_string(handled.load()) + " of " +
                     std::to_string(a.messages));
  }
  const auto n = static_cast<double>(a.messages);
  return AppRun{workers, n / publish_s, n / consume_s, cpu_s * 1e9 / n};
}

// In-memory publish and consume throughput of the App: publish = make + encode + transport
// publish; consume = pop + decode + dispatch to the handler + ack, once per worker count.
int run_bench_app(const AppBenchArgs& a) {
  auto transport = std::make_shared<InMemoryTransport>();
  // One untimed warm-up round of the same size: the timed rounds then measure the steady state
  // (allocator free lists populated, pages already mapped), not the process growing its heap.
  (void)run_app_round(transport, AppBenchArgs{.messages = a.messages}, 1);
  std::vector<AppRun> runs;
  runs.reserve(a.workers.size());
  for (const int w : a.workers)
    runs.push_back(run_app_round(transport, a, w));

  if (a.json) {
    Json out = Json::array();
    for (const AppRun& r : runs) {
      out.push_back(Json::object({{"messages", a.messages},
                                  {"workers", r.workers},
                                  {"cpu_work", a.cpu_work},
                                  {"publish_msgs_per_s", std::round(r.publish_rate)},
                                  {"consume_msgs_per_s", std::round(r.consume_rate)},
                                  {"consume_cpu_ns_per_msg", std::round(r.consume_cpu_ns)}}));
    }
    write_stdout(out.dump() + "\n");
    return kExitOk;
  }
  const std::string handler = handler_description(a.cpu_work);
  std::string out = "app on the in-memory transport, " + std::to_string(a.messages) +
                    " messages, " + handler + "\n";
  char line[160];
  std::snprintf(line, sizeof line, "%8s %14s %14s %9s %13s\n", "workers", "publish msg/s",
                "consume msg/s", "vs first", "CPU ns/msg");
  out += line;
  for (const AppRun& r : runs) {
    std::snprintf(line, sizeof line, "%8d %14.0f %14.0f %8.2fx %13.0f\n", r.workers, r.publish_rate,
                  r.consume_rate, r.consume_rate / runs.front().consume_rate, r.consume_cpu_ns);
    out += line;
  }
  write_stdout(out);
  return kExitOk;
}

}  // namespace

void add_bench_commands(CLI::App& app, Context& ctx) {
  CLI::App* bench = app.add_subcommand("bench", "Micro-benchmarks");
  bench->require_subcommand(1);

  auto args = std::make_shared<BenchArgs>();
  CLI::App* codec = bench->add_subcommand(
      "codec",
      "ns per make+encode and per decode+accepts of the order-created and unicode-and-numbers\n"
      "envelopes (built in code), the median of several runs after a warm-up");
  codec->add_flag("--json", args->json, "Print one JSON object instead of a table");
  codec->add_option("--runs", args->runs, "Timed runs per measurement (default 7)")
      ->check(CLI::Range(1, 1000));
  codec
      ->add_option("--min-time-ms", args->min_time_ms,
                   "Minimum duration of each timed run in ms (default 200)")
      ->check(CLI::Range(1, 60000));
  codec->callback([&ctx, args] { ctx.action = [args] { return run_bench_codec(*args); }; });

  auto app_args = std::make_shared<AppBenchArgs>();
  CLI::App* app_cmd = bench->add_subcommand(
      "app",
      "In-memory publish and consume throughput of the App (msg/s), one round per worker count");
  app_cmd
      ->add_option("--workers", app_args->workers,
                   "Comma-separated worker counts (App concurrency), run in turn (default 1)")
      ->delimiter(',')
      ->check(CLI::Range(1, 256));
  app_cmd->add_option("--messages", app_args->messages, "Messages per round (default 1000000)")
      ->check(CLI::Range(1L, 100'000'000L));
  app_cmd->add_option("--cpu-work", app_args->cpu_work, kCpuWorkHelp)
      ->check(CLI::Range(0, 100'000'000));
  app_cmd->add_flag("--json", app_args->json, "Print a JSON array, one object per worker count");
  app_cmd->callback(
      [&ctx, app_args] { ctx.action = [app_args] { return run_bench_app(*app_args); }; });
}

}  // namespace babelqueue::cli
