// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/export.hpp>

#include <functional>
#include <string_view>

/// @file
/// The one logging seam of the SDK: the App and every transport log through a `Logger`; when
/// none is given they use `default_logger`.

namespace babelqueue {

/// Severity of a log line.
enum class LogLevel { Debug, Info, Warning, Error };

/// `debug`, `info`, `warning` or `error`.
BABELQUEUE_EXPORT std::string_view to_string(LogLevel level) noexcept;

/// Receives one log line (no trailing newline). May be called from any thread of the App or a
/// transport, so it must be thread-safe.
using Logger = std::function<void(LogLevel, std::string_view)>;

/// The default logger: warnings and errors to stderr as `babelqueue: <level>: <text>`, one
/// write per line. Thread-safe.
BABELQUEUE_EXPORT void default_logger(LogLevel level, std::string_view text) noexcept;

/// Sends one line to `logger`, or to `default_logger` when `logger` is empty. Never throws: a
/// logger that throws is ignored, so logging cannot take a worker down.
BABELQUEUE_EXPORT void log_to(const Logger& logger, LogLevel level, std::string_view text) noexcept;

}  // namespace babelqueue
