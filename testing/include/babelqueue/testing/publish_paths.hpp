// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/transport.hpp>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

/// @file
/// Testing kit: every way a body reaches a broker, for the conformance wire tests that check
/// each path writes the same message (a transport's projection must not depend on the path).

namespace babelqueue::testing {

// One publishing path: `publish` sends `body` to `queue` of `transport` that way.
struct PublishPath {
  const char* name;
  std::function<Status(Transport& transport, const std::string& queue, const std::string& body)>
      publish;
};

// Publish, PublishWithNoHeaders (HeaderPublisher with an empty map) and PublishBatch
// (BatchPublisher, a batch of one). A path whose capability the transport lacks returns a
// ConfigError saying so, so a test instantiated with it fails instead of passing vacuously.
const std::vector<PublishPath>& publish_paths();

// The test-name suffix GoogleTest prints for a path (the test parameter's name).
void PrintTo(const PublishPath& path, std::ostream* out);

// For INSTANTIATE_TEST_SUITE_P's name generator: the path's name.
struct PublishPathName {
  template <class Info>
  std::string operator()(const Info& info) const {
    return info.param.name;
  }
};

}  // namespace babelqueue::testing
