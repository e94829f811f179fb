// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/json.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace babelqueue::sqs::test {

// A raw SQS client for test administration and checks, independent of the transport: libcurl's
// own SigV4 signer (CURLOPT_AWS_SIGV4 "aws:amz:<region>:sqs") and the AWS JSON 1.0 protocol
// (POST /, X-Amz-Target: AmazonSQS.<action>), on one keep-alive connection.
//
// Thread-safety: not thread-safe; one object per thread.
class RawSqs {
 public:
  // What came back: any HTTP status, the raw body.
  struct Reply {
    long status = 0;
    std::string body;
  };

  // Throws std::runtime_error when libcurl cannot be initialised.
  RawSqs(std::string endpoint, std::string_view region, std::string_view access_key_id,
         std::string_view secret_access_key);
  ~RawSqs();
  RawSqs(const RawSqs&) = delete;
  RawSqs& operator=(const RawSqs&) = delete;
  RawSqs(RawSqs&&) = delete;
  RawSqs& operator=(RawSqs&&) = delete;

  // One signed request with `body` (JSON text); bounded by `timeout`. Throws std::runtime_error
  // on a network failure (refused, reset, timeout).
  Reply post(std::string_view action, std::string_view body,
             std::chrono::milliseconds timeout = std::chrono::milliseconds{30'000});
  // post() with `request` serialised; the parsed body of a 200 (an empty one: {}). Throws
  // std::runtime_error naming the action, the status and the body otherwise.
  babelqueue::Json call(std::string_view action, const babelqueue::Json& request);

 private:
  struct Handle;
  std::string endpoint_;
  std::unique_ptr<Handle> handle_;
};

}  // namespace babelqueue::sqs::test
