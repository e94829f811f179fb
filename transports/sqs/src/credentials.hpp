// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// The credentials chain (SQS-3): explicit, provider, environment, shared credentials file.

#include <babelqueue/sqs/transport.hpp>

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace babelqueue::sqs::detail {

/// The sections of an INI file (`[name]`, `key = value`, `#`/`;` comments, blank lines), keys
/// lower-cased. Lines outside a section and lines without `=` are ignored.
[[nodiscard]] std::map<std::string, std::map<std::string, std::string>> parse_ini(
    std::string_view text);

/// Resolves the credentials of a transport, the first source that has them: `credentials`
/// (non-empty key id), `credentials_provider` (called every time), AWS_ACCESS_KEY_ID +
/// AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN), the profile of the shared credentials file.
/// Environment and file are read once, by the first call, and kept.
///
/// Thread-safety: `get` is safe from any thread.
class CredentialChain {
 public:
  CredentialChain(Credentials explicit_credentials, CredentialsProvider provider,
                  std::string profile, std::string file);

  /// @throws ConfigError saying where it looked (never a secret); whatever the provider throws.
  [[nodiscard]] Credentials get();

 private:
  [[nodiscard]] Credentials from_environment_or_file() const;

  Credentials explicit_;
  CredentialsProvider provider_;
  std::string profile_;
  std::string file_;
  std::mutex mu_;
  std::optional<Credentials> resolved_;
};

}  // namespace babelqueue::sqs::detail
