// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "admin.hpp"

#include <babelqueue/spi/uri.hpp>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <optional>
#include <utility>

namespace babelqueue::pulsar {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// The largest admin answer read (a peeked message is at most the broker's 5 MiB default).
constexpr std::uint64_t kBodyLimit = 64ULL * 1024 * 1024;

}  // namespace

AdminClient::AdminClient(const std::string& url, std::string token,
                         std::chrono::milliseconds timeout)
    : token_(std::move(token)), timeout_(timeout) {
  const std::optional<std::string> scheme = spi::url_scheme(url);
  if (!scheme || *scheme != "http") {
    throw ConfigError("pulsar: admin_url " + spi::redact_url(url) +
                      " is not http://host[:port] (https:// is not supported yet)");
  }
  const spi::Uri uri = spi::parse_uri(url);
  if (uri.host.empty() || uri.user || !uri.query.empty()) {
    throw ConfigError("pulsar: admin_url " + uri.redacted() +
                      " must be http://host[:port][/base] without user info or query");
  }
  host_ = uri.host;
  port_ = std::to_string(uri.port.value_or(80));
  base_ = uri.path;
  if (!base_.empty() && base_.back() == '/') base_.pop_back();
  address_ = host_ + ":" + port_;
}

AdminResponse AdminClient::get(const std::string& path) const {
  asio::io_context io;
  tcp::resolver resolver(io);
  beast::tcp_stream stream(io);
  http::request<http::empty_body> request{http::verb::get, base_ + path, 11};
  request.set(http::field::host, host_);
  request.set(http::field::accept, "*/*");
  if (!token_.empty()) request.set(http::field::authorization, "Bearer " + token_);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kBodyLimit);
  std::optional<beast::error_code> outcome;
  std::string step = "resolve";
  resolver.async_resolve(
      host_, port_, [&](beast::error_code error, const tcp::resolver::results_type& results) {
        if (error) {
          outcome = error;
          return;
        }
        step = "connect";
        stream.async_connect(results, [&](beast::error_code err, const tcp::endpoint&) {
          if (err) {
            outcome = err;
            return;
          }
          step = "GET";
          http::async_write(stream, request, [&](beast::error_code e, std::size_t) {
            if (e) {
              outcome = e;
              return;
            }
            http::async_read(
                stream, buffer, parser,
                [&](beast::error_code read_error, std::size_t) { outcome = read_error; });
          });
        });
      });
  io.run_for(timeout_);
  const std::string what = "pulsar: admin API " + address_ + ": " + step + " " + path;
  if (!outcome) {
    throw TimeoutError(what + ": no answer within " + std::to_string(timeout_.count()) + " ms");
  }
  if (*outcome) throw TransportError(what + ": " + outcome->message(), true);
  AdminResponse out;
  const auto& response = parser.get();
  out.status = static_cast<int>(response.result_int());
  for (const auto& field : response)
    out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  out.body = response.body();
  return out;
}

}  // namespace babelqueue::pulsar
