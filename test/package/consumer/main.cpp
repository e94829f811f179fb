// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/codec.hpp>
#include <babelqueue/open.hpp>
#include <babelqueue/spi/registry.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#if BABELQUEUE_CONSUMER_REDIS
constexpr bool kRedis = true;
#else
constexpr bool kRedis = false;
#endif

namespace {

bool has_scheme(std::string_view scheme) {
  const std::vector<std::string> schemes = babelqueue::available_schemes();
  return std::find(schemes.begin(), schemes.end(), scheme) != schemes.end();
}

// The ConfigError text open_transport(url) throws, or "" when it opens.
std::string open_error(const std::string& url) {
  try {
    if (!babelqueue::open_transport(url)) return "open_transport returned nothing";
    return "";
  } catch (const babelqueue::ConfigError& e) {
    return e.what();
  }
}

bool fail(const std::string& why) {
  std::fprintf(stderr, "%s\n", why.c_str());
  return false;
}

// Makes an envelope, encodes it, decodes the bytes and checks that nothing changed.
bool round_trip() {
  const babelqueue::Envelope sent =
      babelqueue::make("urn:babel:orders:created", babelqueue::Json::object({{"order_id", 1042}}),
                       {.queue = "orders"});
  const std::string wire = babelqueue::encode(sent);
  const babelqueue::Envelope received = babelqueue::decode(wire);
  const bool same = babelqueue::encode(received) == wire && received.urn() == sent.urn() &&
                    received.trace_id() == sent.trace_id() &&
                    received.meta().id == sent.meta().id && received.meta().queue == "orders" &&
                    received.data() == sent.data() && babelqueue::accepts(received);
  if (!same) return fail("round trip mismatch for " + wire);
  std::printf("%s\n", wire.c_str());
  return true;
}

// Linking babelqueue::redis is all it takes to open redis:// (issue 8 item 4): this file never
// names the Redis transport, so only the component's link option keeps its registration object in
// a static link, and its shared library in an --as-needed link. Opening does no I/O.
bool schemes() {
  if (!has_scheme("memory")) return fail("memory:// is not available");
  if (!open_error("memory://").empty()) return fail("memory://: " + open_error("memory://"));
  for (const char* scheme : {"redis", "rediss", "unix"}) {
    if (has_scheme(scheme) != kRedis)
      return fail(std::string("unexpected availability of ") + scheme);
  }
  const std::string redis = open_error("redis://127.0.0.1:1/0");
  if (kRedis && !redis.empty()) return fail("redis://: " + redis);
  if (!kRedis && redis.find("-DBABELQUEUE_WITH_REDIS=ON") == std::string::npos) {
    return fail("redis:// error does not name the CMake option: " + redis);
  }
  // The catalog generated at configure time is in the library: it names the component of a
  // scheme this program did not link (built or not), and how to get it.
  const std::string unlinked = open_error("kafka://user:s3cret@localhost/");
  if (unlinked.find("The kafka component serves it") == std::string::npos ||
      (unlinked.find("link babelqueue::kafka") == std::string::npos &&
       unlinked.find("-DBABELQUEUE_WITH_KAFKA=ON") == std::string::npos) ||
      unlinked.find("s3cret") != std::string::npos) {
    return fail("unexpected kafka:// error: " + unlinked);
  }
  const std::vector<babelqueue::spi::KnownTransport> known = babelqueue::spi::known_transports();
  const auto entry = std::find_if(known.begin(), known.end(),
                                  [](const auto& k) { return k.component == "redis"; });
  if (entry == known.end() || entry->built != kRedis) return fail("unexpected redis catalog entry");
  return true;
}

}  // namespace

int main() {
  try {
    return round_trip() && schemes() ? 0 : 1;
  } catch (const babelqueue::Error& e) {
    std::fprintf(stderr, "babelqueue::Error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "std::exception: %s\n", e.what());
  }
  return 1;
}
