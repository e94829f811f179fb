// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// SQS-T5: the SigV4 signer (SQS-4) against the spec's known answers with a fixed clock, and
// against libcurl's own signer (CURLOPT_AWS_SIGV4) for the same request, captured by a loopback
// listener.

#include <babelqueue/sqs/transport.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "sigv4.hpp"

namespace babelqueue::sqs::detail {
namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;

const Credentials kExample{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};

std::chrono::system_clock::time_point utc(int year, int month, int day, int h, int m, int s) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = s;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string header(const Headers& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (k == name) return v;
  }
  ADD_FAILURE() << "no header " << name;
  return {};
}

TEST(SqsSigV4, SQST5_KnownAnswerListQueues) {
  const Signer signer("us-east-1", "sqs");
  const Headers h = signer.sign(parse_endpoint("http://127.0.0.1:4566/"), "AmazonSQS.ListQueues",
                                "{}", kExample, utc(2026, 11, 30, 10, 18, 20));
  EXPECT_EQ(header(h, "X-Amz-Date"), "20261130T101820Z");
  EXPECT_EQ(header(h, "Host"), "127.0.0.1:4566");
  EXPECT_EQ(header(h, "Content-Type"), "application/x-amz-json-1.0");
  EXPECT_EQ(header(h, "X-Amz-Target"), "AmazonSQS.ListQueues");
  EXPECT_EQ(header(h, "Authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261130/us-east-1/sqs/aws4_request, "
            "SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
            "Signature=1025788b73d938306fa5837760e54b6816e5d4f8ff1b96dc4df21dad05e3b31a");
}

TEST(SqsSigV4, SQST5_KnownAnswerWithSessionToken) {
  const Signer signer("eu-central-1", "sqs");
  Credentials c = kExample;
  c.session_token = "TOKEN123";
  const Headers h = signer.sign(parse_endpoint("http://127.0.0.1:4567/"), "AmazonSQS.SendMessage",
                                R"({"QueueUrl":"q"})", c, utc(2026, 11, 30, 10, 18, 45));
  EXPECT_EQ(header(h, "X-Amz-Security-Token"), "TOKEN123");
  EXPECT_EQ(header(h, "Authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261130/eu-central-1/sqs/aws4_request, "
            "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-target, "
            "Signature=adb01fc0beafc1670e4ee0379d3e2a1f5ae74afbcbfa53b0a97e5943b280c1a3");
}

TEST(SqsSigV4, SQS4_CachedKeyFollowsTheDateAndTheSecret) {
  const Signer signer("us-east-1", "sqs");
  const Endpoint e = parse_endpoint("http://127.0.0.1:4566/");
  const auto sign = [&](const Credentials& c, std::chrono::system_clock::time_point t) {
    return header(signer.sign(e, "AmazonSQS.ListQueues", "{}", c, t), "Authorization");
  };
  const std::string first = sign(kExample, utc(2026, 11, 30, 10, 18, 20));
  const std::string next_day = sign(kExample, utc(2026, 12, 1, 10, 18, 20));
  Credentials other = kExample;
  other.secret_access_key = "another-secret";
  const std::string other_secret = sign(other, utc(2026, 11, 30, 10, 18, 20));
  EXPECT_NE(first, next_day);
  EXPECT_NE(first, other_secret);
  // Back to the first key: the same known answer, not a stale cache entry.
  EXPECT_EQ(sign(kExample, utc(2026, 11, 30, 10, 18, 20)), first);
  EXPECT_NE(
      first.find("Signature=1025788b73d938306fa5837760e54b6816e5d4f8ff1b96dc4df21dad05e3b31a"),
      std::string::npos);
}

TEST(SqsSigV4, SQS4_HostKeepsOnlyANonDefaultPort) {
  EXPECT_EQ(parse_endpoint("https://sqs.eu-west-1.amazonaws.com").host,
            "sqs.eu-west-1.amazonaws.com");
  EXPECT_EQ(parse_endpoint("https://sqs.eu-west-1.amazonaws.com").url,
            "https://sqs.eu-west-1.amazonaws.com/");
  EXPECT_EQ(parse_endpoint("https://SQS.example:443/").host, "sqs.example");
  EXPECT_EQ(parse_endpoint("http://h:80/").host, "h");
  EXPECT_EQ(parse_endpoint("http://h:443/").host, "h:443");
  EXPECT_EQ(parse_endpoint("http://[::1]:9324/").host, "[::1]:9324");
  EXPECT_EQ(parse_endpoint("http://h:9324").path, "/");
  EXPECT_THROW((void)parse_endpoint("ftp://h/"), ConfigError);
  EXPECT_THROW((void)parse_endpoint("http://u:p@h/"), ConfigError);
  EXPECT_THROW((void)parse_endpoint("http://h/?a=b"), ConfigError);
  EXPECT_THROW((void)parse_endpoint("not a url"), ConfigError);
}

TEST(SqsSigV4, SQS7_Sha256Hex) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// A listener on 127.0.0.1 that answers one HTTP request with 200 and keeps its header block.
class OneRequestServer {
 public:
  OneRequestServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 1), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~OneRequestServer() {
    thread_.join();
    ::close(fd_);
  }
  OneRequestServer(const OneRequestServer&) = delete;
  OneRequestServer& operator=(const OneRequestServer&) = delete;

  int port() const { return port_; }
  // The request's headers, names lower-cased; valid after the client's request finished.
  Headers headers() {
    thread_.join();
    thread_ = std::thread([] {});
    return headers_;
  }

 private:
  void serve() {
    const int client = ::accept(fd_, nullptr, nullptr);
    if (client < 0) return;
    std::string request;
    char buf[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::read(client, buf, sizeof buf);
      if (n <= 0) break;
      request.append(buf, static_cast<std::size_t>(n));
    }
    std::size_t at = request.find("\r\n") + 2;
    const std::size_t end = request.find("\r\n\r\n");
    while (at < end) {
      const std::size_t eol = request.find("\r\n", at);
      const std::string line = request.substr(at, eol - at);
      const std::size_t colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (char& c : name)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      headers_.emplace_back(name, line.substr(line.find_first_not_of(' ', colon + 1)));
      at = eol + 2;
    }
    const std::string response =
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
    (void)::write(client, response.data(), response.size());
    ::close(client);
  }

  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  Headers headers_;
};

std::string lower_header(const Headers& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (k == name) return v;
  }
  return {};
}

// The issue's cross-check: what libcurl's built-in signer sends for the same request (its clock,
// read back from X-Amz-Date) equals what this signer computes for it.
TEST(SqsSigV4, SQST5_MatchesLibcurlAwsSigV4) {
  for (const bool with_token : {false, true}) {
    OneRequestServer server;
    const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/";
    const std::string body = R"({"QueueUrl":"http://127.0.0.1/000000000000/orders"})";
    CURL* curl = curl_easy_init();
    ASSERT_NE(curl, nullptr);
    curl_slist* list = nullptr;
    list = curl_slist_append(list, "Content-Type: application/x-amz-json-1.0");
    list = curl_slist_append(list, "X-Amz-Target: AmazonSQS.ReceiveMessage");
    if (with_token) list = curl_slist_append(list, "X-Amz-Security-Token: TOKEN123");
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, "aws:amz:eu-west-1:sqs");
    const std::string userpwd = kExample.access_key_id + ":" + kExample.secret_access_key;
    curl_easy_setopt(curl, CURLOPT_USERPWD, userpwd.c_str());
    curl_easy_setopt(
        curl, CURLOPT_WRITEFUNCTION,
        +[](char*, std::size_t size, std::size_t n, void*) { return size * n; });
    const CURLcode code = curl_easy_perform(curl);
    curl_slist_free_all(list);
    curl_easy_cleanup(curl);
    ASSERT_EQ(code, CURLE_OK) << curl_easy_strerror(code);

    const Headers sent = server.headers();
    const std::string date = lower_header(sent, "x-amz-date");
    ASSERT_EQ(date.size(), 16U) << date;
    const auto at = utc(std::stoi(date.substr(0, 4)), std::stoi(date.substr(4, 2)),
                        std::stoi(date.substr(6, 2)), std::stoi(date.substr(9, 2)),
                        std::stoi(date.substr(11, 2)), std::stoi(date.substr(13, 2)));
    Credentials c = kExample;
    if (with_token) c.session_token = "TOKEN123";
    const Signer signer("eu-west-1", "sqs");
    const Headers ours = signer.sign(parse_endpoint(url), "AmazonSQS.ReceiveMessage", body, c, at);
    EXPECT_EQ(lower_header(sent, "host"), header(ours, "Host"));
    EXPECT_EQ(lower_header(sent, "authorization"), header(ours, "Authorization"))
        << "with_token=" << with_token;
  }
}

}  // namespace
}  // namespace babelqueue::sqs::detail
