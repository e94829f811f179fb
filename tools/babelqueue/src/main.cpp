// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// babelqueue: queue tools, envelope tools, the conformance runner and benchmarks over the
// public API.

#include <babelqueue/errors.hpp>

#include "cli.hpp"

#include <CLI/CLI.hpp>

#include <exception>
#include <filesystem>
#include <string>
#include <system_error>

#ifndef BABELQUEUE_VERSION
#define BABELQUEUE_VERSION "unknown"
#endif

namespace {

std::filesystem::path executable_path(const char* argv0) {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec && argv0 != nullptr) exe = std::filesystem::absolute(argv0, ec);
  return ec ? std::filesystem::path() : exe;
}

namespace cli = babelqueue::cli;

int run(int argc, char** argv) {
  CLI::App app{
      "BabelQueue: queue tools for every built transport (publish, work, queue stats, dlq),\n"
      "the order-workflow demo, envelope tools, the conformance runner and benchmarks.",
      "babelqueue"};
  app.set_version_flag("--version", std::string("babelqueue ") + BABELQUEUE_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit status: 0 ok, 1 rejected or failed, 2 usage or I/O error.\n"
      "Run 'babelqueue <command> --help' for the options of a command.");

  cli::Context ctx;
  ctx.executable = executable_path(argc > 0 ? argv[0] : nullptr);
  cli::add_envelope_commands(app, ctx);
  cli::add_conformance_command(app, ctx);
  cli::add_bench_commands(app, ctx);
  cli::add_demo_command(app, ctx);
  cli::add_bench_transport_command(*app.get_subcommand("bench"), ctx);
  cli::add_publish_command(app, ctx);
  cli::add_work_command(app, ctx);
  cli::add_queue_command(app, ctx);
  cli::add_dlq_command(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help/version to stdout, errors to stderr
    return code == 0 ? cli::kExitOk : cli::kExitUsage;
  }

  try {
    if (!ctx.action) {
      cli::print_error("babelqueue: no command given; run 'babelqueue --help'");
      return cli::kExitUsage;
    }
    return ctx.action();
  } catch (const cli::UsageError& e) {
    cli::print_error(std::string("babelqueue: ") + e.what());
    return cli::kExitUsage;
  } catch (const babelqueue::Error& e) {
    cli::print_error(std::string("babelqueue: ") + e.what());
    return cli::exit_code_for(e.code());
  } catch (const std::exception& e) {
    cli::print_error(std::string("babelqueue: unexpected error: ") + e.what());
    return cli::kExitRejected;
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // e.g. std::bad_alloc while building the parser
    cli::print_error(std::string("babelqueue: unexpected error: ") + e.what());
  } catch (...) {
    cli::print_error("babelqueue: unexpected error");
  }
  return cli::kExitRejected;
}
