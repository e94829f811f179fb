// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// babelqueue publish: one new envelope to a queue of any transport, through the App.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/json.hpp>

#include "cli.hpp"
#include "transport_args.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace babelqueue::cli {
namespace {

struct PublishArgs {
  TransportArgs transport;
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
  // The URL first: an unbuilt scheme is the one thing to fix before anything else.
  const OpenedTransport opened = open_transport_of(a.transport);
  const std::string queue = checked_queue(a.queue);
  Json data = parse_data(a);
  const Headers headers = parse_headers(a.headers);
  const bool delayed = a.delay_opt->count() > 0;
  if (delayed && !headers.empty()) {
    throw UsageError(
        "--header cannot be combined with --delay: a delayed publish carries no "
        "headers");
  }
  std::string id;
  if (delayed) {
    auto& publisher =
        require_capability<DelayedPublisher>(opened, "publish --delay", "publish with a delay");
    const Envelope env = make(a.urn, std::move(data), {.queue = queue});
    const auto delay =
        std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(a.delay_seconds * 1000.0)));
    publisher.publish_delayed(queue, encode(env), delay).throw_if_error();
    id = env.meta().id;
  } else {
    if (!headers.empty() && capability<HeaderPublisher>(*opened.transport) == nullptr) {
      print_error("warning: the " + opened.component +
                  " transport carries no headers; publishing the envelope without them");
    }
    App app(opened.transport, AppOptions{.default_queue = queue});
    id = app.publish_with_headers(a.urn, std::move(data), headers, {.queue = queue});
  }
  opened.transport->close();
  write_stdout(id + "\n");
  return kExitOk;
}

}  // namespace

void add_publish_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<PublishArgs>();
  CLI::App* cmd =
      app.add_subcommand("publish", "Publish one new envelope to a queue and print its meta.id.");
  add_transport_options(cmd, args->transport);
  cmd->add_option("--queue", args->queue, "Queue to publish to (required)");
  args->delay_opt = cmd->add_option("--delay", args->delay_seconds,
                                    "Deliver after SECONDS (a transport that can delay)")
                        ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--header", args->headers,
                  "Out-of-band header KEY=VALUE, repeatable (a transport that carries headers)")
      ->allow_extra_args(false);
  cmd->add_option("urn", args->urn, "Message URN, e.g. urn:babel:orders:created")->required();
  args->data_opt = cmd->add_option("data", args->data, "Payload: a JSON object (default {})");
  cmd->callback([&ctx, args] { ctx.action = [args] { return run_publish(*args); }; });
}

}  // namespace babelqueue::cli
