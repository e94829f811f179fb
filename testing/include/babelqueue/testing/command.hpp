// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// Testing kit: runs a peer client or tool (a reference SDK, kcat, curl, the CLI) as a
/// subprocess of a test.

namespace babelqueue::testing {

// What a finished command left: its exit status (128 + N when signal N killed it) and its
// stdout and stderr, interleaved as it wrote them.
struct CommandResult {
  int exit_code = 0;
  std::string output;
};

// Runs argv[0] (an absolute path) with `env` added to (and overriding) the test process's
// environment, writes `input` to its stdin, and waits until it exits. Throws std::system_error
// when it cannot be started. `input` must fit a pipe buffer (64 KiB): it is written before the
// output is read.
CommandResult run_command(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env = {},
                          std::string_view input = {});

// What a broker distribution script (a `<broker>_dist.sh DIR` that fetches and unpacks a broker
// into DIR, cached, and prints its directory as the last line of its output) left: the
// directory, or why there is none (the script's output, or why it could not run).
struct Distribution {
  std::optional<std::string> dir;
  std::string reason;
};

// Runs `bash script dir` and reads its last output line. Fixtures call it once per process and
// keep the result (a function-local static), so a broker restarted by a test does not fetch
// again; never throws.
Distribution fetch_distribution(std::string_view script, std::string_view dir);

// The Java and the fetched distribution a broker that runs on a JVM needs (Kafka, Artemis,
// Pulsar, ElasticMQ). The constructor finds `java` (`configured_java`: CMake's find_program()
// result, else PATH) and runs `script` into `dist_dir` once (fetch_distribution); fixtures keep
// one in a function-local static, so a restarted broker does not fetch again. `what` names the
// broker in the reason, e.g. "Kafka test broker".
class JvmDistribution {
 public:
  JvmDistribution(std::string_view what, std::string_view configured_java, std::string_view script,
                  std::string_view dist_dir);

  // Why the broker cannot be started here (no java, the fetch failed), nullopt when it can.
  const std::optional<std::string>& unavailable() const { return unavailable_; }
  // Throws std::runtime_error with unavailable()'s reason when set.
  void require() const;
  // The java executable and the distribution's directory; both require().
  const std::string& java() const;
  const std::string& dir() const;

 private:
  std::optional<std::string> java_;
  Distribution dist_;
  std::optional<std::string> unavailable_;
};

// What a peer client prints for a test to read: the lines of `text` that start with `prefix`,
// without it.
inline std::vector<std::string> tagged_lines(const std::string& text, std::string_view prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(prefix)) out.push_back(line.substr(prefix.size()));
  }
  return out;
}

// Bytes as lowercase hex, and back: how bodies and keys cross a peer's command line and output
// unchanged.
inline std::string to_hex(std::string_view bytes) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0x0F]);
  }
  return out;
}
inline std::string from_hex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// Prints a CommandResult in a failed assertion (found by argument-dependent lookup).
inline std::ostream& operator<<(std::ostream& os, const CommandResult& r) {
  return os << "exit " << r.exit_code << "\n--- output ---\n" << r.output;
}

}  // namespace babelqueue::testing
