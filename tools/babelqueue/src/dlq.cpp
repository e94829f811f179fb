// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// babelqueue dlq list | redrive: a dead-letter queue of any transport, read through its
// Inspector, redriven through `babelqueue::redrive`.

#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/redrive.hpp>

#include "cli.hpp"
#include "transport_args.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::cli {
namespace {

struct DlqArgs {
  TransportArgs transport;
  std::string queue;
  std::string dlq;
  std::size_t max = 0;
};

std::string dlq_name(const DlqArgs& a, Transport& transport) {
  if (!trim_w(a.dlq).empty()) return a.dlq;
  if (trim_w(a.queue).empty()) {
    throw UsageError("give --queue (its dead-letter queue is the transport's, QUEUE.dlq) or --dlq");
  }
  return dead_letter_queue_of(transport, a.queue);
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
  const OpenedTransport opened = open_transport_of(a.transport);
  const std::string dlq = dlq_name(a, *opened.transport);
  Inspector& inspector =
      require_capability<Inspector>(opened, "dlq list", "list a queue without consuming it");
  const std::vector<PeekedMessage> records = inspector.peek(dlq, a.max).value();
  opened.transport->close();
  std::string out;
  for (const PeekedMessage& record : records) {
    out += a.json ? record.body : describe_record(record.body);
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
  const OpenedTransport opened = open_transport_of(a.transport);
  const std::string dlq = dlq_name(a, *opened.transport);
  if (a.bypass && capability<HeaderPublisher>(*opened.transport) == nullptr) {
    print_error("warning: the " + opened.component +
                " transport carries no headers, so --bypass marks nothing");
  }
  const RedriveResult result = redrive(
      *opened.transport, dlq,
      RedriveOptions{.to_queue = a.to,
                     .max = a.max,
                     .dry_run = a.dry_run,
                     .bypass = a.bypass,
                     .on_ack_error = [](const ReceivedMessage&, const Error& err) {
                       print_error(
                           std::string("warning: acknowledging a dead-letter delivery ") +
                           "failed; the broker returns it to the dead-letter queue: " + err.what());
                     }});
  const bool flushed = flush_pending(*opened.transport);
  opened.transport->close();
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

void add_dlq_options(CLI::App* cmd, DlqArgs& a) {
  add_transport_options(cmd, a.transport);
  cmd->add_option("--queue", a.queue, "The queue whose dead-letter queue (QUEUE.dlq) to use");
  cmd->add_option("--dlq", a.dlq, "The dead-letter queue itself (wins over --queue)");
}

}  // namespace

void add_dlq_command(CLI::App& app, Context& ctx) {
  CLI::App* dlq = app.add_subcommand("dlq", "Inspect and redrive a dead-letter queue");
  dlq->require_subcommand(1);

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
                        "skip external effects (a transport that carries headers)");
  redrive_cmd->callback([&ctx, redrive_args] {
    ctx.action = [redrive_args] { return run_dlq_redrive(*redrive_args); };
  });
}

}  // namespace babelqueue::cli
