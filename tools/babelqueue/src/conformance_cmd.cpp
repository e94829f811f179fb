// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// babelqueue conformance [--dir DIR] [--url URL]

#include "cli.hpp"
#include "runner.hpp"

#include <babelqueue/open.hpp>
#include <babelqueue/transport.hpp>

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
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

std::string_view label(conformance::Verdict verdict) {
  switch (verdict) {
    case conformance::Verdict::Passed:
      return "PASS ";
    case conformance::Verdict::Skipped:
      return "SKIP ";
    case conformance::Verdict::Failed:
      break;
  }
  return "FAIL ";
}

int run_conformance(const std::string& dir, const std::string& url, const fs::path& executable) {
  const fs::path suite = locate_suite(dir, executable);
  if (!has_manifest(suite)) {
    throw UsageError("no manifest.json in " + suite.string() + " (not a conformance suite)");
  }
  const std::shared_ptr<Transport> transport = url.empty() ? nullptr : open_transport(url);
  const conformance::Report report = conformance::run(suite, transport);
  if (transport) transport->close();
  std::string out;
  for (const conformance::CaseResult& c : report.cases) {
    out += label(c.verdict);
    out += c.block + "/" + c.name;
    if (!c.passed()) out += ": " + c.message;
    out += '\n';
  }
  out +=
      std::to_string(report.passed()) + " passed, " + std::to_string(report.failed()) + " failed";
  if (report.skipped() > 0) out += ", " + std::to_string(report.skipped()) + " skipped";
  out += '\n';
  write_stdout(out);
  return report.ok() ? kExitOk : kExitRejected;
}

}  // namespace

void add_conformance_command(CLI::App& app, Context& ctx) {
  auto dir = std::make_shared<std::string>();
  auto url = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "conformance",
      "Run the shared cross-SDK conformance suite (every manifest block) against this SDK.\n"
      "Prints PASS/FAIL/SKIP per case and a final 'N passed, M failed' line (', K skipped' when\n"
      "cases were skipped); exit 1 on any failure. The transport blocks (redis) run live\n"
      "against --url; without it they are skipped.");
  cmd->add_option("--dir", *dir,
                  "Suite directory holding manifest.json (default: $BABELQUEUE_CONFORMANCE_DIR, "
                  "../shared/conformance, the checkout's ../shared/conformance)");
  cmd->add_option("--url", *url,
                  "Transport to run the transport blocks against, e.g. redis://127.0.0.1:6379/0 "
                  "or memory:// (they publish to and drain babelqueue-conformance-<random>)");
  cmd->callback([&ctx, dir, url] {
    ctx.action = [dir, url, exe = ctx.executable] { return run_conformance(*dir, *url, exe); };
  });
}

}  // namespace babelqueue::cli
