// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/transport.hpp>

#include "cli.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's namespace
class Option;
}  // namespace CLI

/// What every command that opens a transport shares: `--url`, the transports' own flags, and
/// the capability checks.
namespace babelqueue::cli {

/// The environment variable `--url` defaults to.
inline constexpr const char* kUrlEnv = "BABELQUEUE_URL";

/// `--url` and the transport flags of one command, as parsed.
///
/// Thread-safety: a value filled by the parser; not thread-safe.
struct TransportArgs {
  std::string url;
  /// One entry per transport flag name (without dashes): its value and the option that sets it.
  std::map<std::string, std::pair<std::string, CLI::Option*>, std::less<>> flags;
};

/// Adds `--url URL` (default `$BABELQUEUE_URL`) and, for every flag a registered transport
/// declares (`spi::TransportFactory::flags`), `--<name> VALUE`. `args` must outlive `cmd`.
void add_transport_options(CLI::App* cmd, TransportArgs& args);

/// A transport opened from the command line.
///
/// Thread-safety: a value type; the transport itself states its own.
struct OpenedTransport {
  std::shared_ptr<Transport> transport;
  /// The component that serves the URL's scheme, e.g. "memory".
  std::string component;
  /// The URL the transport was opened with (transport flags in its query), password redacted.
  std::string redacted_url;
};

/// Appends each given transport flag to the URL's query as `<query_key>=VALUE` and opens it with
/// `babelqueue::open_transport` (no I/O). Ignores SIGPIPE from then on: a broker or an `--exec`
/// command that closes its end must give EPIPE errors, not end the process.
/// @throws UsageError without a URL, or for a flag that the URL's transport does not declare.
/// @throws ConfigError (from `open_transport`) for an unknown scheme or a URL the transport
/// rejects.
OpenedTransport open_transport_of(const TransportArgs& args);

/// The capability `T` of `opened`. @throws UsageError "<command>: the <component> transport
/// cannot <what>" when the transport lacks it.
template <class T>
T& require_capability(const OpenedTransport& opened, std::string_view command,
                      std::string_view what) {
  T* found = capability<T>(*opened.transport);
  if (found == nullptr) {
    throw UsageError(std::string(command) + ": the " + opened.component + " transport cannot " +
                     std::string(what));
  }
  return *found;
}

/// Sends what a Flusher transport still batches (pending acknowledgements); a failure is printed,
/// because `close()` drops it silently. False when it failed; true for a transport that is no
/// Flusher.
bool flush_pending(Transport& transport);

/// `queue` when it names a queue. @throws UsageError "--queue QUEUE is required" otherwise.
std::string checked_queue(const std::string& queue);

/// The dead-letter queue of `queue` on `transport` (RT-7): its DeadLetterNaming, else QUEUE.dlq.
std::string dead_letter_queue_of(Transport& transport, std::string_view queue);

}  // namespace babelqueue::cli
