// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
// WORK IN PROGRESS skeleton (replaced before merge).
#include <babelqueue/amqp/transport.hpp>

namespace babelqueue::amqp {
DeclareMode parse_declare_mode(std::string_view) {
  throw ConfigError("amqp: not written yet");
}
ConsumeMode parse_consume_mode(std::string_view) {
  throw ConfigError("amqp: not written yet");
}
Options parse_url(std::string_view, Options) {
  throw ConfigError("amqp: not written yet");
}
}  // namespace babelqueue::amqp
