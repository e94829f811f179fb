// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <string>

/// @file
/// Testing kit: throwaway TLS material for brokers started by tests (their TLS listeners).

namespace babelqueue::testing {

// Makes, with `openssl` (an absolute path), into the directory `dir` (created when missing): a
// CA (ca.pem, ca.key), a server certificate for localhost / 127.0.0.1 it signs (server.pem,
// server.key; CN localhost, subjectAltName DNS:localhost and IP:127.0.0.1, serverAuth) and an
// unrelated CA that signs nothing (wrong-ca.pem, for a failing verification). P-256 keys (made
// in milliseconds), valid for ten years. Throws std::runtime_error naming the openssl step that
// failed and its output.
void make_test_certificates(const std::string& openssl, const std::string& dir);

}  // namespace babelqueue::testing
