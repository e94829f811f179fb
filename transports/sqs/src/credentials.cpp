// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// SQS-3 credentials: the environment variables and the shared credentials file of the AWS CLI
// and SDKs (`[profile]` sections of `aws_access_key_id`, `aws_secret_access_key`,
// `aws_session_token`).

#include "credentials.hpp"

#include <babelqueue/spi/text.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

namespace babelqueue::sqs::detail {
namespace {

using spi::quoted;

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && space(s.back()))
    s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string default_file() {
  std::string file = env("AWS_SHARED_CREDENTIALS_FILE");
  if (!file.empty()) return file;
  const std::string home = env("HOME");
  return home.empty() ? std::string() : home + "/.aws/credentials";
}

}  // namespace

std::map<std::string, std::map<std::string, std::string>> parse_ini(std::string_view text) {
  std::map<std::string, std::map<std::string, std::string>> out;
  std::map<std::string, std::string>* section = nullptr;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = trim(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      const std::size_t close = line.find(']');
      section = close == std::string_view::npos
                    ? nullptr
                    : &out[std::string(trim(line.substr(1, close - 1)))];
      continue;
    }
    const std::size_t eq = line.find('=');
    if (section == nullptr || eq == std::string_view::npos) continue;
    (*section)[lower(trim(line.substr(0, eq)))] = std::string(trim(line.substr(eq + 1)));
  }
  return out;
}

CredentialChain::CredentialChain(Credentials explicit_credentials, CredentialsProvider provider,
                                 std::string profile, std::string file)
    : explicit_(std::move(explicit_credentials)),
      provider_(std::move(provider)),
      profile_(std::move(profile)),
      file_(std::move(file)) {}

Credentials CredentialChain::get() {
  if (!explicit_.access_key_id.empty()) return explicit_;
  if (provider_) return provider_();
  std::lock_guard<std::mutex> lock(mu_);
  if (!resolved_) resolved_ = from_environment_or_file();
  return *resolved_;
}

Credentials CredentialChain::from_environment_or_file() const {
  Credentials c;
  c.access_key_id = env("AWS_ACCESS_KEY_ID");
  c.secret_access_key = env("AWS_SECRET_ACCESS_KEY");
  if (!c.access_key_id.empty() && !c.secret_access_key.empty()) {
    c.session_token = env("AWS_SESSION_TOKEN");
    return c;
  }
  std::string profile = profile_.empty() ? env("AWS_PROFILE") : profile_;
  if (profile.empty()) profile = "default";
  const std::string file = file_.empty() ? default_file() : file_;
  std::string looked =
      "sqs: no AWS credentials: none in the options, no credentials_provider, "
      "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY not both set, and ";
  if (file.empty()) throw ConfigError(looked + "no shared credentials file (HOME is not set)");
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw ConfigError(looked + "the shared credentials file " + quoted(file) + " cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  const auto sections = parse_ini(text.str());
  const auto it = sections.find(profile);
  if (it == sections.end()) {
    throw ConfigError(looked + "the shared credentials file " + quoted(file) + " has no profile " +
                      quoted(profile));
  }
  const auto value = [&](const char* key) {
    const auto v = it->second.find(key);
    return v == it->second.end() ? std::string() : v->second;
  };
  c.access_key_id = value("aws_access_key_id");
  c.secret_access_key = value("aws_secret_access_key");
  c.session_token = value("aws_session_token");
  if (c.access_key_id.empty() || c.secret_access_key.empty()) {
    throw ConfigError(looked + "profile " + quoted(profile) + " of the shared credentials file " +
                      quoted(file) + " lacks aws_access_key_id or aws_secret_access_key");
  }
  return c;
}

}  // namespace babelqueue::sqs::detail
