// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// babelqueue queue stats: the counts of a queue through the transport's Inspector.

#include <babelqueue/json.hpp>

#include "cli.hpp"
#include "transport_args.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue::cli {
namespace {

struct StatsArgs {
  TransportArgs transport;
  std::string queue;
  std::string dlq;
  bool json = false;
};

Json count_or_null(const std::optional<std::int64_t>& n) {
  return n ? Json(*n) : Json(nullptr);
}

std::string json_stats(const std::string& queue, const std::string& dlq, const QueueStats& s) {
  Json out = Json::object({{"queue", queue},
                           {"dead_letter_queue", dlq},
                           {"ready", count_or_null(s.ready)},
                           {"in_flight", count_or_null(s.in_flight)},
                           {"delayed", count_or_null(s.delayed)},
                           {"dead_letter", count_or_null(s.dead_letter)},
                           {"consumers", count_or_null(s.consumers)}});
  for (const auto& [name, value] : s.details) {
    if (out.find(name) == nullptr) out[name] = value;  // the counts above win over a detail
  }
  return out.dump() + "\n";
}

std::string table_stats(const std::string& queue, const std::string& dlq, const QueueStats& s) {
  std::string out = "queue " + queue + " (dead-letter queue " + dlq + ")\n";
  const auto row = [&out](std::string_view name, const std::string& value) {
    char line[512];
    std::snprintf(line, sizeof line, "  %-12s %10s\n", std::string(name).c_str(), value.c_str());
    out += line;
  };
  const auto count = [](const std::optional<std::int64_t>& n) {
    return n ? std::to_string(*n) : std::string("n/a");
  };
  row("ready", count(s.ready));
  row("in-flight", count(s.in_flight));
  row("delayed", count(s.delayed));
  row("dead-letter", count(s.dead_letter));
  if (s.consumers) row("consumers", count(s.consumers));
  for (const auto& [name, value] : s.details)
    row(name, value);
  return out;
}

int run_stats(const StatsArgs& a) {
  const OpenedTransport opened = open_transport_of(a.transport);
  const std::string queue = checked_queue(a.queue);
  Inspector& inspector = require_capability<Inspector>(opened, "queue stats", "inspect queues");
  const std::string dlq = a.dlq.empty() ? dead_letter_queue_of(*opened.transport, queue) : a.dlq;
  const QueueStats s = inspector.stats(queue, dlq).value();
  opened.transport->close();
  write_stdout(a.json ? json_stats(queue, dlq, s) : table_stats(queue, dlq, s));
  return kExitOk;
}

}  // namespace

void add_queue_command(CLI::App& app, Context& ctx) {
  CLI::App* queue = app.add_subcommand("queue", "Inspect queues");
  queue->require_subcommand(1);
  auto args = std::make_shared<StatsArgs>();
  CLI::App* stats = queue->add_subcommand(
      "stats",
      "Ready, in-flight, delayed and dead-letter counts of a queue (n/a where the broker has\n"
      "no such figure), then the transport's own figures");
  add_transport_options(stats, args->transport);
  stats->add_option("--queue", args->queue, "Queue (required)");
  stats->add_option("--dlq", args->dlq, "Dead-letter queue (default: the transport's, QUEUE.dlq)");
  stats->add_flag("--json", args->json, "Print one JSON object");
  stats->callback([&ctx, args] { ctx.action = [args] { return run_stats(*args); }; });
}

}  // namespace babelqueue::cli
