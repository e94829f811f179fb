// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "babelqueue/testing/publish_paths.hpp"

namespace babelqueue::testing {
namespace {

Status lacks(const char* capability) {
  return ConfigError(std::string("the transport is no ") + capability);
}

}  // namespace

const std::vector<PublishPath>& publish_paths() {
  static const std::vector<PublishPath> paths = {
      {"Publish", [](Transport& t, const std::string& queue,
                     const std::string& body) { return t.publish(queue, body); }},
      {"PublishWithNoHeaders",
       [](Transport& t, const std::string& queue, const std::string& body) {
         auto* p = capability<HeaderPublisher>(t);
         return p == nullptr ? lacks("HeaderPublisher") : p->publish_with_headers(queue, body, {});
       }},
      {"PublishBatch",
       [](Transport& t, const std::string& queue, const std::string& body) {
         auto* p = capability<BatchPublisher>(t);
         return p == nullptr ? lacks("BatchPublisher") : p->publish_batch(queue, {body});
       }},
  };
  return paths;
}

void PrintTo(const PublishPath& path, std::ostream* out) {
  *out << path.name;
}

}  // namespace babelqueue::testing
