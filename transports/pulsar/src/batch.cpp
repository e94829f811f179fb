// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "batch.hpp"

#include <cstdint>
#include <limits>
#include <utility>

namespace babelqueue::pulsar::wire {
namespace {

constexpr std::size_t kSizeField = 4;

std::string entry_name(int index, int count) {
  return "batch entry " + std::to_string(index + 1) + " of " + std::to_string(count);
}

}  // namespace

std::vector<BatchEntry> split_batch(std::string_view batch, int count) {
  if (count < 1) throw ProtocolError("a batch of " + std::to_string(count) + " messages");
  // Every entry takes at least its size field: a larger count cannot be true.
  if (static_cast<std::size_t>(count) > batch.size() / kSizeField) {
    throw ProtocolError("a batch of " + std::to_string(count) + " messages in " +
                        std::to_string(batch.size()) + " bytes");
  }
  std::vector<BatchEntry> entries;
  entries.reserve(static_cast<std::size_t>(count));
  for (int index = 0; index < count; ++index) {
    if (batch.size() < kSizeField)
      throw ProtocolError(entry_name(index, count) + " is cut short before its metadata size");
    const std::uint32_t metadata_size = read_u32(batch, 0);
    batch.remove_prefix(kSizeField);
    if (metadata_size > batch.size()) {
      throw ProtocolError(entry_name(index, count) + ": metadata size " +
                          std::to_string(metadata_size) + " exceeds the " +
                          std::to_string(batch.size()) + " bytes left");
    }
    BatchEntry entry;
    if (!entry.metadata.ParseFromArray(batch.data(), static_cast<int>(metadata_size)))
      throw ProtocolError(entry_name(index, count) + ": its SingleMessageMetadata does not parse");
    batch.remove_prefix(metadata_size);
    if (!entry.metadata.has_payload_size())
      throw ProtocolError(entry_name(index, count) + " has no payload_size");
    const int payload_size = entry.metadata.payload_size();
    if (payload_size < 0 || static_cast<std::size_t>(payload_size) > batch.size()) {
      throw ProtocolError(entry_name(index, count) + ": payload_size " +
                          std::to_string(payload_size) + " does not fit the " +
                          std::to_string(batch.size()) + " bytes left");
    }
    entry.payload = batch.substr(0, static_cast<std::size_t>(payload_size));
    batch.remove_prefix(static_cast<std::size_t>(payload_size));
    entries.push_back(std::move(entry));
  }
  if (!batch.empty()) {
    throw ProtocolError(std::to_string(batch.size()) + " bytes follow the last of " +
                        std::to_string(count) + " batch entries");
  }
  return entries;
}

void append_batch_entry(std::string& batch, pb::SingleMessageMetadata metadata,
                        std::string_view payload) {
  if (payload.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw ProtocolError("a batch entry of " + std::to_string(payload.size()) + " bytes");
  metadata.set_payload_size(static_cast<int>(payload.size()));
  append_u32(batch, static_cast<std::uint32_t>(metadata.ByteSizeLong()));
  if (!metadata.AppendToString(&batch)) throw ProtocolError("cannot serialize a batch entry");
  batch.append(payload);
}

}  // namespace babelqueue::pulsar::wire
