// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The instruction cost of one consumed Redis message: publishes N order-created envelopes, then
// drains them with the App and a no-op handler inside `consume_measured`, the one function a
// callgrind run collects (see transports/redis/README.md, "Figures"):
//
//   valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*consume_measured*'
//     build/transports/redis/babelqueue_redis_consume_loop redis://127.0.0.1:PORT 20000
//
// Without valgrind it prints the drain rate, which is only indicative (one run, no warm-up).

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/redis/transport.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

namespace bq = babelqueue;

[[gnu::noinline]] bq::DrainResult consume_measured(bq::App& app, const std::string& queue,
                                                   std::size_t n) {
  return app.drain(queue, n);
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: %s URL [MESSAGES [BATCH]]\n", argv[0]);
    return 2;
  }
  try {
    const std::size_t n = argc > 2 ? std::stoul(argv[2]) : 20000;
    const std::size_t batch = argc > 3 ? std::stoul(argv[3]) : 1000;
    const std::string queue = "bench.consume." + std::to_string(::getpid());
    auto transport = std::make_shared<bq::redis::RedisTransport>(argv[1]);
    bq::App app(transport, {.default_queue = queue});
    app.handle("urn:babel:orders:created", [](bq::Context&, const bq::Envelope&) {});

    const bq::Json data = bq::Json::object({{"order_id", 1042}});
    for (std::size_t done = 0; done < n;) {
      std::vector<std::string> bodies;
      for (; bodies.size() < batch && done < n; ++done) {
        bodies.push_back(bq::encode(bq::make("urn:babel:orders:created", data, {.queue = queue})));
      }
      transport->publish_batch(queue, std::move(bodies)).throw_if_error();
    }

    const auto start = std::chrono::steady_clock::now();
    const bq::DrainResult r = consume_measured(app, queue, n);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    transport->flush().throw_if_error();
    std::printf("consumed %zu of %zu in %.3f s (%.0f msg/s)\n", r.count, n, took.count(),
                static_cast<double>(r.count) / took.count());
    return r.count == n ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
