// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "frame.hpp"

#include <cstdio>
#include <limits>
#include <utility>

#include "crc32c.hpp"

namespace babelqueue::pulsar::wire {
namespace {

constexpr std::size_t kSizeField = 4;
constexpr std::size_t kMagicField = 2;
// Compact the reader's buffer once this much of it was consumed.
constexpr std::size_t kCompactAt = 64U * 1024U;

std::string hex(std::uint32_t value, int digits) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%0*x", digits, value);
  return text;
}

std::uint16_t read_u16(std::string_view bytes, std::size_t at) noexcept {
  return static_cast<std::uint16_t>(
      (static_cast<unsigned>(static_cast<unsigned char>(bytes[at])) << 8) |
      static_cast<unsigned char>(bytes[at + 1]));
}

void append_u16(std::string& out, std::uint16_t value) {
  out.push_back(static_cast<char>(value >> 8));
  out.push_back(static_cast<char>(value & 0xffU));
}

// The serialized size of a message, which protobuf keeps below 2 GiB.
std::uint32_t serialized_size(const google::protobuf::MessageLite& message) {
  return static_cast<std::uint32_t>(message.ByteSizeLong());
}

void append_message(std::string& out, const google::protobuf::MessageLite& message) {
  if (!message.AppendToString(&out))
    throw ProtocolError("cannot serialize " + message.GetTypeName());
}

void check_command(const pb::BaseCommand& command) {
  if (!command.has_type()) throw ProtocolError("a command to send has no type");
}

// Parses [command size][BaseCommand][rest] (a frame without its total size).
Frame parse_frame_body(std::string_view body) {
  if (body.size() < kSizeField) {
    throw ProtocolError("a frame of " + std::to_string(body.size()) +
                        " bytes cannot hold its 4-byte command size");
  }
  const std::uint32_t command_size = read_u32(body, 0);
  if (command_size > body.size() - kSizeField) {
    throw ProtocolError("command size " + std::to_string(command_size) + " exceeds the " +
                        std::to_string(body.size() - kSizeField) + " bytes left in its frame");
  }
  Frame frame;
  if (!frame.command.ParseFromArray(body.data() + kSizeField, static_cast<int>(command_size)))
    throw ProtocolError("a BaseCommand of " + std::to_string(command_size) +
                        " bytes does not parse");
  if (!frame.command.has_type())
    throw ProtocolError("a BaseCommand without a known type (a command newer than this client?)");
  frame.payload_section.assign(body.substr(kSizeField + command_size));
  return frame;
}

}  // namespace

void append_u32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((value >> shift) & 0xffU));
}

std::uint32_t read_u32(std::string_view bytes, std::size_t at) noexcept {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i)
    value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

std::string encode_command(const pb::BaseCommand& command) {
  check_command(command);
  const std::uint32_t command_size = serialized_size(command);
  std::string out;
  out.reserve(2 * kSizeField + command_size);
  append_u32(out, static_cast<std::uint32_t>(kSizeField) + command_size);
  append_u32(out, command_size);
  append_message(out, command);
  return out;
}

std::string encode_message(const pb::BaseCommand& command, const pb::MessageMetadata& metadata,
                           std::string_view payload) {
  check_command(command);
  const std::uint32_t command_size = serialized_size(command);
  const std::uint32_t metadata_size = serialized_size(metadata);
  const std::size_t total = kSizeField + command_size + kMagicField + kSizeField + kSizeField +
                            metadata_size + payload.size();
  if (total > std::numeric_limits<std::uint32_t>::max())
    throw ProtocolError("a message of " + std::to_string(payload.size()) + " bytes is too large");
  std::string out;
  out.reserve(kSizeField + total);
  append_u32(out, static_cast<std::uint32_t>(total));
  append_u32(out, command_size);
  append_message(out, command);
  append_u16(out, kChecksumMagic);
  const std::size_t checksum_at = out.size();
  append_u32(out, 0);  // the checksum, below
  const std::size_t checked_from = out.size();
  append_u32(out, metadata_size);
  append_message(out, metadata);
  out.append(payload);
  const std::uint32_t checksum = crc32c(std::string_view(out).substr(checked_from));
  for (std::size_t i = 0; i < 4; ++i)
    out[checksum_at + i] = static_cast<char>((checksum >> (24 - 8 * i)) & 0xffU);
  return out;
}

Message decode_message(std::string_view section) {
  Message message;
  if (section.size() >= kMagicField && read_u16(section, 0) == kBrokerEntryMetadataMagic) {
    if (section.size() < kMagicField + kSizeField)
      throw ProtocolError("broker entry metadata is cut short");
    const std::uint32_t size = read_u32(section, kMagicField);
    if (size > section.size() - kMagicField - kSizeField) {
      throw ProtocolError("broker entry metadata size " + std::to_string(size) +
                          " exceeds the bytes left in its frame");
    }
    pb::BrokerEntryMetadata entry;
    if (!entry.ParseFromArray(section.data() + kMagicField + kSizeField, static_cast<int>(size)))
      throw ProtocolError("broker entry metadata does not parse");
    message.broker_entry = std::move(entry);
    section.remove_prefix(kMagicField + kSizeField + size);
  }
  if (section.size() < kMagicField + kSizeField + kSizeField) {
    throw ProtocolError("a payload section of " + std::to_string(section.size()) +
                        " bytes is too short for checksum magic, checksum and metadata size");
  }
  const std::uint16_t magic = read_u16(section, 0);
  if (magic != kChecksumMagic) {
    throw ProtocolError("payload without the checksum magic " + hex(kChecksumMagic, 4) +
                        " (found " + hex(magic, 4) + ")");
  }
  const std::uint32_t expected = read_u32(section, kMagicField);
  const std::string_view checked = section.substr(kMagicField + kSizeField);
  const std::uint32_t computed = crc32c(checked);
  if (computed != expected) {
    throw ProtocolError("payload checksum mismatch: the frame says " + hex(expected, 8) +
                        ", the bytes give " + hex(computed, 8));
  }
  const std::uint32_t metadata_size = read_u32(checked, 0);
  if (metadata_size > checked.size() - kSizeField) {
    throw ProtocolError("metadata size " + std::to_string(metadata_size) + " exceeds the " +
                        std::to_string(checked.size() - kSizeField) + " bytes left in its frame");
  }
  if (!message.metadata.ParseFromArray(checked.data() + kSizeField,
                                       static_cast<int>(metadata_size))) {
    throw ProtocolError("a MessageMetadata of " + std::to_string(metadata_size) +
                        " bytes does not parse");
  }
  message.payload.assign(checked.substr(kSizeField + metadata_size));
  return message;
}

FrameReader::FrameReader(std::size_t max_frame_size) : max_frame_size_(max_frame_size) {}

void FrameReader::feed(std::string_view bytes) {
  if (start_ >= kCompactAt && start_ * 2 >= buffer_.size()) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  buffer_.append(bytes);
}

void FrameReader::fail(const std::string& what) {
  error_.emplace(what);
  throw *error_;
}

std::optional<Frame> FrameReader::next() {
  if (error_) throw *error_;
  const std::string_view pending = std::string_view(buffer_).substr(start_);
  if (pending.size() < kSizeField) return std::nullopt;
  const std::uint32_t total = read_u32(pending, 0);
  if (total > max_frame_size_) {
    fail("a frame of " + std::to_string(total) + " bytes exceeds the maximum of " +
         std::to_string(max_frame_size_));
  }
  if (pending.size() - kSizeField < total) return std::nullopt;
  std::optional<Frame> frame;
  try {
    frame = parse_frame_body(pending.substr(kSizeField, total));
  } catch (const ProtocolError& error) {
    error_ = error;
    throw;
  }
  start_ += kSizeField + total;
  if (start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  }
  return frame;
}

Frame decode_frame(std::string_view frame, std::size_t max_frame_size) {
  if (frame.size() < kSizeField)
    throw ProtocolError("a frame of " + std::to_string(frame.size()) + " bytes has no size field");
  const std::uint32_t total = read_u32(frame, 0);
  if (total > max_frame_size) {
    throw ProtocolError("a frame of " + std::to_string(total) + " bytes exceeds the maximum of " +
                        std::to_string(max_frame_size));
  }
  if (total != frame.size() - kSizeField) {
    throw ProtocolError("frame size field says " + std::to_string(total) + " bytes, " +
                        std::to_string(frame.size() - kSizeField) + " follow it");
  }
  return parse_frame_body(frame.substr(kSizeField));
}

}  // namespace babelqueue::pulsar::wire
