// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Google Benchmark programs for the codec: `build/core/bench/babelqueue_codec_bench`.
// The headline figures come from `babelqueue bench codec` (median of runs); these give the
// per-operation breakdown.

#include <benchmark/benchmark.h>
#include <babelqueue/codec.hpp>

#include <string>

namespace bq = babelqueue;

namespace {

const std::string kOrderCreated =
    R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000},"attempts":0})";

void BM_DecodeAccepts(benchmark::State& state) {
  for (auto _ : state) {
    auto r = bq::try_decode(kOrderCreated);
    benchmark::DoNotOptimize(bq::accepts(*r));
  }
}
BENCHMARK(BM_DecodeAccepts);

void BM_DecodeReadData(benchmark::State& state) {
  for (auto _ : state) {
    auto r = bq::try_decode(kOrderCreated);
    benchmark::DoNotOptimize(r->data().find("order_id"));
  }
}
BENCHMARK(BM_DecodeReadData);

void BM_MakeEncode(benchmark::State& state) {
  const bq::Json data = bq::Json::object({{"order_id", 1042}});
  for (auto _ : state) {
    auto e = bq::make("urn:babel:orders:created", data, {.queue = "orders"});
    benchmark::DoNotOptimize(bq::encode(e));
  }
}
BENCHMARK(BM_MakeEncode);

void BM_RetryReencode(benchmark::State& state) {
  for (auto _ : state) {
    auto e = bq::decode(kOrderCreated);
    e.set_attempts(e.attempts() + 1);
    benchmark::DoNotOptimize(bq::encode(e));
  }
}
BENCHMARK(BM_RetryReencode);

void BM_Uuid(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(bq::uuid_v4());
}
BENCHMARK(BM_Uuid);

void BM_PoisonRecord(benchmark::State& state) {
  const std::string body = R"({"job":"urn:x","data":[1]})";
  for (auto _ : state) {
    benchmark::DoNotOptimize(bq::poison_record(body, "data: expected object", "orders", 1));
  }
}
BENCHMARK(BM_PoisonRecord);

}  // namespace
