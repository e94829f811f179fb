// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// The bounds of the transport options (AMQP-1), shared by parse_url and the check the transport
// constructor runs on the Options it is given. Defined in url.cpp.

#include <babelqueue/amqp/transport.hpp>

namespace babelqueue::amqp::detail {

inline constexpr int kPort = 5672;
inline constexpr int kTlsPort = 5671;
// basic.qos prefetch-count and the connection.tune heartbeat are AMQP shorts (16-bit unsigned).
inline constexpr int kMaxPrefetch = 65535;
inline constexpr int kMaxHeartbeatSeconds = 65535;

// `options.port`, or when it is 0 the default port for TLS or not.
int effective_port(const Options& options) noexcept;

// Throws ConfigError("amqp options: ...") naming the first member out of range: port (0 or
// 1..65535), prefetch (1..kMaxPrefetch), connect_timeout, confirm_timeout and
// empty_repoll_interval (> 0), heartbeat (0..kMaxHeartbeatSeconds s), host and
// delay_queue_infix (non-empty), tls.cert_file and tls.key_file (both or neither). The text
// never contains the password.
void validate(const Options& options);

}  // namespace babelqueue::amqp::detail
