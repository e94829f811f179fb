// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "frame.hpp"

/// Payload compression as Pulsar's clients write it (MessageMetadata.compression; the batch, not
/// each entry, is compressed; uncompressed_size gives the result's size):
///   LZ4     an LZ4 block (no frame header: the Java client's LZ4Compressor output)
///   ZLIB    a zlib stream (RFC 1950 header and deflate data); the Java client ends it with a
///           sync flush, without the final block and the Adler-32, which is read as well
///   ZSTD    a Zstandard frame
///   SNAPPY  raw Snappy (no framing format)
namespace babelqueue::pulsar::wire {

/// "NONE", "LZ4", "ZLIB", "ZSTD", "SNAPPY", or "compression type N" for another value.
[[nodiscard]] std::string compression_name(int type);

/// `data` compressed with `type` (NONE: a copy). Throws ProtocolError for an unknown type or a
/// library failure.
[[nodiscard]] std::string compress(pb::CompressionType type, std::string_view data);

/// `data` decompressed with `type` (an int: a value this client does not know is an error, not
/// a crash), which must give exactly `uncompressed_size` bytes; NONE returns `data` unchanged.
/// Throws ProtocolError naming the type when uncompressed_size exceeds `max_size` (checked
/// before anything is allocated), the type is unknown, the data is corrupt or its size differs.
[[nodiscard]] std::string decompress(int type, std::string_view data, std::size_t uncompressed_size,
                                     std::size_t max_size);

}  // namespace babelqueue::pulsar::wire
