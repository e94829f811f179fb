// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// make_curl_client (SQS-2 `client`, D-11 connection reuse) against a tiny HTTP/1.1 listener on
// 127.0.0.1: responses and lower-cased headers, keep-alive reuse, close() aborting a request in
// flight, and error classes that name the host but no header value.

#include <babelqueue/sqs/transport.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace babelqueue::sqs {
namespace {

using namespace std::chrono_literals;

// Serves HTTP/1.1 requests on 127.0.0.1 (keep-alive, Content-Length bodies) with one canned
// response, or never answers when `hang` is set; counts the connections it accepted.
class LoopbackServer {
 public:
  explicit LoopbackServer(bool hang = false) : hang_(hang) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 8), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~LoopbackServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  [[nodiscard]] std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/";
  }
  [[nodiscard]] int connections() const { return connections_.load(); }
  [[nodiscard]] int requests() const { return requests_.load(); }

 private:
  void serve() {
    std::vector<int> clients;
    std::vector<std::string> buffers;
    while (!stop_) {
      std::vector<pollfd> fds{{fd_, POLLIN, 0}};
      for (const int c : clients)
        fds.push_back({c, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
      if ((fds[0].revents & POLLIN) != 0) {
        clients.push_back(::accept(fd_, nullptr, nullptr));
        buffers.emplace_back();
        ++connections_;
      }
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP)) == 0) continue;
        char buf[4096];
        const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
        if (n <= 0) {
          ::close(fds[i].fd);
          clients[i - 1] = -1;
          continue;
        }
        std::string& in = buffers[i - 1];
        in.append(buf, static_cast<std::size_t>(n));
        answer(fds[i].fd, in);
      }
      for (std::size_t i = clients.size(); i-- > 0;) {
        if (clients[i] >= 0) continue;
        clients.erase(clients.begin() + static_cast<std::ptrdiff_t>(i));
        buffers.erase(buffers.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    for (const int c : clients)
      ::close(c);
  }

  // Answers every complete request in `in`.
  void answer(int fd, std::string& in) {
    for (;;) {
      const std::size_t head = in.find("\r\n\r\n");
      if (head == std::string::npos) return;
      std::size_t length = 0;
      const std::size_t cl = in.find("Content-Length: ");
      if (cl != std::string::npos && cl < head) length = std::stoul(in.substr(cl + 16));
      if (in.size() < head + 4 + length) return;
      in.erase(0, head + 4 + length);
      ++requests_;
      if (hang_) continue;
      const std::string response =
          "HTTP/1.1 400 Bad Request\r\nX-Amzn-RequestId: r-1\r\nX-Amzn-Query-Error: "
          "AWS.SimpleQueueService.NonExistentQueue;Sender\r\nContent-Length: 2\r\n\r\n{}";
      (void)::write(fd, response.data(), response.size());
    }
  }

  bool hang_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

HttpRequest request(std::string url, std::chrono::milliseconds timeout = 5s) {
  HttpRequest r;
  r.url = std::move(url);
  r.action = "GetQueueUrl";
  r.headers = {{"Content-Type", "application/x-amz-json-1.0"},
               {"Authorization", "AWS4-HMAC-SHA256 Signature=deadbeefcafe"}};
  r.body = std::string(2000, 'x');  // over 1 KiB: no Expect: 100-continue round trip
  r.timeout = timeout;
  return r;
}

TEST(SqsCurlClient, DI11_ResponsesAndKeepAliveReuse) {
  LoopbackServer server;
  auto client = make_curl_client();
  for (int i = 0; i < 3; ++i) {
    auto r = client->post(request(server.url()));
    ASSERT_TRUE(r.has_value()) << r.error().what();
    EXPECT_EQ(r->status, 400);
    EXPECT_EQ(r->body, "{}");
    std::vector<std::pair<std::string, std::string>> expected{
        {"x-amzn-requestid", "r-1"},
        {"x-amzn-query-error", "AWS.SimpleQueueService.NonExistentQueue;Sender"},
        {"content-length", "2"}};
    EXPECT_EQ(r->headers, expected);
  }
  EXPECT_EQ(server.requests(), 3);
  EXPECT_EQ(server.connections(), 1);  // one keep-alive connection for all three
}

TEST(SqsCurlClient, DI11_ConcurrentRequestsUseSeveralHandles) {
  LoopbackServer server;
  auto client = make_curl_client();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        if (client->post(request(server.url())).has_value()) ++ok;
      }
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(ok.load(), 20);
  EXPECT_LE(server.connections(), 4);
}

TEST(SqsCurlClient, SQS17_CloseAbortsARequestInFlight) {
  LoopbackServer server(/*hang=*/true);
  auto client = make_curl_client();
  std::optional<Result<HttpResponse>> result;
  std::thread poll([&] { result.emplace(client->post(request(server.url(), 30s))); });
  while (server.requests() == 0)
    std::this_thread::sleep_for(5ms);
  const auto closed_at = std::chrono::steady_clock::now();
  client->close();
  poll.join();
  // libcurl calls the progress callback about once a second while it waits.
  EXPECT_LT(std::chrono::steady_clock::now() - closed_at, 2s);
  ASSERT_TRUE(result.has_value());
  ASSERT_FALSE(result->has_value());
  EXPECT_EQ(result->error().code(), ErrorCode::Closed);
  EXPECT_EQ(client->post(request(server.url())).error().code(), ErrorCode::Closed);
  client->close();  // idempotent
}

TEST(SqsCurlClient, SQS17_TimeoutAndRefusedNameTheHostNotTheHeaders) {
  auto client = make_curl_client();
  {
    LoopbackServer server(/*hang=*/true);
    auto r = client->post(request(server.url(), 200ms));
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), ErrorCode::Timeout);
    EXPECT_TRUE(r.error().is_transient());
  }
  int port = 0;
  {
    LoopbackServer gone;  // a port nothing listens on once it is destroyed
    port = std::stoi(gone.url().substr(17));
  }
  auto r = client->post(request("http://127.0.0.1:" + std::to_string(port) + "/"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::Transport);
  EXPECT_TRUE(r.error().is_transient());
  const std::string what = r.error().what();
  EXPECT_NE(what.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << what;
  EXPECT_NE(what.find("GetQueueUrl"), std::string::npos) << what;
  EXPECT_EQ(what.find("deadbeef"), std::string::npos) << what;
}

TEST(SqsCurlClient, SQS2_MissingCaFileIsAConfigError) {
  CurlOptions o;
  o.ca_file = "/no/such/bundle.pem";
  EXPECT_THROW((void)make_curl_client(o), ConfigError);
}

}  // namespace
}  // namespace babelqueue::sqs
