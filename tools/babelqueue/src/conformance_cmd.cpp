// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// babelqueue conformance [--dir DIR]

#include "cli.hpp"
#include "runner.hpp"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#ifndef BABELQUEUE_DEFAULT_CONFORMANCE_DIR
#define BABELQUEUE_DEFAULT_CONFORMANCE_DIR ""
#endif

namespace babelqueue::cli {
namespace {

namespace fs = std::filesystem;

bool has_manifest(const fs::path& dir) {
  std::error_code ec;
  return !dir.empty() && fs::is_regular_file(dir / "manifest.json", ec);
}

// --dir, else $BABELQUEUE_CONFORMANCE_DIR, else ../shared/conformance from the current directory,
// else <ancestor>/shared/conformance of the executable's directory (a build tree inside the
// checkout), else the path configured at build time.
fs::path locate_suite(const std::string& dir, const fs::path& executable) {
  if (!dir.empty()) return dir;
  if (const char* env = std::getenv("BABELQUEUE_CONFORMANCE_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  if (fs::path p = fs::path("..") / "shared" / "conformance"; has_manifest(p)) return p;
  if (!executable.empty()) {
    for (fs::path at = executable.parent_path(); !at.empty(); at = at.parent_path()) {
      if (fs::path p = at / "shared" / "conformance"; has_manifest(p)) return p;
      if (at == at.root_path()) break;
    }
  }
  if (fs::path p = BABELQUEUE_DEFAULT_CONFORMANCE_DIR; has_manifest(p)) return p;
  throw UsageError(
      "cannot find the conformance suite (no manifest.json in ../shared/conformance, next to the "
      "executable's checkout, or at the configured " +
      std::string(BABELQUEUE_DEFAULT_CONFORMANCE_DIR) +
      "); pass --dir DIR or set BABELQUEUE_CONFORMANCE_DIR");
}

int run_conformance(const std::string& dir, const fs::path& executable) {
  const fs::path suite = locate_suite(dir, executable);
  if (!has_manifest(suite)) {
    throw UsageError("no manifest.json in " + suite.string() + " (not a conformance suite)");
  }
  const conformance::Report report = conformance::run(suite);
  std::string out;
  for (const conformance::CaseResult& c : report.cases) {
    out += c.passed ? "PASS " : "FAIL ";
    out += c.block + "/" + c.name;
    if (!c.passed) out += ": " + c.message;
    out += '\n';
  }
  out +=
      std::to_string(report.passed()) + " passed, " + std::to_string(report.failed()) + " failed\n";
  write_stdout(out);
  return report.ok() ? kExitOk : kExitRejected;
}

}  // namespace

void add_conformance_command(CLI::App& app, Context& ctx) {
  auto dir = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "conformance",
      "Run the shared cross-SDK conformance suite (every manifest block) against this SDK.\n"
      "Prints PASS/FAIL per case and a final 'N passed, M failed' line; exit 1 on any failure.");
  cmd->add_option("--dir", *dir,
                  "Suite directory holding manifest.json (default: $BABELQUEUE_CONFORMANCE_DIR, "
                  "../shared/conformance, the checkout's ../shared/conformance)");
  cmd->callback([&ctx, dir] {
    ctx.action = [dir, exe = ctx.executable] { return run_conformance(*dir, exe); };
  });
}

}  // namespace babelqueue::cli
