// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The runner: reads the manifest and hands each top-level block to the family that registered
// it (blocks/blocks.hpp); a block no family registered fails.

#include "runner.hpp"

#include "blocks/blocks.hpp"
#include "suite.hpp"

#include <babelqueue/errors.hpp>
#include <babelqueue/json.hpp>

#include <algorithm>
#include <exception>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

namespace babelqueue::conformance {

namespace {

using namespace detail;  // NOLINT(google-build-using-namespace): the runner's own internals

std::size_t count(const Report& report, Verdict verdict) {
  return static_cast<std::size_t>(
      std::count_if(report.cases.begin(), report.cases.end(),
                    [verdict](const CaseResult& c) { return c.verdict == verdict; }));
}

const Registry& registry() {
  static const Registry every_block = [] {
    Registry r;
    register_envelope_blocks(r);
    register_idempotency_block(r);
    register_payload_schema_blocks(r);
    register_amqp_block(r);
    register_sqs_block(r);
    register_azureservicebus_block(r);
    register_pulsar_block(r);
    register_kafka_block(r);
    register_artemis_block(r);
    register_transport_blocks(r);
    return r;
  }();
  return every_block;
}

Json read_manifest(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "manifest.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("conformance: cannot read " + path.string());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw ConfigError("conformance: cannot read " + path.string());
  auto manifest = Json::try_parse(text);
  if (!manifest) {
    throw ConfigError("conformance: " + path.string() +
                      " is not valid JSON: " + manifest.error().what());
  }
  if (!manifest->is_object()) {
    throw ConfigError("conformance: " + path.string() + " is not a JSON object");
  }
  return std::move(manifest).value();
}

// Runs the blocks of the manifest in `dir`; `transport_only` leaves out the SDK blocks and the
// blocks no family registered.
Report run_blocks(const std::filesystem::path& dir, std::shared_ptr<Transport> transport,
                  bool transport_only) {
  const Json manifest = read_manifest(dir);
  Runner r(dir, std::move(transport));
  for (const auto& [key, value] : manifest.as_object()) {
    if (key == "description") continue;
    if (key == "schema_version") {
      if (!value.is_number() || value.as_int64() != 1) {
        r.add_failure("manifest", "schema_version",
                      "manifest schema_version " + show(value) + " is not supported (runner: 1)");
      }
      continue;
    }
    const BlockEntry* entry = registry().find(key);
    if (transport_only && (entry == nullptr || entry->kind != BlockKind::Transport)) continue;
    if (entry == nullptr) {
      r.add_failure(key, "(block)", "block " + key + " not implemented");
      continue;
    }
    try {
      entry->handler(r, key, value);
    } catch (const CaseFailure& f) {
      r.add_failure(key, "(block)", f.message);
    } catch (const std::exception& e) {
      r.add_failure(key, "(block)", std::string("unexpected exception: ") + e.what());
    }
  }
  return std::move(r.report);
}

}  // namespace

std::size_t Report::passed() const noexcept {
  return count(*this, Verdict::Passed);
}

std::size_t Report::failed() const noexcept {
  return count(*this, Verdict::Failed);
}

std::size_t Report::skipped() const noexcept {
  return count(*this, Verdict::Skipped);
}

Report run(const std::filesystem::path& dir, std::shared_ptr<Transport> transport) {
  return run_blocks(dir, std::move(transport), false);
}

Report run_transport_blocks(const std::filesystem::path& dir,
                            std::shared_ptr<Transport> transport) {
  if (!transport) throw ConfigError("conformance: the transport blocks need a transport");
  return run_blocks(dir, std::move(transport), true);
}

}  // namespace babelqueue::conformance
