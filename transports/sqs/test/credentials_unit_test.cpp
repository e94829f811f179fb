// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// SQS-3: the credentials chain (explicit, provider, environment, shared credentials file and
// its profiles) with a temporary HOME; errors say where they looked and show no secret.

#include <babelqueue/sqs/transport.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "credentials.hpp"

namespace babelqueue::sqs::detail {
namespace {

namespace fs = std::filesystem;

// A temporary HOME and a clean AWS environment for one test, restored afterwards.
class CredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVariables) {
      const char* v = std::getenv(name);
      if (v != nullptr) saved_.emplace_back(name, v);
      ::unsetenv(name);
    }
    home_ = fs::temp_directory_path() /
            ("bq-sqs-home-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(home_ / ".aws");
    ::setenv("HOME", home_.c_str(), 1);
  }
  void TearDown() override {
    fs::remove_all(home_);
    for (const char* name : kVariables)
      ::unsetenv(name);
    for (const auto& [name, value] : saved_)
      ::setenv(name.c_str(), value.c_str(), 1);
  }

  void write(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }

  static Credentials resolve(const std::string& profile = "", const std::string& file = "") {
    CredentialChain chain({}, {}, profile, file);
    return chain.get();
  }

  static std::string error_of(const std::string& profile = "", const std::string& file = "") {
    try {
      (void)resolve(profile, file);
    } catch (const ConfigError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no ConfigError";
    return {};
  }

  static constexpr const char* kVariables[] = {
      "HOME",        "AWS_ACCESS_KEY_ID",          "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
      "AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE"};
  fs::path home_;
  std::vector<std::pair<std::string, std::string>> saved_;
};

constexpr const char* kFile = R"(# the AWS CLI's file
[default]
aws_access_key_id = AKIDDEFAULT
aws_secret_access_key=default-secret
; a comment
[ci]
  AWS_ACCESS_KEY_ID   =   AKIDCI
aws_secret_access_key = ci/secret+key
aws_session_token = ci-token==

[broken]
aws_access_key_id = AKIDBROKEN
)";

TEST_F(CredentialsTest, SQS3_IniParser) {
  const auto ini = parse_ini(kFile);
  ASSERT_EQ(ini.size(), 3U);
  EXPECT_EQ(ini.at("default").at("aws_secret_access_key"), "default-secret");
  EXPECT_EQ(ini.at("ci").at("aws_access_key_id"), "AKIDCI");
  EXPECT_EQ(ini.at("ci").at("aws_session_token"), "ci-token==");
  EXPECT_FALSE(ini.at("broken").contains("aws_secret_access_key"));
  EXPECT_TRUE(parse_ini("key = outside any section\n[s]\nno equals sign\n").at("s").empty());
  EXPECT_EQ(parse_ini("[a]\r\nk = v\r\n").at("a").at("k"), "v");
}

TEST_F(CredentialsTest, SQS3_ExplicitWinsThenProvider) {
  ::setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "env-secret", 1);
  int calls = 0;
  const CredentialsProvider provider = [&] {
    ++calls;
    return Credentials{"AKIDPROVIDER", "provider-secret", "tok"};
  };
  CredentialChain with_explicit({"AKIDX", "x-secret", ""}, provider, "", "");
  EXPECT_EQ(with_explicit.get().access_key_id, "AKIDX");
  EXPECT_EQ(calls, 0);
  CredentialChain with_provider({}, provider, "", "");
  EXPECT_EQ(with_provider.get().session_token, "tok");
  EXPECT_EQ(with_provider.get().access_key_id, "AKIDPROVIDER");
  EXPECT_EQ(calls, 2);  // called for every request it signs
}

TEST_F(CredentialsTest, SQS3_EnvironmentBeforeTheFile) {
  write(home_ / ".aws" / "credentials", kFile);
  ::setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "env-secret", 1);
  ::setenv("AWS_SESSION_TOKEN", "env-token", 1);
  const Credentials c = resolve();
  EXPECT_EQ(c.access_key_id, "AKIDENV");
  EXPECT_EQ(c.secret_access_key, "env-secret");
  EXPECT_EQ(c.session_token, "env-token");
  // A key id alone is not a credential: the file is used.
  ::unsetenv("AWS_SECRET_ACCESS_KEY");
  EXPECT_EQ(resolve().access_key_id, "AKIDDEFAULT");
}

TEST_F(CredentialsTest, SQS3_SharedFileProfiles) {
  write(home_ / ".aws" / "credentials", kFile);
  const Credentials d = resolve();
  EXPECT_EQ(d.access_key_id, "AKIDDEFAULT");
  EXPECT_EQ(d.secret_access_key, "default-secret");
  EXPECT_TRUE(d.session_token.empty());
  ::setenv("AWS_PROFILE", "ci", 1);
  const Credentials ci = resolve();
  EXPECT_EQ(ci.access_key_id, "AKIDCI");
  EXPECT_EQ(ci.secret_access_key, "ci/secret+key");
  EXPECT_EQ(ci.session_token, "ci-token==");
  // The option wins over AWS_PROFILE.
  EXPECT_EQ(resolve("default").access_key_id, "AKIDDEFAULT");
}

TEST_F(CredentialsTest, SQS3_FileFromTheEnvironmentOrTheOptions) {
  const fs::path elsewhere = home_ / "elsewhere.ini";
  write(elsewhere, "[default]\naws_access_key_id=AKIDELSE\naws_secret_access_key=else\n");
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", elsewhere.c_str(), 1);
  EXPECT_EQ(resolve().access_key_id, "AKIDELSE");
  ::unsetenv("AWS_SHARED_CREDENTIALS_FILE");
  EXPECT_EQ(resolve("", elsewhere.string()).access_key_id, "AKIDELSE");
}

TEST_F(CredentialsTest, SQS3_MissingSaysWhereItLookedWithoutSecrets) {
  const std::string none = error_of();
  EXPECT_NE(none.find("AWS_ACCESS_KEY_ID"), std::string::npos) << none;
  EXPECT_NE(none.find((home_ / ".aws" / "credentials").string()), std::string::npos) << none;
  EXPECT_NE(none.find("credentials_provider"), std::string::npos) << none;

  write(home_ / ".aws" / "credentials", kFile);
  const std::string no_profile = error_of("nope");
  EXPECT_NE(no_profile.find("\"nope\""), std::string::npos) << no_profile;
  const std::string incomplete = error_of("broken");
  EXPECT_NE(incomplete.find("\"broken\""), std::string::npos) << incomplete;
  EXPECT_NE(incomplete.find("aws_secret_access_key"), std::string::npos) << incomplete;
  for (const std::string& text : {none, no_profile, incomplete}) {
    for (const char* secret : {"default-secret", "ci/secret+key", "ci-token"}) {
      EXPECT_EQ(text.find(secret), std::string::npos) << text;
    }
  }
}

TEST_F(CredentialsTest, SQS3_ResolvedOnceAndKept) {
  write(home_ / ".aws" / "credentials", kFile);
  CredentialChain chain({}, {}, "", "");
  EXPECT_EQ(chain.get().access_key_id, "AKIDDEFAULT");
  fs::remove(home_ / ".aws" / "credentials");
  EXPECT_EQ(chain.get().access_key_id, "AKIDDEFAULT");
}

}  // namespace
}  // namespace babelqueue::sqs::detail
