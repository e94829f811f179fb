// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// babelqueue envelope make | check | retry | poison-record

#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/json.hpp>

#include "cli.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace babelqueue::cli {
namespace {

constexpr const char* kFileHelp = "Envelope bytes to read exactly; - or nothing reads stdin";

// Which ENV-29 check accepts() failed, in words.
std::string rejection(const Envelope& env) {
  std::vector<std::string> why;
  if (env.urn().empty())
    why.emplace_back("ENV-29(a) no URN: neither job nor urn is a non-blank string");
  if (!env.has_meta()) {
    why.emplace_back("ENV-29(b) meta is absent");
  } else if (env.meta().schema_version != SCHEMA_VERSION) {
    why.emplace_back("ENV-29(b) meta.schema_version is " +
                     std::to_string(env.meta().schema_version) + ", this SDK supports 1");
  }
  if (!env.has_data()) why.emplace_back("ENV-29(c) data is absent or null");
  if (trim_w(env.trace_id()).empty()) why.emplace_back("ENV-29(d) trace_id is absent or blank");
  if (!env.has_attempts()) why.emplace_back("ENV-29(e) attempts is absent or null");
  std::string out;
  for (const std::string& w : why) {
    out += (out.empty() ? "" : "; ") + w;
  }
  return out.empty() ? "accepts() returned false" : out;
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) {
    print_error("warning: " + w);
  }
}

// Decodes `body`; a poison body prints the reason and yields nullopt.
std::optional<Envelope> decode_or_report(const std::string& body) {
  std::vector<std::string> warnings;
  auto decoded = try_decode(body, &warnings);
  if (!decoded) {
    print_error(std::string("rejected: poison (not a decodable envelope): ") +
                decoded.error().what());
    return std::nullopt;
  }
  print_warnings(warnings);
  return std::move(decoded).value();
}

struct MakeArgs {
  std::string urn;
  std::string queue;
  std::string trace_id;
  std::optional<std::string> data;
  std::string data_text;  // bound to --data; copied into `data` when given
};

int run_make(const MakeArgs& a) {
  Json data = Json::object();
  if (a.data) {
    auto parsed = Json::try_parse(*a.data);
    if (!parsed)
      throw UsageError(std::string("--data is not valid JSON: ") + parsed.error().what());
    if (!parsed->is_object()) throw UsageError("--data must be a JSON object");
    data = std::move(parsed).value();
  }
  const Envelope env = make(a.urn, std::move(data), {.queue = a.queue, .trace_id = a.trace_id});
  write_stdout(encode(env) + "\n");
  return kExitOk;
}

int run_check(const std::string& file) {
  const auto env = decode_or_report(read_input(file));
  if (!env) return kExitRejected;
  if (!accepts(*env)) {
    print_error("rejected: not accepted: " + rejection(*env));
    return kExitRejected;
  }
  write_stdout(encode(*env) + "\n");
  return kExitOk;
}

int run_retry(const std::string& file) {
  auto env = decode_or_report(read_input(file));
  if (!env) return kExitRejected;
  if (env->attempts() == std::numeric_limits<std::int64_t>::max()) {
    print_error("rejected: attempts is already at its maximum and cannot be incremented");
    return kExitRejected;
  }
  env->set_attempts(env->attempts() + 1);
  write_stdout(encode(*env) + "\n");
  return kExitOk;
}

struct PoisonArgs {
  std::string queue;
  std::optional<std::string> error;
  std::string error_text;  // bound to --error; copied into `error` when given
  std::string file;
};

int run_poison_record(const PoisonArgs& a) {
  if (trim_w(a.queue).empty()) throw UsageError("--queue must not be blank");
  if (a.error && a.error->empty()) throw UsageError("--error must not be empty");
  const std::string body = read_input(a.file);
  std::string error;
  if (a.error) {
    error = *a.error;
  } else if (auto decoded = try_decode(body); !decoded) {
    error = decoded.error().what();
  } else {
    error = "undecodable body";
  }
  write_stdout(poison_record(body, error, a.queue));
  return kExitOk;
}

}  // namespace

void add_envelope_commands(CLI::App& app, Context& ctx) {
  CLI::App* envelope =
      app.add_subcommand("envelope", "Make, check, retry and dead-letter envelopes");
  envelope->require_subcommand(1);

  auto make_args = std::make_shared<MakeArgs>();
  CLI::App* make_cmd = envelope->add_subcommand(
      "make", "Print a new envelope (compact JSON, one line): fresh ids, lang cpp, attempts 0");
  make_cmd->add_option("--urn", make_args->urn, "Message URN, e.g. urn:babel:orders:created")
      ->required();
  make_cmd->add_option("--queue", make_args->queue, "Logical queue (blank: default)");
  make_cmd->add_option("--trace-id", make_args->trace_id, "Continue this trace (blank: mint one)");
  CLI::Option* data =
      make_cmd->add_option("--data", make_args->data_text, "Payload: a JSON object (default {})");
  make_cmd->callback([&ctx, make_args, data] {
    if (data->count() > 0) make_args->data = make_args->data_text;
    ctx.action = [make_args] { return run_make(*make_args); };
  });

  auto check_file = std::make_shared<std::string>();
  CLI::App* check = envelope->add_subcommand(
      "check",
      "Decode and accept an envelope; print its canonical compact re-encoding.\n"
      "Exit 1 with the reason on stderr when the bytes are poison or not accepted (ENV-29).");
  check->add_option("file", *check_file, kFileHelp);
  check->callback(
      [&ctx, check_file] { ctx.action = [check_file] { return run_check(*check_file); }; });

  auto retry_file = std::make_shared<std::string>();
  CLI::App* retry = envelope->add_subcommand(
      "retry", "Decode an envelope, add 1 to attempts and print the re-encoding");
  retry->add_option("file", *retry_file, kFileHelp);
  retry->callback(
      [&ctx, retry_file] { ctx.action = [retry_file] { return run_retry(*retry_file); }; });

  auto poison_args = std::make_shared<PoisonArgs>();
  CLI::App* poison = envelope->add_subcommand(
      "poison-record",
      "Print the ADR-0035 poison dead-letter record for exactly these bytes (written as is,\n"
      "no newline added)");
  poison->add_option("--queue", poison_args->queue, "The queue the body was consumed from")
      ->required();
  CLI::Option* error =
      poison->add_option("--error", poison_args->error_text,
                         "dead_letter.error (default: the decode error, or \"undecodable body\")");
  poison->add_option("file", poison_args->file, kFileHelp);
  poison->callback([&ctx, poison_args, error] {
    if (error->count() > 0) poison_args->error = poison_args->error_text;
    ctx.action = [poison_args] { return run_poison_record(*poison_args); };
  });
}

}  // namespace babelqueue::cli
