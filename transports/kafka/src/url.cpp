// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// SKELETON (issue 10): replaced by the transport helper.

#include <babelqueue/kafka/transport.hpp>

namespace babelqueue::kafka {

Assignor parse_assignor(std::string_view text) {
  throw ConfigError("kafka: not implemented yet: assignor " + std::string(text));
}

Options parse_url(std::string_view, Options) {
  throw ConfigError("kafka URL: not implemented yet");
}

}  // namespace babelqueue::kafka
