// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "compression.hpp"

#include <lz4.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <limits>

namespace babelqueue::pulsar::wire {
namespace {

// The level Pulsar's clients use for ZSTD.
constexpr int kZstdLevel = 3;

[[noreturn]] void fail(int type, const std::string& what) {
  throw ProtocolError(compression_name(type) + " payload: " + what);
}

std::string compress_lz4(std::string_view data) {
  if (data.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE))
    fail(pb::LZ4, std::to_string(data.size()) + " bytes is more than LZ4 takes");
  const int size = static_cast<int>(data.size());
  std::string out(static_cast<std::size_t>(LZ4_compressBound(size)), '\0');
  const int written =
      LZ4_compress_default(data.data(), out.data(), size, static_cast<int>(out.size()));
  if (written <= 0) fail(pb::LZ4, "compression failed");
  out.resize(static_cast<std::size_t>(written));
  return out;
}

std::string compress_zlib(std::string_view data) {
  uLongf size = compressBound(static_cast<uLong>(data.size()));
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                reinterpret_cast<const Bytef*>(data.data()), static_cast<uLong>(data.size()),
                Z_DEFAULT_COMPRESSION) != Z_OK) {
    fail(pb::ZLIB, "compression failed");
  }
  out.resize(size);
  return out;
}

std::string compress_zstd(std::string_view data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const std::size_t written =
      ZSTD_compress(out.data(), out.size(), data.data(), data.size(), kZstdLevel);
  if (ZSTD_isError(written) != 0) fail(pb::ZSTD, ZSTD_getErrorName(written));
  out.resize(written);
  return out;
}

std::string compress_snappy(std::string_view data) {
  std::string out;
  snappy::Compress(data.data(), data.size(), &out);
  return out;
}

std::string decompress_lz4(std::string_view data, std::size_t size) {
  if (data.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      size > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE)) {
    fail(pb::LZ4, "sizes beyond what LZ4 takes");
  }
  // One spare byte: a block that would give more than `size` bytes fails instead of fitting.
  std::string out(size + 1, '\0');
  const int written = LZ4_decompress_safe(data.data(), out.data(), static_cast<int>(data.size()),
                                          static_cast<int>(out.size()));
  if (written < 0) fail(pb::LZ4, "corrupt data");
  if (static_cast<std::size_t>(written) != size) {
    fail(pb::LZ4,
         "gives " + std::to_string(written) + " bytes, the metadata says " + std::to_string(size));
  }
  out.resize(size);
  return out;
}

std::string decompress_zlib(std::string_view data, std::size_t size) {
  if (data.size() > std::numeric_limits<uInt>::max() || size >= std::numeric_limits<uInt>::max())
    fail(pb::ZLIB, "sizes beyond what zlib takes");
  z_stream stream{};
  if (inflateInit(&stream) != Z_OK) fail(pb::ZLIB, "cannot start inflating");
  // One spare byte: data that would give more than `size` bytes fails instead of fitting.
  std::string out(size + 1, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  // The Java client ends its stream with a sync flush, not a finish: no final block and no
  // Adler-32 follow, so inflating stops with Z_OK or Z_BUF_ERROR rather than Z_STREAM_END.
  int status = Z_OK;
  while (status == Z_OK && stream.avail_in > 0 && stream.avail_out > 0)
    status = inflate(&stream, Z_SYNC_FLUSH);
  const std::size_t written = out.size() - stream.avail_out;
  inflateEnd(&stream);
  if (status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR)
    fail(pb::ZLIB, "corrupt data");
  if (written != size) {
    fail(pb::ZLIB,
         "gives " + std::to_string(written) + " bytes, the metadata says " + std::to_string(size));
  }
  out.resize(size);
  return out;
}

std::string decompress_zstd(std::string_view data, std::size_t size) {
  std::string out(size + 1, '\0');
  const std::size_t written = ZSTD_decompress(out.data(), out.size(), data.data(), data.size());
  if (ZSTD_isError(written) != 0) fail(pb::ZSTD, ZSTD_getErrorName(written));
  if (written != size) {
    fail(pb::ZSTD,
         "gives " + std::to_string(written) + " bytes, the metadata says " + std::to_string(size));
  }
  out.resize(size);
  return out;
}

std::string decompress_snappy(std::string_view data, std::size_t size) {
  std::size_t length = 0;
  if (!snappy::GetUncompressedLength(data.data(), data.size(), &length))
    fail(pb::SNAPPY, "corrupt data");
  if (length != size) {
    fail(pb::SNAPPY,
         "gives " + std::to_string(length) + " bytes, the metadata says " + std::to_string(size));
  }
  std::string out(size, '\0');
  if (!snappy::RawUncompress(data.data(), data.size(), out.data()))
    fail(pb::SNAPPY, "corrupt data");
  return out;
}

}  // namespace

std::string compression_name(int type) {
  switch (type) {
    case pb::NONE:
      return "NONE";
    case pb::LZ4:
      return "LZ4";
    case pb::ZLIB:
      return "ZLIB";
    case pb::ZSTD:
      return "ZSTD";
    case pb::SNAPPY:
      return "SNAPPY";
    default:
      return "compression type " + std::to_string(type);
  }
}

std::string compress(pb::CompressionType type, std::string_view data) {
  switch (type) {
    case pb::NONE:
      return std::string(data);
    case pb::LZ4:
      return compress_lz4(data);
    case pb::ZLIB:
      return compress_zlib(data);
    case pb::ZSTD:
      return compress_zstd(data);
    case pb::SNAPPY:
      return compress_snappy(data);
  }
  fail(type, "unknown to this client");
}

std::string decompress(int type, std::string_view data, std::size_t uncompressed_size,
                       std::size_t max_size) {
  if (type == pb::NONE) return std::string(data);
  if (uncompressed_size > max_size) {
    fail(type, "uncompressed size " + std::to_string(uncompressed_size) +
                   " exceeds the maximum of " + std::to_string(max_size));
  }
  switch (type) {
    case pb::LZ4:
      return decompress_lz4(data, uncompressed_size);
    case pb::ZLIB:
      return decompress_zlib(data, uncompressed_size);
    case pb::ZSTD:
      return decompress_zstd(data, uncompressed_size);
    case pb::SNAPPY:
      return decompress_snappy(data, uncompressed_size);
    default:
      fail(type, "unknown to this client");
  }
}

}  // namespace babelqueue::pulsar::wire
