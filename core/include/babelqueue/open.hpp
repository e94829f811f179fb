// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/export.hpp>
#include <babelqueue/log.hpp>
#include <babelqueue/transport.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// Opening a transport by URL: `open_transport("redis://127.0.0.1:6379/0")`. Every transport
/// component linked into the program registers its schemes (`memory://` is always there).

namespace babelqueue {

/// Settings every transport takes beside its URL.
struct OpenOptions {
  /// Where the transport logs; empty = `default_logger`.
  Logger logger = {};
};

/// Opens a transport for `url` with the factory registered for its scheme. No I/O happens here:
/// transports connect lazily.
/// @throws ConfigError for a URL without a scheme, a URL the transport rejects, or a scheme no
/// linked component registered; the latter names the schemes this build has and, when the
/// source tree has a transport for it, the component to link or the CMake option and Debian
/// package that add it. No error text contains a password.
/// Thread-safety: safe from any thread.
BABELQUEUE_EXPORT std::shared_ptr<Transport> open_transport(std::string_view url,
                                                            const OpenOptions& options = {});

/// The schemes `open_transport` accepts in this program, sorted.
BABELQUEUE_EXPORT std::vector<std::string> available_schemes();

}  // namespace babelqueue
