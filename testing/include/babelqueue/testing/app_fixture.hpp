// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/app.hpp>
#include <babelqueue/errors.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

/// @file
/// What the transports' App tests (`transports/*/test/app_flow_test.cpp`) share: the failure a
/// handler returns, and one App with the transport it runs on for the length of a test.

namespace babelqueue::testing {

/// A handler's failure (ErrorCode::Handler) saying `why`.
inline Status handler_failure(std::string_view why) {
  return Error(ErrorCode::Handler, std::string(why));
}

/// One App and the transport `T` it runs on; `start` replaces both (the App first).
///
/// Thread-safety: a test's fixture member; used from the test's thread.
template <class T>
class AppOn {
 public:
  /// An App on `transport` with `options`, whose pops wait up to `poll_timeout` (a drain that
  /// finds nothing, and how long a consume takes to notice stop()).
  App& start(std::shared_ptr<T> transport, AppOptions options,
             std::chrono::milliseconds poll_timeout) {
    app_.reset();
    transport_ = std::move(transport);
    options.poll_timeout = poll_timeout;
    app_ = std::make_unique<App>(transport_, std::move(options));
    return *app_;
  }
  /// The transport of the App `start` made last.
  [[nodiscard]] T& transport() const { return *transport_; }

 private:
  std::shared_ptr<T> transport_;
  std::unique_ptr<App> app_;  // declared after transport_: it goes first
};

}  // namespace babelqueue::testing
