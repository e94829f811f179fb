// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// The block families of the runner: each registers the manifest blocks it handles. Adding a
// family is one file here and one line in `register_every_block` (runner.cpp).

#include "suite.hpp"

namespace babelqueue::conformance::detail {

/// `cases`, `roundtrip`, `data_shape`, `forbidden_keys` (envelope.cpp).
void register_envelope_blocks(Registry& registry);
/// `idempotency` (idempotency.cpp).
void register_idempotency_block(Registry& registry);
/// `payload_schema`, `payload_schema_unicode` (payload_schema.cpp).
void register_payload_schema_blocks(Registry& registry);
/// The broker bindings, one file each: `rabbitmq` (amqp.cpp), `sqs` (sqs.cpp), `asb`
/// (azureservicebus.cpp), `pulsar` (pulsar.cpp), `kafka` (kafka.cpp), `artemis` (artemis.cpp).
void register_amqp_block(Registry& registry);
void register_sqs_block(Registry& registry);
void register_azureservicebus_block(Registry& registry);
void register_pulsar_block(Registry& registry);
void register_kafka_block(Registry& registry);
void register_artemis_block(Registry& registry);
/// The transport blocks, live against a transport: `redis` (transport.cpp).
void register_transport_blocks(Registry& registry);

}  // namespace babelqueue::conformance::detail
