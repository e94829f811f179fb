// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The request path of every action: credentials (SQS-3), SigV4 (SQS-4), POST to the endpoint
// (SQS-5), and the error classes of SQS-17.

#include "api.hpp"

#include <babelqueue/spi/text.hpp>

#include <algorithm>
#include <array>
#include <utility>

namespace babelqueue::sqs::detail {
namespace {

using spi::quoted;

constexpr std::array<std::string_view, 12> kConfigCodes{"QueueDoesNotExist",
                                                        "AWS.SimpleQueueService.NonExistentQueue",
                                                        "InvalidClientTokenId",
                                                        "SignatureDoesNotMatch",
                                                        "AccessDenied",
                                                        "AccessDeniedException",
                                                        "InvalidParameterValue",
                                                        "MissingParameter",
                                                        "UnrecognizedClientException",
                                                        "IncompleteSignature",
                                                        "InvalidSecurity",
                                                        "ExpiredToken"};

constexpr std::array<std::string_view, 12> kTransientCodes{
    "ThrottlingException",
    "RequestThrottled",
    "Throttling",
    "ServiceUnavailable",
    "InternalError",
    "InternalFailure",
    "OverLimit",
    "KmsThrottled",
    "TooManyRequestsException",
    "RequestTimeout",
    "ServiceUnavailableException",
    "AWS.SimpleQueueService.RequestThrottled"};

constexpr std::array<std::string_view, 6> kReceiptHandleCodes{
    "ReceiptHandleIsInvalid", "InvalidReceiptHandle",
    "MessageNotInflight",     "AWS.SimpleQueueService.MessageNotInflight",
    "InvalidIdFormat",        "AWS.SimpleQueueService.ReceiptHandleIsInvalid"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& codes, std::string_view code) noexcept {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

// The server's explanation, cut to its first line and 200 bytes.
std::string message_of(const Json* body) {
  if (body == nullptr) return {};
  const Json* m = body->find("message");
  if (m == nullptr) m = body->find("Message");
  if (m == nullptr || !m->is_string()) return {};
  std::string text = m->as_string().substr(0, m->as_string().find('\n'));
  if (text.size() > 200) {
    text.resize(200);
    text += "...";
  }
  return text;
}

std::string header(const HttpResponse& response, std::string_view name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return {};
}

}  // namespace

std::string error_code(const HttpResponse& response) {
  const auto parsed = Json::try_parse(response.body);
  if (parsed) {
    const Json* type = parsed->find("__type");
    if (type == nullptr) type = parsed->find("code");
    if (type != nullptr && type->is_string() && !type->as_string().empty()) {
      const std::string& t = type->as_string();
      const std::size_t hash = t.rfind('#');
      return hash == std::string::npos ? t : t.substr(hash + 1);
    }
  }
  const std::string query = header(response, "x-amzn-query-error");
  return query.substr(0, query.find(';'));
}

bool is_receipt_handle_code(std::string_view code) noexcept {
  return contains(kReceiptHandleCodes, code);
}

bool is_missing_queue_code(std::string_view code) noexcept {
  return code == "QueueDoesNotExist" || code == "AWS.SimpleQueueService.NonExistentQueue";
}

bool is_transient_code(std::string_view code) noexcept {
  return contains(kTransientCodes, code);
}

std::string scrub(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + 3)) {
      text.replace(at, secret.size(), "***");
    }
  }
  return text;
}

Error classify(const HttpResponse& response, std::string_view action, std::string_view queue,
               const std::vector<std::string>& secrets) {
  const std::string code = error_code(response);
  const auto parsed = Json::try_parse(response.body);
  // The explanation of a refused signature quotes the canonical request (with the session
  // token): it is never shown.
  const std::string message =
      code == "SignatureDoesNotMatch" || code == "IncompleteSignature"
          ? std::string("the request signature was refused (check the secret key and the clock)")
          : message_of(parsed ? &*parsed : nullptr);
  std::string text = "sqs: " + std::string(action);
  if (!queue.empty()) text += " on queue " + quoted(queue);
  text += ": HTTP " + std::to_string(response.status);
  if (!code.empty()) text += " " + code;
  if (!message.empty()) text += ": " + message;
  text = scrub(std::move(text), secrets);

  if (is_missing_queue_code(code)) {
    return ConfigError(text + " (queues are never created by the transport)");
  }
  if (response.status >= 500 || response.status == 429 || is_transient_code(code)) {
    return TransportError(text, true);
  }
  if (is_receipt_handle_code(code)) return Error(ErrorCode::StaleDelivery, text);
  if (contains(kConfigCodes, code)) return ConfigError(text);
  if (code.empty() &&
      (response.status == 401 || response.status == 403 || response.status == 404)) {
    return ConfigError(text);
  }
  return TransportError(text, false);
}

Api::Api(const Options& options, std::shared_ptr<HttpClient> client)
    : client_(std::move(client)),
      endpoint_(parse_endpoint(options.endpoint)),
      signer_(options.region, "sqs"),
      credentials_(options.credentials, options.credentials_provider, options.profile,
                   options.shared_credentials_file),
      clock_(options.clock ? options.clock
                           : Clock([] { return std::chrono::system_clock::now(); })),
      request_timeout_(options.request_timeout) {}

Result<Json> Api::call(std::string_view action, const std::string& body, std::string_view queue,
                       std::chrono::milliseconds timeout, std::string* code) {
  Credentials credentials;
  try {
    credentials = credentials_.get();
  } catch (const Error& e) {
    return Error(e.code(), e.what(), e.is_transient());
  } catch (const std::exception& e) {
    return TransportError(std::string("sqs: the credentials provider failed: ") + e.what(), true);
  }
  HttpRequest request;
  request.url = endpoint_.url;
  request.action = std::string(action);
  request.body = body;
  request.timeout = timeout;
  request.headers =
      signer_.sign(endpoint_, "AmazonSQS." + request.action, request.body, credentials, clock_());
  auto response = client_->post(request);
  const std::string& authorization = request.headers.back().second;
  const std::vector<std::string> secrets{credentials.secret_access_key, credentials.session_token,
                                         authorization.substr(authorization.rfind('=') + 1)};
  if (!response) {
    const Error& e = response.error();
    return Error(e.code(), scrub(e.what(), secrets), e.is_transient());
  }
  if (response->status != 200) {
    if (code != nullptr) *code = error_code(*response);
    return classify(*response, action, queue, secrets);
  }
  if (response->body.empty()) return Json::object();
  auto parsed = Json::try_parse(response->body);
  if (!parsed || !parsed->is_object()) {
    std::string text = "sqs: " + std::string(action);
    if (!queue.empty()) text += " on queue " + quoted(queue);
    return TransportError(text + ": HTTP 200 with a body that is not a JSON object", true);
  }
  return std::move(*parsed);
}

}  // namespace babelqueue::sqs::detail
