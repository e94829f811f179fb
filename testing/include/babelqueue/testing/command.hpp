// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <map>
#include <ostream>
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

// Prints a CommandResult in a failed assertion (found by argument-dependent lookup).
inline std::ostream& operator<<(std::ostream& os, const CommandResult& r) {
  return os << "exit " << r.exit_code << "\n--- output ---\n" << r.output;
}

}  // namespace babelqueue::testing
