// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "cli.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace babelqueue::cli {

int exit_code_for(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::EmptyUrn:
    case ErrorCode::Config:
    case ErrorCode::Usage:
      return kExitUsage;
    case ErrorCode::Decode:
    case ErrorCode::Encode:
    case ErrorCode::InvalidPayload:
    case ErrorCode::Transport:
    case ErrorCode::Timeout:
    case ErrorCode::Closed:
    case ErrorCode::ReleaseUnsupported:
    case ErrorCode::DelayUnsupported:
    case ErrorCode::Randomness:
    case ErrorCode::Cancelled:
    case ErrorCode::UnknownUrn:
    case ErrorCode::Handler:
    case ErrorCode::StaleDelivery:
      return kExitRejected;
  }
  return kExitRejected;
}

std::string read_input(const std::string& path) {
  if (path.empty() || path == "-") {
    std::string bytes;
    char buffer[65536];
    while (true) {
      const std::size_t n = std::fread(buffer, 1, sizeof buffer, stdin);
      bytes.append(buffer, n);
      if (n < sizeof buffer) break;
    }
    if (std::ferror(stdin) != 0)
      throw UsageError("cannot read stdin: " + std::string(std::strerror(errno)));
    return bytes;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw UsageError("cannot read " + path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read " + path + ": " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw UsageError("cannot read " + path);
  return bytes;
}

void write_stdout(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() ||
      std::fflush(stdout) != 0) {
    throw UsageError("cannot write to stdout: " + std::string(std::strerror(errno)));
  }
}

void print_error(std::string_view line) {
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fputc('\n', stderr);
}

}  // namespace babelqueue::cli
