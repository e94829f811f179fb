// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/log.hpp>

#include <exception>
#include <functional>
#include <string>
#include <string_view>

/// @file
/// Transport kit: the OB-6 hook of a schema-version gate (`on_schema_version_rejected` of a
/// transport's options), called so that a throwing hook never breaks a `pop`.

namespace babelqueue::spi {

/// The hook's type in every transport's options: `(version, queue)`.
using SchemaVersionRejected = std::function<void(std::string_view version, std::string_view queue)>;

/// Calls `hook(version, queue)` when it is set; an exception from it is caught and logged to
/// `logger` as an error, "<owner>: on_schema_version_rejected threw: <what>".
///
/// Thread-safety: as safe as `hook` and `logger` are.
inline void notify_schema_version_rejected(const SchemaVersionRejected& hook,
                                           std::string_view version, std::string_view queue,
                                           const Logger& logger, std::string_view owner) {
  if (!hook) return;
  try {
    hook(version, queue);
  } catch (const std::exception& e) {
    log_to(logger, LogLevel::Error,
           std::string(owner) + ": on_schema_version_rejected threw: " + e.what());
  } catch (...) {
    log_to(logger, LogLevel::Error,
           std::string(owner) + ": on_schema_version_rejected threw an unknown exception");
  }
}

}  // namespace babelqueue::spi
