// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
// WORK IN PROGRESS stand-in (the helper's version replaces it).
#pragma once
#include <babelqueue/amqp/transport.hpp>
namespace babelqueue::amqp::detail {
inline void validate(const Options&) {}
inline int effective_port(const Options& o) {
  return o.port != 0 ? o.port : (o.tls.enabled ? 5671 : 5672);
}
}  // namespace babelqueue::amqp::detail
