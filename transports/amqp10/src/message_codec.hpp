// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// Private: the layer's Message and Value to and from Proton's (Proton headers stay here).

#include <babelqueue/amqp10/client.hpp>

#include <proton/message.hpp>
#include <proton/scalar.hpp>
#include <proton/value.hpp>

namespace babelqueue::amqp10::detail {

// The Proton message `m` carries: body by its BodyKind, header, properties, annotations and
// application properties. Throws ConfigError for a BodyKind::Unsupported body (nothing to send).
proton::message to_proton(const Message& m);
// The same into `out`, cleared first: the container thread reuses one message for every send
// (a proton::message allocates a dozen objects when made and frees them when dropped).
void to_proton(const Message& m, proton::message& out);
// A received Proton message as the layer's Message (every field; values of types the Value
// variant does not name become OtherValue).
Message from_proton(const proton::message& m);

// Throws ConfigError for an Other value (its content is unknown).
proton::scalar to_scalar(const Value& v);
Value from_value(const proton::value& v);

}  // namespace babelqueue::amqp10::detail
