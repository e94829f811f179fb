// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "frame.hpp"

/// Batch payloads: a batching producer (every official client by default) sends several
/// messages as one, MessageMetadata.num_messages_in_batch set, the (uncompressed) payload a
/// sequence of
///
///   [4-byte big-endian size][SingleMessageMetadata][payload of payload_size bytes]
namespace babelqueue::pulsar::wire {

/// One message of a batch; `payload` views the batch's bytes.
struct BatchEntry {
  pb::SingleMessageMetadata metadata;
  std::string_view payload;
};

/// The `count` messages of an uncompressed batch payload. Throws ProtocolError naming the entry
/// when count < 1, an entry is cut short, its metadata does not parse, its payload_size is
/// missing, negative or beyond the bytes left, or bytes follow the last entry.
[[nodiscard]] std::vector<BatchEntry> split_batch(std::string_view batch, int count);

/// Appends one message to a batch payload; sets `metadata.payload_size` to payload's size.
void append_batch_entry(std::string& batch, pb::SingleMessageMetadata metadata,
                        std::string_view payload);

}  // namespace babelqueue::pulsar::wire
