// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/codec.hpp>
#if BABELQUEUE_CONSUMER_REDIS
#include <babelqueue/redis/transport.hpp>
#endif

#include <cstdio>
#include <exception>
#include <string>

// Makes an envelope, encodes it, decodes the bytes and checks that nothing changed.
int main() {
  try {
    const babelqueue::Envelope sent =
        babelqueue::make("urn:babel:orders:created", babelqueue::Json::object({{"order_id", 1042}}),
                         {.queue = "orders"});
    const std::string wire = babelqueue::encode(sent);
    const babelqueue::Envelope received = babelqueue::decode(wire);
    const bool same = babelqueue::encode(received) == wire && received.urn() == sent.urn() &&
                      received.trace_id() == sent.trace_id() &&
                      received.meta().id == sent.meta().id && received.meta().queue == "orders" &&
                      received.data() == sent.data() && babelqueue::accepts(received);
    if (!same) {
      std::fprintf(stderr, "round trip mismatch for %s\n", wire.c_str());
      return 1;
    }
#if BABELQUEUE_CONSUMER_REDIS
    // The transport connects lazily: building one and asking for its keys needs no server.
    const babelqueue::redis::RedisTransport transport("redis://127.0.0.1:6379/0?layout=laravel");
    if (transport.keys("orders").ready != "queues:orders") {
      std::fprintf(stderr, "unexpected redis keys\n");
      return 1;
    }
#endif
    std::printf("%s\n", wire.c_str());
    return 0;
  } catch (const babelqueue::Error& e) {
    std::fprintf(stderr, "babelqueue::Error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "std::exception: %s\n", e.what());
  }
  return 1;
}
