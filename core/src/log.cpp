// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors

#include <babelqueue/log.hpp>

#include <cstdio>
#include <string>

namespace babelqueue {

std::string_view to_string(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::Debug:
      return "debug";
    case LogLevel::Info:
      return "info";
    case LogLevel::Warning:
      return "warning";
    case LogLevel::Error:
      return "error";
  }
  return "log";
}

void default_logger(LogLevel level, std::string_view text) noexcept {
  if (level < LogLevel::Warning) return;
  try {
    std::string line = "babelqueue: ";
    line += to_string(level);
    line += ": ";
    line += text;
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stderr);  // one write: lines never interleave
    std::fflush(stderr);
  } catch (...) {  // std::bad_alloc: drop the line rather than the worker
  }
}

void log_to(const Logger& logger, LogLevel level, std::string_view text) noexcept {
  if (!logger) {
    default_logger(level, text);
    return;
  }
  try {
    logger(level, text);
  } catch (...) {  // a logger must never take the worker down
  }
}

}  // namespace babelqueue
