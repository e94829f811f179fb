// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/export.hpp>
#include <babelqueue/open.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// Transport kit: how a transport component makes its URL schemes available to
/// `babelqueue::open_transport` and to the `babelqueue` CLI.
///
/// A transport defines, in one source file of its library,
///
///     BABELQUEUE_REGISTER_TRANSPORT(redis, make_redis_factory());
///
/// and its CMake target carries `babelqueue_add_transport(...)`'s link option that keeps that
/// object file in a static link (linkers drop object files nobody references).

namespace babelqueue::spi {

/// A transport-specific command-line flag of the `babelqueue` CLI. The CLI offers
/// `--<name> VALUE` on every command that takes `--url` and appends `<query_key>=VALUE` to the
/// URL's query, so the transport reads it like any URL option.
struct TransportFlag {
  /// Flag name without dashes, e.g. "layout".
  std::string name;
  /// The URL query option it sets, e.g. "layout".
  std::string query_key;
  /// One line for `--help`.
  std::string help;
};

/// What a transport component registers.
struct TransportFactory {
  /// Component (and CMake option) name, e.g. "redis".
  std::string component;
  /// URL schemes it opens, lower-case, e.g. {"redis", "unix"}.
  std::vector<std::string> schemes;
  /// One line for `babelqueue --help` and error texts, e.g. "Redis >= 6.2 (both layouts)".
  std::string summary;
  /// Transport-specific CLI flags (mapped to URL query options).
  std::vector<TransportFlag> flags;
  /// Opens a transport for a URL with one of `schemes`; does no I/O (connects lazily).
  /// @throws ConfigError for a URL it cannot use.
  std::function<std::shared_ptr<Transport>(std::string_view url, const OpenOptions& options)> open;
};

/// Adds `factory` to the process-wide registry; returns true (for use in a static initializer).
/// A scheme registered twice keeps the first factory and logs a warning.
BABELQUEUE_EXPORT bool register_transport(TransportFactory factory);

/// Every registered factory, in registration order.
BABELQUEUE_EXPORT std::vector<TransportFactory> registered_transports();

/// A transport this source tree knows of, built into this build or not (from
/// `babelqueue_add_transport`), for the "how to get it" part of an unknown-scheme error.
struct KnownTransport {
  std::string component;
  std::vector<std::string> schemes;
  /// e.g. "-DBABELQUEUE_WITH_AMQP=ON".
  std::string cmake_option;
  /// The Debian development package(s) it needs, e.g. "librabbitmq-dev".
  std::string debian_packages;
  /// True when this build has it.
  bool built = false;
};

/// The transports of this source tree (generated at configure time).
BABELQUEUE_EXPORT std::vector<KnownTransport> known_transports();

}  // namespace babelqueue::spi

/// Registers a transport factory when the library is loaded. `name` is the component name; the
/// symbol `babelqueue_transport_<name>` is what the component's link option keeps alive.
#define BABELQUEUE_REGISTER_TRANSPORT(name, factory)                    \
  extern "C" BABELQUEUE_EXPORT const bool babelqueue_transport_##name;  \
  extern "C" BABELQUEUE_EXPORT const bool babelqueue_transport_##name = \
      ::babelqueue::spi::register_transport(factory)
