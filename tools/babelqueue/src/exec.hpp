// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/transport.hpp>

#include <string>
#include <string_view>

namespace babelqueue::cli {

/// The prefix of the environment variables that carry a delivery's headers to `--exec`.
inline constexpr std::string_view kHeaderEnvPrefix = "BABELQUEUE_HEADER_";

/// The environment variable for header `name`: `BABELQUEUE_HEADER_` + `name` upper-cased, every
/// byte outside `[A-Z0-9]` replaced by `_` (`traceparent` -> `BABELQUEUE_HEADER_TRACEPARENT`).
std::string header_variable(std::string_view name);

/// Runs `command` with `/bin/sh -c`: `input` on its stdin, this process's stdout and stderr, and
/// this process's environment without any `BABELQUEUE_HEADER_*` variable plus one per header
/// (`header_variable`). Where two header names give the same variable, the first name in byte
/// order wins; a value with a NUL byte is not passed. OK iff the command exits with status 0;
/// otherwise an ErrorCode::Handler error saying how it ended.
///
/// Thread-safety: safe from any thread (the pipes are close-on-exec, so concurrent commands do
/// not inherit each other's).
Status run_command(const std::string& command, std::string_view input, const Headers& headers);

}  // namespace babelqueue::cli
