// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// What every block family of the runner shares: case recording, the checks and their messages,
// manifest access, and the registry the families put their manifest blocks in.

#include "runner.hpp"

#include <babelqueue/envelope.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/transport.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue::conformance::detail {

// ---- Failing a case ----

// Thrown by the checks; Runner::add turns it into a failed case.
struct CaseFailure {
  std::string message;
};

[[noreturn]] void fail(std::string message);

// Several independent checks of one case: every problem is reported, not just the first.
class Problems {
 public:
  void add(std::string problem) { list_.push_back(std::move(problem)); }
  void check(bool ok, const std::string& problem) {
    if (!ok) add(problem);
  }
  // Fails the case with every problem, when there is one.
  void finish() const;
  // Adds `problem` and fails the case with every problem so far.
  [[noreturn]] void fail_with(std::string problem);

 private:
  [[nodiscard]] std::string joined() const;

  std::vector<std::string> list_;
};

// ---- Display (messages stay on one line and in ASCII) ----

// `s` as a double-quoted, ASCII-only string: JSON escapes, \uXXXX for non-ASCII, \xHH for bytes
// that are not UTF-8.
std::string quote(std::string_view s);
// A JSON value as compact, ASCII-only text.
std::string show(const Json& v);
std::string show_opt(const std::optional<std::string>& s);
void expect_string(const std::optional<std::string>& got, const Json& want,
                   const std::string& what);

// ---- Manifest access (a malformed manifest fails the case that reads it) ----

const Json& member(const Json& obj, std::string_view key);
const std::string& string_member(const Json& obj, std::string_view key);
bool bool_member(const Json& obj, std::string_view key, std::optional<bool> fallback = {});
std::int64_t int_value(const Json& v, std::string_view key);
std::int64_t int_member(const Json& obj, std::string_view key);
std::optional<std::int64_t> nullable_int_member(const Json& obj, std::string_view key);
const JsonArray& array_member(const Json& obj, std::string_view key);
const JsonObject& object_member(const Json& obj, std::string_view key);
// Fails on a member this runner does not know: a newer manifest may have given it a meaning.
void known_members(const Json& obj, std::initializer_list<std::string_view> known);

// Which ENV-29 check `accepts()` failed, in words.
std::string rejection(const Envelope& env);

// ---- The runner ----

class Runner {
 public:
  Runner(std::filesystem::path dir, std::shared_ptr<Transport> transport);

  Report report;

  // Runs one case and records its verdict.
  void add(const std::string& block, std::string name, const std::function<void()>& body);

  // A case that needs a live transport: run against the run's transport, or recorded as
  // skipped when the run has none.
  void live(const std::string& block, std::string name,
            const std::function<void(Transport&)>& body);

  // Runs a precondition of several cases; only a failure is recorded. True when it held.
  bool guard(const std::string& block, std::string name, const std::function<void()>& body);

  void add_failure(const std::string& block, std::string name, std::string message);

  // Records a failed case for every member of `block_value` this runner does not implement.
  // `path` names `block_value` inside the top-level block (empty for the block itself).
  void sub_blocks(const std::string& block, const std::string& path, const Json& block_value,
                  const std::vector<std::string_view>& known);

  // The exact bytes of a fixture named relative to the suite directory (cached).
  const std::string& fixture(const Json& obj, std::string_view key);

  // A decoded, accepted fixture.
  Envelope accepted(const Json& obj, std::string_view key,
                    std::vector<std::string>* warnings = nullptr);

 private:
  std::filesystem::path dir_;
  std::shared_ptr<Transport> transport_;
  std::map<std::string, std::string, std::less<>> fixtures_;
};

// Iterates the array `key` of `block_value`; a missing or malformed array fails one case.
void each_case(Runner& r, const std::string& block, const std::string& prefix,
               const Json& block_value, std::string_view key,
               const std::function<void(std::size_t, const Json&)>& body);

// The case's `name`, else `#<index>`.
std::string case_name(const Json& c, std::size_t index);

// ---- The registry of manifest blocks ----

// SDK blocks check pure code; transport blocks need a live transport (Runner::live).
enum class BlockKind { Sdk, Transport };

using BlockHandler = std::function<void(Runner&, const std::string& block, const Json& value)>;

struct BlockEntry {
  BlockKind kind = BlockKind::Sdk;
  BlockHandler handler;
};

class Registry {
 public:
  // Registers the handler of the manifest block `block`.
  // @throws std::logic_error when another family registered `block` already.
  void add(std::string block, BlockKind kind, BlockHandler handler);
  // The entry of `block`, or nullptr when no family handles it.
  [[nodiscard]] const BlockEntry* find(std::string_view block) const;

 private:
  std::map<std::string, BlockEntry, std::less<>> entries_;
};

}  // namespace babelqueue::conformance::detail
