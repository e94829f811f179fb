// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// make_curl_client: a pool of libcurl easy handles. Each handle keeps its keep-alive HTTP/1.1
// connection between requests, so a request takes an idle handle (or makes one), performs, and
// gives it back; at most `max_connections` idle handles are kept. close() raises a flag that the
// transfer-progress callback of every request in flight checks, which aborts it.

#include <babelqueue/sqs/transport.hpp>

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue::sqs {
namespace {

struct EasyDeleter {
  void operator()(CURL* curl) const noexcept { curl_easy_cleanup(curl); }
};
using Easy = std::unique_ptr<CURL, EasyDeleter>;

struct SlistDeleter {
  void operator()(curl_slist* list) const noexcept { curl_slist_free_all(list); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

void global_init() {
  static std::once_flag once;
  static CURLcode code = CURLE_OK;
  std::call_once(once, [] { code = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (code != CURLE_OK) {
    throw ConfigError(std::string("sqs: libcurl cannot be initialised: ") +
                      curl_easy_strerror(code));
  }
}

// The host[:port] of `url`, without any user info: what error texts may name.
std::string host_of(std::string_view url) {
  const std::size_t scheme = url.find("://");
  std::string_view rest = scheme == std::string_view::npos ? url : url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  const std::size_t at = rest.rfind('@');
  return std::string(at == std::string_view::npos ? rest : rest.substr(at + 1));
}

struct Transfer {
  HttpResponse response;
  const std::atomic<bool>* closed = nullptr;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  static_cast<Transfer*>(user)->response.body.append(data, size * count);
  return size * count;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& headers = static_cast<Transfer*>(user)->response.headers;
  std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {
    headers.clear();  // a new response (after a 100 Continue): only the last one counts
    return size * count;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * count;
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
    value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
    value.remove_suffix(1);
  headers.emplace_back(std::move(name), std::string(value));
  return size * count;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<Transfer*>(user)->closed->load(std::memory_order_acquire) ? 1 : 0;
}

class CurlClient final : public HttpClient {
 public:
  explicit CurlClient(CurlOptions options) : options_(std::move(options)) {}
  ~CurlClient() override { close(); }
  CurlClient(const CurlClient&) = delete;
  CurlClient& operator=(const CurlClient&) = delete;

  Result<HttpResponse> post(const HttpRequest& request) override {
    if (closed_.load(std::memory_order_acquire)) return ClosedError("sqs http client: closed");
    Easy easy = acquire();
    if (!easy) return TransportError("sqs: libcurl could not make a handle", true);
    Transfer transfer;
    transfer.closed = &closed_;
    Slist headers;
    for (const auto& [name, value] : request.headers) {
      const std::string line = name + ": " + value;
      curl_slist* grown = curl_slist_append(headers.get(), line.c_str());
      if (grown == nullptr) return TransportError("sqs: out of memory for the headers", true);
      (void)headers.release();
      headers.reset(grown);
    }
    // No "Expect: 100-continue" round trip for bodies over 1 KiB.
    curl_slist* grown = curl_slist_append(headers.get(), "Expect:");
    if (grown == nullptr) return TransportError("sqs: out of memory for the headers", true);
    (void)headers.release();
    headers.reset(grown);

    char error[CURL_ERROR_SIZE] = {};
    CURL* h = easy.get();
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &transfer);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &transfer);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(options_.connect_timeout.count()));
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, options_.verify_tls ? 1L : 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, options_.verify_tls ? 2L : 0L);
    if (!options_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options_.ca_file.c_str());
    const CURLcode code = curl_easy_perform(h);
    // The handle must not keep pointers into this frame.
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
    if (code == CURLE_OK) {
      curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &transfer.response.status);
      release(std::move(easy));
      return std::move(transfer.response);
    }
    const std::string host = host_of(request.url);
    if (code == CURLE_ABORTED_BY_CALLBACK && closed_.load(std::memory_order_acquire)) {
      return ClosedError("sqs http client: " + request.action + " to " + host +
                         " aborted by close()");
    }
    const std::string detail = error[0] != '\0' ? error : curl_easy_strerror(code);
    if (code == CURLE_OPERATION_TIMEDOUT) {
      return TimeoutError("sqs: " + request.action + " to " + host + " timed out: " + detail);
    }
    return TransportError("sqs: " + request.action + " to " + host + " failed: " + detail, true);
  }

  void close() override {
    closed_.store(true, std::memory_order_release);
    std::vector<Easy> idle;
    {
      std::lock_guard<std::mutex> lock(mu_);
      idle.swap(idle_);
    }
  }

 private:
  Easy acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        Easy easy = std::move(idle_.back());
        idle_.pop_back();
        return easy;
      }
    }
    return Easy(curl_easy_init());
  }

  void release(Easy easy) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!closed_.load(std::memory_order_acquire) && idle_.size() < options_.max_connections) {
      idle_.push_back(std::move(easy));
    }
  }

  const CurlOptions options_;
  std::atomic<bool> closed_{false};
  std::mutex mu_;
  std::vector<Easy> idle_;
};

}  // namespace

std::shared_ptr<HttpClient> make_curl_client(CurlOptions options) {
  global_init();
  if (!options.ca_file.empty() && !std::filesystem::exists(options.ca_file)) {
    throw ConfigError("sqs: the CA file \"" + options.ca_file + "\" does not exist");
  }
  if (options.max_connections == 0) options.max_connections = 1;
  return std::make_shared<CurlClient>(std::move(options));
}

}  // namespace babelqueue::sqs
