// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>

#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's namespace
class App;
}  // namespace CLI

/// The `babelqueue` command-line tool: one `add_*_commands` per command group registers its
/// subcommands; the chosen one leaves its work in `Context::action`, which `main` runs.
namespace babelqueue::cli {

/// Exit code: success.
inline constexpr int kExitOk = 0;
/// Exit code: the input was rejected, or the operation failed.
inline constexpr int kExitRejected = 1;
/// Exit code: bad arguments, or a file/stream could not be read or written.
inline constexpr int kExitUsage = 2;

/// A usage or I/O problem: `main` prints it and exits with `kExitUsage`.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What the parsed command line asks for.
struct Context {
  /// The selected command; returns the exit code. Empty until a command's callback ran.
  std::function<int()> action;
  /// The running executable (for locating the conformance suite next to the checkout).
  std::filesystem::path executable;
};

/// The exit code for a library error that reached `main`.
int exit_code_for(ErrorCode code) noexcept;

/// The exact bytes of `path`, or of stdin when `path` is empty or `-`.
/// @throws UsageError when the input cannot be read.
std::string read_input(const std::string& path);

/// Writes `bytes` to stdout exactly and flushes. @throws UsageError when that fails.
void write_stdout(std::string_view bytes);

/// Prints one line to stderr.
void print_error(std::string_view line);

void add_envelope_commands(CLI::App& app, Context& ctx);
void add_conformance_command(CLI::App& app, Context& ctx);
void add_bench_commands(CLI::App& app, Context& ctx);
void add_demo_command(CLI::App& app, Context& ctx);
void add_publish_command(CLI::App& app, Context& ctx);
void add_work_command(CLI::App& app, Context& ctx);
void add_queue_command(CLI::App& app, Context& ctx);
void add_dlq_command(CLI::App& app, Context& ctx);
/// `bench transport`, a subcommand of `bench` (add_bench_commands).
void add_bench_transport_command(CLI::App& bench, Context& ctx);

}  // namespace babelqueue::cli
