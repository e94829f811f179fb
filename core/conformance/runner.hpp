// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

/// @file
/// The shared cross-SDK conformance suite (`manifest.json` + `fixtures/`) run against this SDK's
/// public API. Used by `babelqueue conformance` and by the unit tests; not installed.

namespace babelqueue::conformance {

/// The verdict of one case: one envelope case, one vector, one projected entry, ...
///
/// Thread-safety: a value type.
struct CaseResult {
  std::string block;    ///< top-level manifest block, e.g. `cases`, `sqs`, `roundtrip`
  std::string name;     ///< the case within the block, e.g. `schema_version_gate[06] "2" -> reject`
  bool passed = false;  ///< true when the SDK satisfied the case
  std::string message;  ///< why it failed; empty when it passed
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
  /// True when at least one case ran and none failed.
  [[nodiscard]] bool ok() const noexcept { return !cases.empty() && failed() == 0; }
};

/// Runs every block of `<dir>/manifest.json` against the SDK. Each case counts once: one per
/// envelope case, idempotency sequence, projected property/header/attribute, reconciliation or
/// gate vector, schema case, roundtrip/data_shape/forbidden_keys case, plus the dedupe key and the
/// Redis payload identity. A top-level block (or a sub-block of a known block) this runner does
/// not implement is reported as a FAILED case, so a newer manifest cannot pass unnoticed; a
/// malformed case or an unexpected exception fails that case only.
/// @throws babelqueue::ConfigError when `dir/manifest.json` cannot be read or is not a JSON object.
[[nodiscard]] Report run(const std::filesystem::path& dir);

}  // namespace babelqueue::conformance
