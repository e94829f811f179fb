// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The transport blocks, run live against the run's transport (Runner::live): today `redis`,
// whose `payload_identity` holds for every transport (03 RDS-70, RT-2, RT-3): the produced
// envelope is stored and reserved byte for byte, with no wrapping and no added field.

#include "blocks/blocks.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/spi/secure_random.hpp>
#include <babelqueue/transport.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue::conformance::detail {

namespace {

using std::chrono::milliseconds;

// How long a published message may take to become reservable.
constexpr milliseconds kPopTimeout{5000};
// Cleaning up after a failed case: pop (and ack) until a pop waits this long, at most kDrainMax.
constexpr milliseconds kDrainTimeout{200};
constexpr std::size_t kDrainMax = 16;

std::string unique_queue() {
  return "babelqueue-conformance-" + spi::secure_random_hex(6);
}

// The sizes of `want` and `got` and where they first differ, for a failure message.
std::string difference(std::string_view want, std::string_view got) {
  const auto [w, g] = std::mismatch(want.begin(), want.end(), got.begin(), got.end());
  const auto at = static_cast<std::size_t>(w - want.begin());
  const auto excerpt = [at](std::string_view s) {
    return at < s.size() ? quote(s.substr(at, 16)) : std::string("(end)");
  };
  return std::to_string(want.size()) + " bytes produced, " + std::to_string(got.size()) +
         " returned; first difference at byte " + std::to_string(at) + ": produced " +
         excerpt(want) + ", returned " + excerpt(got);
}

// The case's optional `headers` object (string values), published through HeaderPublisher.
Headers headers_of(const Json& c) {
  Headers out;
  const Json* headers = c.find("headers");
  if (headers == nullptr) return out;
  for (const auto& [key, value] : object_member(c, "headers")) {
    if (!value.is_string()) fail("manifest: header " + quote(key) + " is not a string");
    out.emplace(key, value.as_string());
  }
  return out;
}

void check_headers(Problems& p, const std::string& where, const Headers& want, const Headers& got) {
  for (const auto& [key, value] : want) {
    const auto it = got.find(key);
    p.check(it != got.end() && it->second == value,
            where + " header " + quote(key) + ": expected " + quote(value) + ", got " +
                (it == got.end() ? std::string("(absent)") : quote(it->second)));
  }
}

// Pops and acknowledges whatever a failed case left in its queue, unless the case settled it.
class Cleanup {
 public:
  Cleanup(Transport& transport, std::string queue)
      : transport_(transport), queue_(std::move(queue)) {}
  Cleanup(const Cleanup&) = delete;
  Cleanup& operator=(const Cleanup&) = delete;
  ~Cleanup() {
    if (settled_) return;
    try {
      for (std::size_t i = 0; i < kDrainMax; ++i) {
        auto popped = transport_.pop(queue_, kDrainTimeout);
        if (!popped || !*popped) break;
        (void)transport_.ack(**popped);
      }
      if (auto* flusher = capability<Flusher>(transport_)) (void)flusher->flush();
    } catch (...) {  // NOLINT(bugprone-empty-catch): best effort, the case failed already
    }
  }
  void settled() noexcept { settled_ = true; }

 private:
  Transport& transport_;
  std::string queue_;
  bool settled_ = false;
};

// publish -> (peek) -> pop -> ack on a fresh queue: the bytes come back exactly as produced.
void check_payload_identity(Transport& t, const std::string& bytes, const Headers& headers) {
  const std::string queue = unique_queue();
  Cleanup cleanup(t, queue);
  Status published;
  if (headers.empty()) {
    published = t.publish(queue, bytes);
  } else if (auto* with_headers = capability<HeaderPublisher>(t)) {
    published = with_headers->publish_with_headers(queue, bytes, headers);
  } else {
    fail("the case carries headers and the transport has no HeaderPublisher capability");
  }
  if (!published) fail("publish to " + queue + " failed: " + published.error().what());

  Problems p;
  auto* inspector = capability<Inspector>(t);
  if (inspector != nullptr) {
    const auto stored = inspector->peek(queue, 0);
    if (!stored) {
      p.add(std::string("peek failed: ") + stored.error().what());
    } else if (stored->size() != 1) {
      p.add("peek: the queue holds " + std::to_string(stored->size()) + " messages, expected 1");
    } else {
      const PeekedMessage& m = stored->front();
      p.check(m.body == bytes, "the stored element is not the produced envelope byte for byte: " +
                                   difference(bytes, m.body));
      check_headers(p, "stored", headers, m.headers);
    }
  }

  auto popped = t.pop(queue, kPopTimeout);
  if (!popped) p.fail_with(std::string("pop failed: ") + popped.error().what());
  if (!*popped) {
    p.fail_with("pop reserved nothing within " + std::to_string(kPopTimeout.count()) + " ms");
  }
  const ReceivedMessage& m = **popped;
  p.check(m.body == bytes, "the reserved element is not the produced envelope byte for byte: " +
                               difference(bytes, m.body));
  p.check(m.queue == queue, "reserved from " + quote(m.queue) + ", not " + quote(queue));
  p.check(!m.poison, "the transport flagged the envelope as poison: " + m.poison_reason);
  check_headers(p, "reserved", headers, m.headers);
  if (const auto decoded = try_decode(m.body); !decoded) {
    p.add(std::string("the reserved element does not decode: ") + decoded.error().what());
  }

  const Status acked = t.ack(m);
  p.check(acked.ok(), std::string("ack failed: ") + (acked.ok() ? "" : acked.error().what()));
  if (auto* flusher = capability<Flusher>(t)) {
    const Status flushed = flusher->flush();
    p.check(flushed.ok(),
            std::string("flush failed: ") + (flushed.ok() ? "" : flushed.error().what()));
  }
  bool empty = acked.ok();
  if (inspector != nullptr) {
    const auto left = inspector->peek(queue, 0);
    const auto stats = inspector->stats(queue, "");
    empty = empty && left && left->empty() && stats && stats->in_flight.value_or(0) == 0;
    p.check(empty, "after the reserve and the ack, the queue is not empty (" +
                       (left ? std::to_string(left->size()) : std::string("?")) + " ready, " +
                       (stats ? std::to_string(stats->in_flight.value_or(0)) : std::string("?")) +
                       " in flight)");
  }
  if (empty) cleanup.settled();
  p.finish();
}

void run_redis(Runner& r, const std::string& block, const Json& value) {
  r.sub_blocks(block, "", value, {"payload_identity"});
  const Json* identity = value.find("payload_identity");
  if (identity == nullptr) return;
  const std::string name = "payload_identity";
  std::string bytes;
  Headers headers;
  const bool well_formed = r.guard(block, name + " (members)", [&] {
    known_members(*identity, {"description", "envelope_file", "headers"});
    bytes = r.fixture(*identity, "envelope_file");
    headers = headers_of(*identity);
  });
  if (!well_formed) return;
  r.live(block, name, [&](Transport& t) { check_payload_identity(t, bytes, headers); });
}

}  // namespace

void register_transport_blocks(Registry& registry) {
  registry.add("redis", BlockKind::Transport, run_redis);
}

}  // namespace babelqueue::conformance::detail
