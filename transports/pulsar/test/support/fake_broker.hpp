// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/json.hpp>
#include <babelqueue/testing/broker_process.hpp>
#include <babelqueue/testing/command.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::pulsar::test {

// Why the fake Pulsar broker cannot be started here (no node, its npm packages could not be
// installed by testing/peers/pulsar/install.sh), or nullopt when it can. The first call installs
// the packages into the build tree (once per build tree, ~1 s from the npm registry).
std::optional<std::string> fake_broker_unavailable();

// Runs the fake's self-check, testing/peers/pulsar/check.sh BUILD_DIR `args` (e.g. {"--broker",
// URL}: its pulsar-flex checks against that broker), and returns its exit status and output.
babelqueue::testing::CommandResult run_fake_broker_check(const std::vector<std::string>& args);

// Runs `node script args` with NODE_PATH set to the node_modules of testing/peers/pulsar
// (pulsar-flex 1.1.1 among them), `input` on its stdin: an independent client for the interop
// tests. Throws std::runtime_error when fake_broker_unavailable() (check it first:
// BABELQUEUE_REQUIRE_FAKE_PULSAR).
babelqueue::testing::CommandResult run_node_peer(const std::string& script,
                                                 const std::vector<std::string>& args,
                                                 const std::string& input = {});

// The scripted fake Pulsar broker (testing/peers/pulsar/peer.js, its README) as a test fixture,
// on the testing kit's BrokerProcess: node on 127.0.0.1 and three free ports (the broker, a
// second listener lookups can redirect to, the control channel), stopped by PID, its stderr in
// the BrokerProcess log (printed when a test fails). Memory only: a restart empties it.
//
// Thread-safety: not thread-safe; use one object from one thread (the test's main thread).
class FakeBroker : public babelqueue::testing::BrokerFixture {
 public:
  // Starts `peer.js` with `args` (e.g. {"--token", "secret"}) and waits until its control
  // channel answers (0.2-0.7 s). Throws std::runtime_error (with the log tail) when it does not
  // come up or fake_broker_unavailable().
  explicit FakeBroker(std::vector<std::string> args = {});

  // "pulsar://127.0.0.1:PORT" of the broker and of its second listener.
  std::string url() const;
  std::string second_url() const;

  // One control command (README "Control channel"), e.g. "drop", "stats TOPIC SUB"; the reply.
  // Throws std::runtime_error with the fake's reason when it answers {"ok":false}.
  Json control(std::string_view line) const;
  // control("enqueue " + spec.dump()).
  Json enqueue(const Json& spec) const;

  // The integer at `path` in `json` (object members by name, array items by index), e.g.
  // number(stats, {"subscriptions", "s", "consumers", "0", "granted"}). Throws
  // std::runtime_error naming the path when it is missing or not an integer.
  static std::int64_t number(const Json& json, std::initializer_list<std::string_view> path);

  // pid(), log_tail(), kill(), restart() (empty again): BrokerFixture's, of the node process.
};

}  // namespace babelqueue::pulsar::test

// Skips the current test, saying why, when the fake broker cannot be started here; fails it
// instead under CI (TRANSPORTS.md: tests are never skipped there).
#define BABELQUEUE_REQUIRE_FAKE_PULSAR() \
  BABELQUEUE_REQUIRE_BROKER(::babelqueue::pulsar::test::fake_broker_unavailable())
