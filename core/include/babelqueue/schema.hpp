// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/app.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/errors.hpp>
#include <babelqueue/export.hpp>
#include <babelqueue/json.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// Optional per-URN payload schema validation (ADR-0024, 02-runtime HLP-10..HLP-14): a small,
/// dependency-free subset of JSON Schema draft-07 applied to an envelope's `data` block.

namespace babelqueue::schema {

namespace detail {
struct Node;
}  // namespace detail

/// A parsed payload schema: the HLP-11 keyword subset with the HLP-12 semantics.
///
/// Recognised keywords: `type` (a single string: object, array, string, integer, number,
/// boolean, null), `required`, `properties`, `additionalProperties` (boolean only), `items` (one
/// schema), `enum`, `const`, `minLength` and `minimum`. Everything else (`maxLength`, `pattern`,
/// `format`, `$ref`, type arrays, `x-gdpr-sensitive`, ...) is ignored and never an error.
/// Numbers are compared exactly, from their lexemes, at any magnitude.
///
/// Thread-safety: immutable after construction; copies share the parsed tree and may be used
/// from any number of threads at once.
class BABELQUEUE_EXPORT Schema {
 public:
  /// The empty schema `{}`: every value is valid.
  Schema();
  /// A schema from a parsed document.
  /// @throws ConfigError when `document` is not a JSON object.
  explicit Schema(const Json& document);

  /// Parses a schema document from JSON text.
  /// @throws ConfigError when `text` is not valid JSON or not a JSON object.
  [[nodiscard]] static Schema parse(std::string_view text);

  /// Validates `data` (HLP-12). Returns the violations in document order, each prefixed with the
  /// JSON pointer of the offending value (`/order_id: must be an integer`; `(root): ...` for the
  /// value itself). An empty result means valid. Never throws except `std::bad_alloc`.
  [[nodiscard]] std::vector<std::string> validate(const Json& data) const;
  /// True when `validate(data)` is empty (stops at the first violation).
  [[nodiscard]] bool is_valid(const Json& data) const;

  /// The source document, e.g. for `x-gdpr-sensitive` marks (HLP-50).
  [[nodiscard]] const Json& document() const noexcept;

 private:
  std::shared_ptr<const Json> document_;
  std::shared_ptr<const detail::Node> root_;
};

/// A payload failed its URN's schema (HLP-13). A handler error like any other: the App retries it
/// and finally dead-letters it with reason `failed`.
///
/// Thread-safety: immutable after construction; safe to share.
class BABELQUEUE_EXPORT InvalidPayload : public Error {
 public:
  InvalidPayload(std::string urn, std::vector<std::string> list);

  /// The URN whose schema rejected the payload.
  [[nodiscard]] const std::string& urn() const noexcept { return urn_; }
  /// What was wrong, as `Schema::validate` reported it (never empty).
  [[nodiscard]] const std::vector<std::string>& violations() const noexcept { return violations_; }

 private:
  std::string urn_;
  std::vector<std::string> violations_;
};

/// A source of per-URN payload schemas (HLP-10).
///
/// Thread-safety: implementations MUST make `schema()` safe to call from several threads at once.
class BABELQUEUE_EXPORT Provider {
 public:
  virtual ~Provider() = default;

  /// The schema registered for `urn`, or nullopt when none is (validation is then skipped:
  /// opt-in per URN).
  /// @throws Error when a schema is registered but cannot be read or parsed (found, but broken).
  [[nodiscard]] virtual std::optional<Schema> schema(std::string_view urn) const = 0;

 protected:
  Provider() = default;
  Provider(const Provider&) = default;
  Provider& operator=(const Provider&) = default;
  Provider(Provider&&) = default;
  Provider& operator=(Provider&&) = default;
};

/// An in-memory provider: URN -> schema JSON text, every schema parsed at construction.
///
/// Thread-safety: read-only after construction; `schema()` may be called from any thread.
/// Copyable and movable.
class BABELQUEUE_EXPORT MapProvider final : public Provider {
 public:
  /// An empty provider (no URN has a schema).
  MapProvider() = default;
  /// Parses each schema text.
  /// @throws ConfigError naming the URN when a text is not a valid schema document.
  explicit MapProvider(const std::map<std::string, std::string>& schemas);

  [[nodiscard]] std::optional<Schema> schema(std::string_view urn) const override;

 private:
  std::map<std::string, Schema, std::less<>> schemas_;
};

/// A provider over a babelqueue-registry manifest (`registry.json`, HLP-10):
/// `{"schemas":[{"urn":"...","schema":"relative/or/absolute/path.json", ...}, ...]}`.
///
/// The manifest is read at construction. Extra members (`owner`, `status`, ...) are ignored and
/// entries without a non-empty string `urn` and `schema` are skipped; a later entry for the same
/// URN wins. Schema paths are relative to the manifest's directory. Schema files are read lazily
/// on first use and cached; a failed read is not cached, so a fixed file is picked up.
///
/// Thread-safety: `schema()` is thread-safe (one internal mutex). Not copyable or movable.
class BABELQUEUE_EXPORT DirProvider final : public Provider {
 public:
  /// Loads the manifest at `manifest_path`.
  /// @throws ConfigError when the manifest cannot be read, is not valid JSON, is not an object,
  /// or has a `schemas` member that is not an array.
  explicit DirProvider(const std::filesystem::path& manifest_path);

  DirProvider(const DirProvider&) = delete;
  DirProvider& operator=(const DirProvider&) = delete;
  DirProvider(DirProvider&&) = delete;
  DirProvider& operator=(DirProvider&&) = delete;
  ~DirProvider() override = default;

  /// @throws ConfigError when the URN's schema file cannot be read or is not a valid schema.
  [[nodiscard]] std::optional<Schema> schema(std::string_view urn) const override;

 private:
  std::map<std::string, std::filesystem::path, std::less<>> files_;
  mutable std::mutex mu_;
  mutable std::map<std::string, Schema, std::less<>> cache_;
};

/// The violations of `data` against the schema registered for `urn`; empty when valid or when
/// no schema is registered.
/// @throws Error when the provider fails (see `Provider::schema`).
[[nodiscard]] BABELQUEUE_EXPORT std::vector<std::string> violations(const Provider& provider,
                                                                    std::string_view urn,
                                                                    const Json& data);

/// Checks `data` against the schema registered for `urn` (HLP-13). Producers SHOULD call this
/// before publishing. No registered schema -> passes.
/// @throws InvalidPayload when the payload violates the schema.
/// @throws Error when the provider fails.
BABELQUEUE_EXPORT void check(const Provider& provider, std::string_view urn, const Json& data);

/// `check` that returns the verdict instead of throwing it: nullopt when valid (or no schema is
/// registered), else the InvalidPayload that `check` would throw.
/// @throws Error when the provider fails: that is not a verdict about the payload.
[[nodiscard]] BABELQUEUE_EXPORT std::optional<InvalidPayload> try_check(const Provider& provider,
                                                                        std::string_view urn,
                                                                        const Json& data);

/// `check(provider, env.urn(), env.data())`.
BABELQUEUE_EXPORT void validate(const Provider& provider, const Envelope& env);

/// `try_check(provider, env.urn(), env.data())`.
[[nodiscard]] BABELQUEUE_EXPORT std::optional<InvalidPayload> try_validate(const Provider& provider,
                                                                           const Envelope& env);

/// Decorates an App handler with payload validation (HLP-13 `wrap`), for `App::handle`:
/// `app.handle(urn, schema::wrap_handler(provider, handler));`
///
/// Before `handler` runs, `env.data()` is checked against the schema registered for
/// `env.urn()`. A violation returns the InvalidPayload as the handler's error Status
/// (ErrorCode::InvalidPayload, `what()` = "invalid payload for <urn>: <violations>") without
/// running `handler`, so the App retries it and finally dead-letters it with reason `failed` and
/// that text in `dead_letter.error`. No registered schema -> `handler` runs. A failing provider
/// (a registered schema that cannot be read) throws out of the wrapper, which the App also
/// treats as a handler error.
///
/// Thread-safety: as thread-safe as `handler` (providers are thread-safe); shares `provider`.
/// @throws ConfigError when `provider` or `handler` is null.
[[nodiscard]] BABELQUEUE_EXPORT Handler wrap_handler(std::shared_ptr<const Provider> provider,
                                                     Handler handler);

/// Producer-side check-then-publish (HLP-13 "producers SHOULD call check before publish"):
/// `check(provider, trim(urn), data)`, then `app.publish(urn, std::move(data), options)`.
/// Returns the new message's `meta.id`. Nothing is published when the check fails. For
/// `publish_with_headers` or a raw transport, call `check` yourself before publishing.
/// @throws InvalidPayload when `data` violates the URN's schema.
/// @throws Error when the provider fails, and whatever `App::publish` throws.
BABELQUEUE_EXPORT std::string publish_checked(App& app, const Provider& provider,
                                              std::string_view urn, Json data,
                                              const PublishOptions& options = {});

}  // namespace babelqueue::schema
