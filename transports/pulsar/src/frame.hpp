// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>

#include <proto/pulsar_api.pb.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

/// Pulsar's binary protocol framing (issue 13, D-10). Every frame starts with its size:
///
///   simple command   [total size][command size][BaseCommand]
///   payload command  [total size][command size][BaseCommand]
///                    [magic 0x0e01][CRC32C][metadata size][MessageMetadata][payload]
///
/// All sizes are 4-byte big-endian; total size counts the bytes after itself; the CRC32C covers
/// [metadata size][MessageMetadata][payload]. A broker that was asked to may put
/// [magic 0x0e02][size][BrokerEntryMetadata] before the checksum magic. SEND and MESSAGE are the
/// payload commands.
namespace babelqueue::pulsar::wire {

namespace pb = ::babelqueue::pulsar::proto;

/// A violation of the protocol by the peer: a frame larger than allowed, a size that does not
/// fit, a command or metadata that does not parse, a missing checksum magic, a checksum
/// mismatch, a corrupt batch or compressed payload. The message names what was wrong. Transient:
/// the connection that carried it is closed and a new one made.
class ProtocolError : public TransportError {
 public:
  explicit ProtocolError(const std::string& what) : TransportError("pulsar protocol: " + what) {}
};

/// The broker's default largest message (maxMessageSize, 5 MiB); CONNECTED may announce another.
inline constexpr std::size_t kDefaultMaxMessageSize = 5U * 1024U * 1024U;
/// What a frame may have beyond its message: command and metadata (the protocol's padding).
inline constexpr std::size_t kFramePadding = 10U * 1024U;
inline constexpr std::uint16_t kChecksumMagic = 0x0e01;
inline constexpr std::uint16_t kBrokerEntryMetadataMagic = 0x0e02;

/// A simple command frame. Throws ProtocolError when `command` lacks a field the protocol
/// requires (its type).
[[nodiscard]] std::string encode_command(const pb::BaseCommand& command);

/// A payload command frame (SEND, MESSAGE) with its checksum.
[[nodiscard]] std::string encode_message(const pb::BaseCommand& command,
                                         const pb::MessageMetadata& metadata,
                                         std::string_view payload);

/// One frame off the wire: the command, and for payload commands the bytes after it (decode
/// them with decode_message(), which checks them; a corrupt payload thus still tells whose
/// message it was).
struct Frame {
  pb::BaseCommand command;
  /// Empty for a simple command; [magic][CRC32C][metadata size][metadata][payload] otherwise.
  std::string payload_section;
};

/// A payload section taken apart and verified.
struct Message {
  /// The broker's entry metadata, when the broker put one in front (0x0e02).
  std::optional<pb::BrokerEntryMetadata> broker_entry;
  pb::MessageMetadata metadata;
  /// The payload as the producer sent it: compressed per metadata.compression and, when
  /// metadata.num_messages_in_batch was set by a batching producer, a batch (batch.hpp).
  std::string payload;
};

/// Verifies the checksum and parses the metadata of a Frame's payload_section. Throws
/// ProtocolError naming the fault (no 0x0e01 magic, checksum mismatch with both values, a size
/// that does not fit, metadata that does not parse).
[[nodiscard]] Message decode_message(std::string_view payload_section);

/// Splits a byte stream into frames. Feed it what the socket read, in any pieces; next() returns
/// each complete frame once. Memory is bounded by the largest frame allowed.
///
/// Errors (ProtocolError): a frame whose total size exceeds max_frame_size() or is too small to
/// hold its command size, a command size that does not fit the frame, a command that does not
/// parse or has no type. After one the stream is out of step for good: every later next()
/// throws the same error; close the connection.
///
/// Thread-safety: not thread-safe; one reader per connection, used by one thread.
class FrameReader {
 public:
  /// The largest total size accepted (the bytes after the size field).
  explicit FrameReader(std::size_t max_frame_size = kDefaultMaxMessageSize + kFramePadding);

  /// Appends bytes read from the stream.
  void feed(std::string_view bytes);
  /// The next complete frame, or nullopt until more bytes are fed.
  [[nodiscard]] std::optional<Frame> next();

  /// Bytes fed and not yet returned in a frame.
  [[nodiscard]] std::size_t buffered() const noexcept { return buffer_.size() - start_; }
  [[nodiscard]] std::size_t max_frame_size() const noexcept { return max_frame_size_; }
  /// Changes the limit, e.g. to the max_message_size + kFramePadding that CONNECTED announced.
  void set_max_frame_size(std::size_t max_frame_size) noexcept { max_frame_size_ = max_frame_size; }

 private:
  [[noreturn]] void fail(const std::string& what);

  std::string buffer_;
  std::size_t start_ = 0;
  std::size_t max_frame_size_;
  std::optional<ProtocolError> error_;
};

/// Parses one whole frame, size field included (what a FrameReader would return for exactly
/// these bytes); throws ProtocolError as FrameReader does, and when `frame` is not exactly one
/// frame.
[[nodiscard]] Frame decode_frame(std::string_view frame,
                                 std::size_t max_frame_size = kDefaultMaxMessageSize +
                                                              kFramePadding);

/// 4-byte big-endian helpers of the framing (also used by batches).
void append_u32(std::string& out, std::uint32_t value);
[[nodiscard]] std::uint32_t read_u32(std::string_view bytes, std::size_t at) noexcept;

}  // namespace babelqueue::pulsar::wire
