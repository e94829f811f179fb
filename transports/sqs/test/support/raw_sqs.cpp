// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "raw_sqs.hpp"

#include <curl/curl.h>

#include <stdexcept>
#include <utility>

namespace babelqueue::sqs::test {

struct RawSqs::Handle {
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  ~Handle() {
    curl_slist_free_all(headers);
    curl_easy_cleanup(easy);
  }
};

namespace {

std::size_t append(char* data, std::size_t size, std::size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

// A failed curl_easy_setopt is a broken test build, not a test failure.
template <typename T>
void set(CURL* easy, CURLoption option, T value) {
  if (curl_easy_setopt(easy, option, value) != CURLE_OK) {
    throw std::runtime_error("RawSqs: curl_easy_setopt " + std::to_string(option) + " failed");
  }
}

}  // namespace

RawSqs::RawSqs(std::string endpoint, std::string_view region, std::string_view access_key_id,
               std::string_view secret_access_key)
    : endpoint_(std::move(endpoint)), handle_(std::make_unique<Handle>()) {
  handle_->easy = curl_easy_init();
  if (handle_->easy == nullptr) throw std::runtime_error("RawSqs: curl_easy_init failed");
  CURL* easy = handle_->easy;
  const std::string sigv4 = "aws:amz:" + std::string(region) + ":sqs";
  set(easy, CURLOPT_AWS_SIGV4, sigv4.c_str());  // copied by libcurl
  set(easy, CURLOPT_USERNAME, std::string(access_key_id).c_str());
  set(easy, CURLOPT_PASSWORD, std::string(secret_access_key).c_str());
  set(easy, CURLOPT_URL, endpoint_.c_str());
  set(easy, CURLOPT_POST, 1L);
  set(easy, CURLOPT_NOSIGNAL, 1L);
  set(easy, CURLOPT_WRITEFUNCTION, &append);
}

RawSqs::~RawSqs() = default;

RawSqs::Reply RawSqs::post(std::string_view action, std::string_view body,
                           std::chrono::milliseconds timeout) {
  CURL* easy = handle_->easy;
  curl_slist_free_all(handle_->headers);
  handle_->headers = nullptr;
  for (const std::string& header : {std::string("Content-Type: application/x-amz-json-1.0"),
                                    "X-Amz-Target: AmazonSQS." + std::string(action)}) {
    curl_slist* next = curl_slist_append(handle_->headers, header.c_str());
    if (next == nullptr) throw std::runtime_error("RawSqs: out of memory");
    handle_->headers = next;
  }
  Reply reply;
  set(easy, CURLOPT_HTTPHEADER, handle_->headers);
  set(easy, CURLOPT_POSTFIELDS, body.data());
  set(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  set(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  set(easy, CURLOPT_WRITEDATA, &reply.body);
  const CURLcode code = curl_easy_perform(easy);
  if (code != CURLE_OK) {
    throw std::runtime_error("RawSqs: " + std::string(action) + " to " + endpoint_ +
                             " failed: " + curl_easy_strerror(code));
  }
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &reply.status);
  return reply;
}

babelqueue::Json RawSqs::call(std::string_view action, const babelqueue::Json& request) {
  const Reply reply = post(action, request.dump());
  if (reply.status != 200) {
    throw std::runtime_error("RawSqs: " + std::string(action) + " answered HTTP " +
                             std::to_string(reply.status) + ": " + reply.body);
  }
  // DeleteMessage, ChangeMessageVisibility, ... answer 200 with an empty body.
  return reply.body.empty() ? babelqueue::Json::object() : babelqueue::Json::parse(reply.body);
}

}  // namespace babelqueue::sqs::test
