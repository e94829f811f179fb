// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/json.hpp>
#include <babelqueue/sqs/transport.hpp>
#include <babelqueue/testing/broker_process.hpp>

#include <gtest/gtest.h>

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace babelqueue::sqs::test {

// The dummy credentials and region every test uses against the emulator.
inline constexpr std::string_view kAccessKeyId = "AKIDBABELQUEUETEST";
inline constexpr std::string_view kSecretAccessKey = "babelqueue/test/secret+KEY";
inline constexpr std::string_view kRegion = "us-east-1";

// Why no SQS emulator can be started here (its runtime or package is missing and cannot be
// fetched), or nullopt when one can. The first call installs the emulator into the build tree
// (once per build tree).
std::optional<std::string> sqs_emulator_unavailable();

// A private SQS emulator for tests (BROKERS.md "Amazon SQS"; which one and why:
// transports/sqs/README.md), on the testing kit's BrokerProcess: listening on 127.0.0.1 and a
// free port, its state in a fresh data directory, its log printed when a test fails. The PID is
// the emulator's own process (exec'd, no shell parent): kill() is a real kill -9.
//
// Thread-safety: not thread-safe; use one object from one thread (the test's main thread).
class SqsEmulator : public babelqueue::testing::BrokerFixture {
 public:
  // Starts the emulator and waits until it answers ListQueues (up to 60 s). Throws
  // std::runtime_error (with the log tail) when it does not come up or
  // sqs_emulator_unavailable().
  SqsEmulator();

  int port() const { return node().port(0); }
  // "http://127.0.0.1:PORT".
  std::string endpoint() const;
  // "sqs://<kAccessKeyId>:<kSecretAccessKey, percent-encoded>@us-east-1?endpoint=<endpoint()>",
  // plus "&" + `query` when it is not empty (e.g. "prefetch=1&ack_flush_interval=10").
  std::string url(std::string_view query = "") const;
  // Options for a transport on this emulator: region, endpoint, the dummy credentials.
  Options options() const;

  // --- administration, by the raw client (never through the transport) ---
  // CreateQueue with `attributes` (e.g. {"VisibilityTimeout","2"}, {"FifoQueue","true"},
  // {"RedrivePolicy", R"({"deadLetterTargetArn":"...","maxReceiveCount":"2"})"}); returns the
  // queue URL the emulator reports.
  std::string create_queue(std::string_view name,
                           const std::map<std::string, std::string>& attributes = {});
  // The queue's ARN (GetQueueAttributes QueueArn), for a RedrivePolicy.
  std::string queue_arn(std::string_view name);
  // Every attribute of GetQueueAttributes ["All"].
  std::map<std::string, std::string> queue_attributes(std::string_view name);
  // One raw, signed JSON 1.0 call: `action` (e.g. "ReceiveMessage") with `request`; returns the
  // parsed response body. Throws std::runtime_error with the status and body on a non-200.
  babelqueue::Json call(std::string_view action, const babelqueue::Json& request);
  // Every message currently visible in `name` (received, held for a moment, until a receive
  // brings none, de-duplicated by MessageId, then all released with ChangeMessageVisibility 0):
  // for "what is in the DLQ" checks. Raises receive counts; in a FIFO queue it sees only the
  // first 10 messages of each group (a group is locked while one of its messages is held).
  std::size_t approximate_depth(std::string_view name);

  // --- process control: pid(), kill(), stop(), restart() (same port and data directory),
  // log_tail(): BrokerFixture's. Whether queues and messages survive a restart is the
  // emulator's (README); tests of a restart re-create what they need when `persistent()` is
  // false.
  // True when queues and messages survive restart() (the emulator persists them).
  bool persistent() const;
};

// The emulator every test of this test process shares, started by the first call and stopped
// at exit. Tests that kill or restart their emulator start an SqsEmulator of their own. Call it
// from the main thread only.
SqsEmulator& shared_sqs_emulator();

}  // namespace babelqueue::sqs::test

// Skips the current test, saying why, when no SQS emulator can be started here; fails it instead
// under CI (TRANSPORTS.md: tests are never skipped there).
#define BABELQUEUE_REQUIRE_SQS_EMULATOR() \
  BABELQUEUE_REQUIRE_BROKER(::babelqueue::sqs::test::sqs_emulator_unavailable())
