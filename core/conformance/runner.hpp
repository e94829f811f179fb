// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/transport.hpp>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

/// @file
/// The shared cross-SDK conformance suite (`manifest.json` + `fixtures/`) run against this SDK's
/// public API. Used by `babelqueue conformance` and by the tests; not installed.
///
/// Two kinds of manifest blocks: the SDK blocks (envelope cases, idempotency, payload schema,
/// the broker bindings, ...) check pure code; the transport blocks (today `redis`: payload
/// identity of what a transport stores and gives back) need a live transport and run through
/// `Transport::publish`/`pop`/`ack` and its capabilities. Without a transport, the cases of the
/// transport blocks are reported as skipped, never as passed.
///
/// Thread-safety: runs are independent and may run concurrently; a run uses its transport from
/// the calling thread only.

namespace babelqueue::conformance {

/// What became of one case.
enum class Verdict { Passed, Failed, Skipped };

/// The verdict of one case: one envelope case, one vector, one projected entry, ...
///
/// Thread-safety: a value type.
struct CaseResult {
  std::string block;                  ///< top-level manifest block, e.g. `cases`, `sqs`, `redis`
  std::string name;                   ///< the case, e.g. `schema_version_gate[06] "2" -> reject`
  Verdict verdict = Verdict::Failed;  ///< passed, failed or skipped
  std::string message;                ///< why it failed or was skipped; empty when it passed

  [[nodiscard]] bool passed() const noexcept { return verdict == Verdict::Passed; }
  [[nodiscard]] bool skipped() const noexcept { return verdict == Verdict::Skipped; }
};

/// Every case of a run, in manifest order.
///
/// Thread-safety: a value type.
struct Report {
  std::vector<CaseResult> cases;

  /// The number of passed cases.
  [[nodiscard]] std::size_t passed() const noexcept;
  /// The number of failed cases.
  [[nodiscard]] std::size_t failed() const noexcept;
  /// The number of skipped cases (transport blocks without a transport).
  [[nodiscard]] std::size_t skipped() const noexcept;
  /// True when at least one case passed and none failed.
  [[nodiscard]] bool ok() const noexcept { return passed() > 0 && failed() == 0; }
};

/// Runs every block of `<dir>/manifest.json`. Each case counts once: one per envelope case,
/// idempotency sequence, projected property/header/attribute, reconciliation or gate vector,
/// schema case, roundtrip/data_shape/forbidden_keys case, plus the dedupe key and each transport
/// case. The transport blocks run live against `transport` (see `run_transport_blocks`); when it
/// is null their cases are skipped. A top-level block (or a sub-block of a known block) this
/// runner does not implement is reported as a FAILED case, so a newer manifest cannot pass
/// unnoticed; a malformed case or an unexpected exception fails that case only.
/// @throws babelqueue::ConfigError when `dir/manifest.json` cannot be read or is not a JSON object.
[[nodiscard]] Report run(const std::filesystem::path& dir,
                         std::shared_ptr<Transport> transport = nullptr);

/// Runs only the transport blocks of `<dir>/manifest.json`, live against `transport` (e.g. one
/// from `babelqueue::open_transport(url)`), for a transport's integration tests. The `redis`
/// block's `payload_identity`: the fixture is published (through `HeaderPublisher` when the case
/// names `headers`) to a fresh queue `babelqueue-conformance-<random hex>`; what the transport
/// stores is read back with `Inspector::peek` when it has that capability; the message is
/// reserved with `pop` and must carry exactly the fixture's bytes (no wrapping, no added field,
/// not flagged as poison) and the headers; it is acknowledged (and `Flusher::flush`ed), after
/// which an `Inspector` must show the queue empty. Whatever a failed case left in its queue is
/// popped and acknowledged. The transport stays open.
/// @throws babelqueue::ConfigError when `transport` is null, or as `run`.
[[nodiscard]] Report run_transport_blocks(const std::filesystem::path& dir,
                                          std::shared_ptr<Transport> transport);

}  // namespace babelqueue::conformance
