// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The broker of scripts/bench-pulsar: the tests' PulsarServer (a private Pulsar 4.2.4 standalone
// on 127.0.0.1 and free ports, test/support/pulsar_server.hpp) started for a script. Prints
// "<service url> <admin url> <start-up ms>" on one line once the broker is ready, then holds it
// until its standard input ends (the script closes it), and stops it by PID.

#include <chrono>
#include <exception>
#include <iostream>
#include <string>

#include "pulsar_server.hpp"

int main() {
  try {
    if (const auto why = babelqueue::pulsar::test::pulsar_server_unavailable()) {
      std::cerr << "run_broker: no Pulsar broker can be started here: " << *why << "\n";
      return 1;
    }
    babelqueue::pulsar::test::PulsarServer server;
    std::cout << server.service_url() << " " << server.admin_url() << " "
              << server.started_in().count() << std::endl;
    std::string line;
    while (std::getline(std::cin, line)) {
    }
    server.stop();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "run_broker: " << e.what() << "\n";
    return 1;
  }
}
