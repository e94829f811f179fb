// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <batch.hpp>
#include <compression.hpp>
#include <crc32c.hpp>
#include <frame.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

// The Pulsar protocol codec (transports/pulsar/src, issue 13) on any bytes, as a consumer takes
// them from a broker: frames split by the FrameReader (fed in two pieces), each payload section
// verified and parsed, its payload decompressed as its metadata says and split when it is a
// batch. Bytes from the peer may only ever give a ProtocolError: anything else (a crash, another
// exception, a hang) is a finding. The checksum is not a barrier: a frame whose CRC32C is wrong
// is also fed with the right one.

namespace {

namespace wire = babelqueue::pulsar::wire;

// Small limits keep each run fast; the code paths are those of the real ones.
constexpr std::size_t kMaxFrame = 256U * 1024U;
constexpr std::size_t kMaxUncompressed = 256U * 1024U;

void consume_payload(std::string_view section) {
  const wire::Message message = wire::decode_message(section);
  const std::string payload =
      wire::decompress(message.metadata.compression(), message.payload,
                       message.metadata.uncompressed_size(), kMaxUncompressed);
  if (message.metadata.has_num_messages_in_batch()) {
    for (const wire::BatchEntry& entry :
         wire::split_batch(payload, message.metadata.num_messages_in_batch())) {
      if (entry.payload.data() < payload.data() ||
          entry.payload.data() + entry.payload.size() > payload.data() + payload.size()) {
        std::fprintf(stderr, "fuzz_pulsar_frame: a batch entry outside its batch\n");
        std::abort();
      }
    }
  }
}

// The section with its checksum set right, so that the bytes behind it get parsed too.
std::optional<std::string> with_valid_checksum(std::string_view section) {
  if (section.size() < 6 || static_cast<unsigned char>(section[0]) != 0x0e || section[1] != 0x01) {
    return std::nullopt;
  }
  std::string fixed(section);
  const std::uint32_t crc = wire::crc32c(section.substr(6));
  for (std::size_t i = 0; i < 4; ++i)
    fixed[2 + i] = static_cast<char>((crc >> (24 - 8 * i)) & 0xffU);
  return fixed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  wire::FrameReader reader(kMaxFrame);
  try {
    reader.feed(bytes.substr(0, size / 2));
    while (reader.next()) {
    }
    reader.feed(bytes.substr(size / 2));
    while (std::optional<wire::Frame> frame = reader.next()) {
      if (frame->payload_section.empty()) continue;
      try {
        consume_payload(frame->payload_section);
      } catch (const wire::ProtocolError&) {
      }
      if (const std::optional<std::string> fixed = with_valid_checksum(frame->payload_section)) {
        try {
          consume_payload(*fixed);
        } catch (const wire::ProtocolError&) {
        }
      }
    }
  } catch (const wire::ProtocolError&) {
  }
  return 0;
}
