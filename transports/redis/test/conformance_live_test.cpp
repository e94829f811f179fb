// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The conformance runner's transport blocks (today `redis`: payload identity, RDS-70) live
// against a real redis-server, through open_transport and the transport's capabilities, in both
// layouts (issue 8 item 13): what `babelqueue conformance --url redis://...` runs.

#include <babelqueue/open.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "runner.hpp"
#include "server_test.hpp"

namespace babelqueue::redis::test {
namespace {

std::string conformance_dir() {
  if (const char* dir = std::getenv("BABELQUEUE_CONFORMANCE_DIR"); dir != nullptr && *dir != 0) {
    return dir;
  }
  return BABELQUEUE_DEFAULT_CONFORMANCE_DIR;
}

class ConformanceLive : public SharedRedisServerTest,
                        public ::testing::WithParamInterface<const char*> {};

TEST_P(ConformanceLive, TransportBlocksPassAgainstTheServerAndLeaveNothingBehind) {
  const std::string url = server().url() + GetParam();
  const conformance::Report report =
      conformance::run_transport_blocks(conformance_dir(), open_transport(url));
  ASSERT_FALSE(report.cases.empty()) << "the manifest has no transport block";
  for (const conformance::CaseResult& c : report.cases) {
    EXPECT_TRUE(c.passed()) << c.block << "/" << c.name << ": " << c.message;
  }
  EXPECT_EQ(report.skipped(), 0u);
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(raw().command({"DBSIZE"}).as_integer(), 0) << "the run left keys behind";
}

INSTANTIATE_TEST_SUITE_P(BothLayouts, ConformanceLive,
                         ::testing::Values("?layout=default", "?layout=laravel"));

}  // namespace
}  // namespace babelqueue::redis::test
