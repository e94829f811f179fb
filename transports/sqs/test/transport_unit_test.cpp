// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// SqsTransport over a scripted fake HttpClient (SQS-2 `client`): what goes on the wire (SQS-T1
// projection, FIFO ids, batching per D-11), what a pop makes of a response (SQS-T2, SQS-T3),
// error classes (SQS-17), the housekeeper (deletes on a timer, visibility kept alive) and close.

#include <babelqueue/binding/common.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/sqs/transport.hpp>

#include <gtest/gtest.h>

#include <binding/fixtures.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace babelqueue::sqs {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr std::string_view kSecret = "fake/SECRET+key0123456789";
constexpr std::string_view kToken = "FAKE-SESSION-TOKEN-0123";
constexpr std::string_view kUrlBase = "https://sqs.us-east-1.amazonaws.com/123456789012/";

// prefix + i, appended (GCC 12's -Wrestrict misfires on `"x" + std::to_string(i)`).
std::string numbered(std::string_view prefix, int i) {
  std::string out(prefix);
  out += std::to_string(i);
  return out;
}

// One request as the fake received it.
struct Call {
  std::string action;
  Json body;
  std::vector<std::pair<std::string, std::string>> headers;
  milliseconds timeout{0};
};

HttpResponse json_response(long status, const Json& body) {
  return HttpResponse{status, body.dump(), {{"x-amzn-requestid", "req-1"}}};
}

HttpResponse error_response(long status, std::string_view type, std::string_view message) {
  return json_response(status, Json::object({{"__type", "com.amazonaws.sqs#" + std::string(type)},
                                             {"message", std::string(message)}}));
}

// Every entry of a batch request, answered as successful.
Json all_successful(const Json& request) {
  Json ok = Json::array();
  for (const Json& e : request.find("Entries")->as_array())
    ok.push_back(Json::object({{"Id", e.find("Id")->as_string()}}));
  return Json::object({{"Successful", ok}, {"Failed", Json::array()}});
}

// A scripted SQS: default answers for every action the transport uses, a FIFO of messages
// that ReceiveMessage serves, per-action overrides, and a record of every call.
//
// Thread-safety: every member is safe from any thread (the housekeeper posts too).
class FakeSqs final : public HttpClient {
 public:
  // Returns the response for a call, or nullopt for the default one.
  using Responder = std::function<std::optional<Result<HttpResponse>>(const Call&)>;

  Result<HttpResponse> post(const HttpRequest& request) override {
    Call call{request.action, Json::parse(request.body), request.headers, request.timeout};
    Responder responder;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return ClosedError("fake closed");
      calls_.push_back(call);
      if (const auto it = responders_.find(call.action); it != responders_.end()) {
        responder = it->second;
      }
    }
    cv_.notify_all();
    if (responder) {
      if (auto r = responder(call)) return *r;
    }
    return default_response(call);
  }

  void close() override {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }

  void on(const std::string& action, Responder responder) {
    std::lock_guard<std::mutex> lock(mu_);
    responders_[action] = std::move(responder);
  }

  void add_message(Json message) {
    std::lock_guard<std::mutex> lock(mu_);
    messages_.push_back(std::move(message));
  }

  void set_queue_attribute(const std::string& name, const std::string& value) {
    std::lock_guard<std::mutex> lock(mu_);
    attributes_[name] = value;
  }

  std::vector<Call> calls(std::string_view action = {}) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Call> out;
    for (const Call& c : calls_) {
      if (action.empty() || c.action == action) out.push_back(c);
    }
    return out;
  }

  std::size_t count(std::string_view action) const { return calls(action).size(); }

  // Waits until `action` was called `n` times (the housekeeper's work); false after 10 s.
  bool wait_for(std::string_view action, std::size_t n) const {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, 10s, [&] {
      return static_cast<std::size_t>(
                 std::count_if(calls_.begin(), calls_.end(),
                               [&](const Call& c) { return c.action == action; })) >= n;
    });
  }

  bool closed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_;
  }

 private:
  Result<HttpResponse> default_response(const Call& call) {
    const Json& b = call.body;
    if (call.action == "GetQueueUrl") {
      return json_response(
          200,
          Json::object({{"QueueUrl", std::string(kUrlBase) + b.find("QueueName")->as_string()}}));
    }
    if (call.action == "GetQueueAttributes") {
      JsonObject attrs;
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [k, v] : attributes_)
        attrs.emplace_back(k, v);
      return json_response(200, Json::object({{"Attributes", Json(std::move(attrs))}}));
    }
    if (call.action == "SendMessage") {
      return json_response(200, Json::object({{"MessageId", "mid"}}));
    }
    if (call.action == "ReceiveMessage") {
      const std::size_t max = static_cast<std::size_t>(*b.find("MaxNumberOfMessages")->as_int64());
      Json messages = Json::array();
      std::lock_guard<std::mutex> lock(mu_);
      while (!messages_.empty() && messages.size() < max) {
        messages.push_back(messages_.front());
        messages_.pop_front();
      }
      if (messages.size() == 0) return json_response(200, Json::object());
      return json_response(200, Json::object({{"Messages", messages}}));
    }
    if (call.action == "SendMessageBatch" || call.action == "DeleteMessageBatch" ||
        call.action == "ChangeMessageVisibilityBatch") {
      return json_response(200, all_successful(b));
    }
    if (call.action == "ChangeMessageVisibility") return json_response(200, Json::object());
    return error_response(400, "InvalidAction", "not scripted");
  }

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<Call> calls_;
  std::map<std::string, Responder> responders_;
  std::deque<Json> messages_;
  std::map<std::string, std::string> attributes_{{"VisibilityTimeout", "30"}};
  bool closed_ = false;
};

// A message as ReceiveMessage returns it.
Json sqs_message(const std::string& body, const std::string& id,
                 std::optional<std::string> receive_count = "1", JsonObject attributes = {}) {
  Json m = Json::object({{"MessageId", id}, {"ReceiptHandle", "rh-" + id}, {"Body", body}});
  if (receive_count) m["Attributes"] = Json::object({{"ApproximateReceiveCount", *receive_count}});
  if (!attributes.empty()) m["MessageAttributes"] = Json(std::move(attributes));
  return m;
}

Json string_attribute(std::string value, std::string type = "String") {
  return Json::object({{"DataType", std::move(type)}, {"StringValue", std::move(value)}});
}

class SqsFake : public ::testing::Test {
 protected:
  Options options() {
    Options o;
    o.region = "us-east-1";
    o.credentials = Credentials{"AKIDFAKE", std::string(kSecret), std::string(kToken)};
    o.client = fake;
    o.logger = [this](LogLevel level, std::string_view text) {
      std::lock_guard<std::mutex> lock(log_mu);
      logs.emplace_back(level, std::string(text));
    };
    return o;
  }

  std::unique_ptr<SqsTransport> make(const std::function<void(Options&)>& tweak = {}) {
    Options o = options();
    if (tweak) tweak(o);
    return std::make_unique<SqsTransport>(o);
  }

  std::vector<std::string> log_lines(LogLevel level) {
    std::lock_guard<std::mutex> lock(log_mu);
    std::vector<std::string> out;
    for (const auto& [l, text] : logs) {
      if (l == level) out.push_back(text);
    }
    return out;
  }

  ReceivedMessage pop_one(SqsTransport& t, std::string_view queue = "orders") {
    auto r = t.pop(queue, 1s);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().what());
    if (!r || !*r) {
      ADD_FAILURE() << "no message";
      return {};
    }
    return std::move(**r);
  }

  std::shared_ptr<FakeSqs> fake = std::make_shared<FakeSqs>();
  std::mutex log_mu;
  std::vector<std::pair<LogLevel, std::string>> logs;
};

const Json& attr(const Json& attributes, std::string_view name) {
  const Json* a = attributes.find(name);
  static const Json none;
  EXPECT_NE(a, nullptr) << name;
  return a == nullptr ? none : *a;
}

// ---- publishing ----

TEST_F(SqsFake, SQST1_ProjectionOnTheWireEqualsTheManifest) {
  auto t = make();
  ASSERT_TRUE(t->publish("orders", binding_test::order_created()).ok());
  const auto sends = fake->calls("SendMessage");
  ASSERT_EQ(sends.size(), 1U);
  const Json& body = sends[0].body;
  EXPECT_EQ(body.find("QueueUrl")->as_string(), std::string(kUrlBase) + "orders");
  EXPECT_EQ(body.find("MessageBody")->as_string(), binding_test::order_created());
  EXPECT_EQ(body.find("DelaySeconds"), nullptr);
  EXPECT_EQ(body.find("MessageGroupId"), nullptr);
  const Json& table =
      *binding_test::manifest_block("sqs", "attribute_projection").find("message_attributes");
  EXPECT_EQ(*body.find("MessageAttributes"), table);
  // One GetQueueUrl for the queue, cached.
  ASSERT_TRUE(t->publish("orders", "x").ok());
  EXPECT_EQ(fake->count("GetQueueUrl"), 1U);
}

TEST_F(SqsFake, SQST1_UndecodableBodyHasNoAttributes) {
  auto t = make();
  for (const std::string& body : {std::string("not json"), std::string(R"({"job":1})")}) {
    ASSERT_TRUE(t->publish("orders", body).ok());
    EXPECT_EQ(fake->calls("SendMessage").back().body.find("MessageAttributes"), nullptr);
  }
}

TEST_F(SqsFake, SQST1_TenAttributeCapWithEightRiders) {
  auto t = make();
  Headers riders;
  for (int i = 1; i <= 8; ++i)
    riders[numbered("r", i)] = numbered("v", i);
  riders["bq-job"] = "spoof";
  ASSERT_TRUE(t->publish_with_headers("orders", binding_test::order_created(), riders).ok());
  const Call sent = fake->calls("SendMessage").back();
  const Json& attrs = *sent.body.find("MessageAttributes");
  ASSERT_EQ(attrs.size(), 10U);
  for (const char* name : {"bq-job", "bq-trace-id", "bq-message-id", "bq-schema-version",
                           "bq-source-lang", "bq-created-at", "r1", "r2", "r3", "r4"}) {
    EXPECT_NE(attrs.find(name), nullptr) << name;
  }
  EXPECT_EQ(attr(attrs, "bq-job"), string_attribute(std::string(binding_test::kUrn)));
  EXPECT_EQ(attr(attrs, "r1"), string_attribute("v1"));
}

TEST_F(SqsFake, SQS7_FifoIds) {
  auto t = make([](Options& o) { o.fifo = true; });
  ASSERT_TRUE(t->publish("orders.fifo", binding_test::order_created()).ok());
  Json sent = fake->calls("SendMessage").back().body;
  EXPECT_EQ(sent.find("MessageGroupId")->as_string(), "orders.fifo");
  EXPECT_EQ(sent.find("MessageDeduplicationId")->as_string(), std::string(binding_test::kId));
  // No meta.id (or no envelope): the SHA-256 of the body.
  ASSERT_TRUE(t->publish("orders.fifo", "abc").ok());
  sent = fake->calls("SendMessage").back().body;
  EXPECT_EQ(sent.find("MessageDeduplicationId")->as_string(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

  auto grouped = make([](Options& o) {
    o.fifo = true;
    o.message_group_id = "g-1";
    o.content_dedup = true;
  });
  ASSERT_TRUE(grouped->publish("orders.fifo", binding_test::order_created()).ok());
  sent = fake->calls("SendMessage").back().body;
  EXPECT_EQ(sent.find("MessageGroupId")->as_string(), "g-1");
  EXPECT_EQ(sent.find("MessageDeduplicationId"), nullptr);
}

TEST_F(SqsFake, DI11_BatchOf25IsThreeRequests) {
  auto t = make();
  std::vector<std::string> bodies;
  for (int i = 0; i < 25; ++i)
    bodies.push_back(numbered("body-", i));
  ASSERT_TRUE(t->publish_batch("orders", bodies).ok());
  const auto batches = fake->calls("SendMessageBatch");
  ASSERT_EQ(batches.size(), 3U);
  std::vector<std::string> sent;
  for (std::size_t b = 0; b < batches.size(); ++b) {
    const auto& entries = batches[b].body.find("Entries")->as_array();
    EXPECT_EQ(entries.size(), b < 2 ? 10U : 5U);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      EXPECT_EQ(entries[i].find("Id")->as_string(), std::to_string(i));
      sent.push_back(entries[i].find("MessageBody")->as_string());
    }
  }
  EXPECT_EQ(sent, bodies);
  EXPECT_EQ(fake->count("SendMessage"), 0U);
}

TEST_F(SqsFake, DI11_BatchSplitsAtOneMebibyte) {
  auto t = make();
  const std::vector<std::string> bodies(3, std::string(400'000, 'x'));
  ASSERT_TRUE(t->publish_batch("orders", bodies).ok());
  const auto batches = fake->calls("SendMessageBatch");
  ASSERT_EQ(batches.size(), 2U);
  EXPECT_EQ(batches[0].body.find("Entries")->size(), 2U);
  EXPECT_EQ(batches[1].body.find("Entries")->size(), 1U);
}

TEST_F(SqsFake, DI11_BatchEntryFailingTransientlyIsResent) {
  auto t = make();
  int calls = 0;
  fake->on("SendMessageBatch", [&](const Call& c) -> std::optional<Result<HttpResponse>> {
    if (++calls > 1) return std::nullopt;
    Json ok = Json::array();
    for (const Json& e : c.body.find("Entries")->as_array()) {
      if (e.find("Id")->as_string() != "3")
        ok.push_back(Json::object({{"Id", e.find("Id")->as_string()}}));
    }
    Json failed = Json::array({Json::object({{"Id", "3"},
                                             {"SenderFault", false},
                                             {"Code", "InternalError"},
                                             {"Message", "try again"}})});
    return json_response(200, Json::object({{"Successful", ok}, {"Failed", failed}}));
  });
  std::vector<std::string> bodies;
  for (int i = 0; i < 5; ++i)
    bodies.push_back(numbered("b", i));
  ASSERT_TRUE(t->publish_batch("orders", bodies).ok());
  const auto batches = fake->calls("SendMessageBatch");
  ASSERT_EQ(batches.size(), 2U);
  const auto& again = batches[1].body.find("Entries")->as_array();
  ASSERT_EQ(again.size(), 1U);
  EXPECT_EQ(again[0].find("MessageBody")->as_string(), "b3");
  EXPECT_EQ(again[0].find("Id")->as_string(), "0");
}

TEST_F(SqsFake, DI11_BatchEntryRefusedFailsTheCallNamingIt) {
  auto t = make();
  fake->on("SendMessageBatch", [&](const Call& c) -> std::optional<Result<HttpResponse>> {
    Json ok = Json::array();
    for (const Json& e : c.body.find("Entries")->as_array()) {
      if (e.find("Id")->as_string() != "2")
        ok.push_back(Json::object({{"Id", e.find("Id")->as_string()}}));
    }
    Json failed = Json::array({Json::object({{"Id", "2"},
                                             {"SenderFault", true},
                                             {"Code", "InvalidMessageContents"},
                                             {"Message", "bad"}})});
    return json_response(200, Json::object({{"Successful", ok}, {"Failed", failed}}));
  });
  std::vector<std::string> bodies;
  for (int i = 0; i < 15; ++i)
    bodies.push_back(numbered("b", i));
  const Status s = t->publish_batch("orders", bodies);
  ASSERT_FALSE(s.ok());
  EXPECT_FALSE(s.error().is_transient());
  const std::string what = s.error().what();
  EXPECT_NE(what.find("entry 2 "), std::string::npos) << what;
  EXPECT_NE(what.find("InvalidMessageContents"), std::string::npos) << what;
  EXPECT_NE(what.find("\"orders\""), std::string::npos) << what;
  EXPECT_EQ(fake->count("SendMessageBatch"), 1U);  // not retried, the rest not sent
}

TEST_F(SqsFake, DI11_BatchEntryFailingEveryTimeIsReportedNotDropped) {
  auto t = make();
  fake->on("SendMessageBatch", [&](const Call& c) -> std::optional<Result<HttpResponse>> {
    Json failed = Json::array();
    for (const Json& e : c.body.find("Entries")->as_array()) {
      failed.push_back(Json::object({{"Id", e.find("Id")->as_string()},
                                     {"SenderFault", false},
                                     {"Code", "ServiceUnavailable"}}));
    }
    return json_response(200, Json::object({{"Successful", Json::array()}, {"Failed", failed}}));
  });
  const Status s = t->publish_batch("orders", {"a", "b"});
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.error().is_transient());
  EXPECT_NE(std::string(s.error().what()).find("entry 0"), std::string::npos) << s.error().what();
  EXPECT_EQ(fake->count("SendMessageBatch"), 5U);
}

TEST_F(SqsFake, SQS8_BodyLimitsAreClearErrorsAndSendNothing) {
  auto t = make();
  const auto check = [&](const std::string& body, const char* says, std::string_view offset) {
    const Status s = t->publish("orders", body);
    ASSERT_FALSE(s.ok()) << says;
    EXPECT_EQ(s.error().code(), ErrorCode::Encode);
    const std::string what = s.error().what();
    EXPECT_NE(what.find(says), std::string::npos) << what;
    if (!offset.empty()) {
      EXPECT_NE(what.find(offset), std::string::npos) << what;
    }
  };
  check(std::string("ab\xFF", 3), "not valid UTF-8", "byte 2");
  check(std::string("abc\x01", 4), "U+0001", "byte 3");
  check("\xEF\xBF\xBE", "U+FFFE", "byte 0");
  check("\xED\xA0\x80", "not valid UTF-8", "byte 0");  // a UTF-16 surrogate
  check(std::string(1'048'577, 'x'), "1048577 bytes", "");
  // With the attributes the limit is the sum.
  const std::string near = std::string(1'048'570, 'x');
  EXPECT_FALSE(t->publish_with_headers("orders", near, {{"traceparent", "00-abc"}}).ok());
  EXPECT_FALSE(t->publish_batch("orders", {"fine", std::string("\x00", 1)}).ok());
  EXPECT_EQ(fake->count("SendMessage") + fake->count("SendMessageBatch"), 0U);
  // The limit itself is fine; so are tabs, newlines and astral characters.
  EXPECT_TRUE(t->publish("orders", std::string(1'048'576, 'x')).ok());
  EXPECT_TRUE(t->publish("orders", "a\tb\r\n\xF0\x9F\x98\x80").ok());
}

TEST_F(SqsFake, SQS8_RiderValuesAreChecked) {
  auto t = make();
  const Status s = t->publish_with_headers("orders", "x", {{"bad", "a\x02"}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.error().what()).find("\"bad\""), std::string::npos) << s.error().what();
}

TEST_F(SqsFake, DelayedPublish) {
  auto t = make();
  ASSERT_TRUE(t->publish_delayed("orders", "x", 1500ms).ok());
  EXPECT_EQ(*fake->calls("SendMessage").back().body.find("DelaySeconds")->as_int64(), 2);
  ASSERT_TRUE(t->publish_delayed("orders", "x", 0ms).ok());
  EXPECT_EQ(fake->calls("SendMessage").back().body.find("DelaySeconds"), nullptr);
  ASSERT_TRUE(t->publish_delayed("orders", "x", 900s).ok());
  EXPECT_TRUE(t->publish_delayed("orders", "x", 900'001ms).is(ErrorCode::Usage));
  EXPECT_TRUE(t->publish_delayed("orders.fifo", "x", 1s).is(ErrorCode::DelayUnsupported));
}

// ---- errors ----

TEST_F(SqsFake, SQS17_ThrottlingAnd5xxAreTransient) {
  auto t = make();
  int n = 0;
  fake->on("SendMessage", [&](const Call&) -> std::optional<Result<HttpResponse>> {
    switch (n++) {
      case 0:
        return error_response(400, "ThrottlingException", "slow down");
      case 1:
        return error_response(500, "InternalError", "oops");
      case 2:
        return HttpResponse{503, "<html>busy</html>", {}};
      case 3:
        return HttpResponse{400, "", {{"x-amzn-query-error", "RequestThrottled;Sender"}}};
      default:
        return Result<HttpResponse>(TransportError("sqs: SendMessage to host failed", true));
    }
  });
  for (int i = 0; i < 5; ++i) {
    const Status s = t->publish("orders", "x");
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(s.error().is_transient()) << s.error().what();
    EXPECT_EQ(s.error().code(), ErrorCode::Transport) << s.error().what();
  }
}

TEST_F(SqsFake, SQS17_MissingQueueIsAConfigErrorNamingIt) {
  auto t = make();
  fake->on("GetQueueUrl", [](const Call&) -> std::optional<Result<HttpResponse>> {
    return error_response(400, "QueueDoesNotExist", "The specified queue does not exist.");
  });
  const Status s = t->publish("missing-q", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ErrorCode::Config);
  EXPECT_NE(std::string(s.error().what()).find("\"missing-q\""), std::string::npos);
  auto popped = t->pop("missing-q", 0ms);
  ASSERT_FALSE(popped);
  EXPECT_EQ(popped.error().code(), ErrorCode::Config);
  // The query protocol's header names it too.
  fake->on("GetQueueUrl", [](const Call&) -> std::optional<Result<HttpResponse>> {
    return HttpResponse{
        400, "{}", {{"x-amzn-query-error", "AWS.SimpleQueueService.NonExistentQueue;Sender"}}};
  });
  EXPECT_TRUE(t->publish("other", "x").is(ErrorCode::Config));
}

TEST_F(SqsFake, SQS17_RefusedCredentialsAreConfigErrorsWithoutSecrets) {
  auto t = make();
  std::string signature;
  fake->on("SendMessage", [&](const Call& c) -> std::optional<Result<HttpResponse>> {
    std::string authorization;
    for (const auto& [k, v] : c.headers) {
      if (k == "Authorization") authorization = v;
    }
    signature = authorization.substr(authorization.find("Signature=") + 10);
    // A server that echoes what it got (AWS quotes the canonical request, token included).
    return error_response(403, "InvalidClientTokenId",
                          "bad " + std::string(kSecret) + " " + std::string(kToken) + " " +
                              signature + " " + authorization);
  });
  const Status s = t->publish("orders", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ErrorCode::Config);
  const std::string what = s.error().what();
  ASSERT_FALSE(signature.empty());
  EXPECT_EQ(what.find(kSecret), std::string::npos) << what;
  EXPECT_EQ(what.find(kToken), std::string::npos) << what;
  EXPECT_EQ(what.find(signature), std::string::npos) << what;
  EXPECT_NE(what.find("InvalidClientTokenId"), std::string::npos) << what;

  fake->on("SendMessage", [&](const Call&) -> std::optional<Result<HttpResponse>> {
    return error_response(
        403, "SignatureDoesNotMatch",
        "The Canonical String for this request should have been 'x-amz-security-token:" +
            std::string(kToken) + "'");
  });
  const Status sig = t->publish("orders", "x");
  EXPECT_EQ(sig.error().code(), ErrorCode::Config);
  EXPECT_EQ(std::string(sig.error().what()).find(kToken), std::string::npos) << sig.error().what();
  EXPECT_EQ(std::string(sig.error().what()).find("Canonical"), std::string::npos);
  for (const auto& [level, line] : logs) {
    EXPECT_EQ(line.find(kSecret), std::string::npos) << line;
    EXPECT_EQ(line.find(kToken), std::string::npos) << line;
  }
}

TEST_F(SqsFake, SQS4_RequestsAreSignedWithTheSessionToken) {
  auto t = make();
  ASSERT_TRUE(t->publish("orders", "x").ok());
  const Call c = fake->calls("SendMessage").back();
  std::map<std::string, std::string> h(c.headers.begin(), c.headers.end());
  EXPECT_EQ(h["X-Amz-Target"], "AmazonSQS.SendMessage");
  EXPECT_EQ(h["Content-Type"], "application/x-amz-json-1.0");
  EXPECT_EQ(h["Host"], "sqs.us-east-1.amazonaws.com");
  EXPECT_EQ(h["X-Amz-Security-Token"], kToken);
  EXPECT_NE(h["Authorization"].find(
                "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-target"),
            std::string::npos);
  EXPECT_EQ(c.timeout, 30'000ms);
}

TEST_F(SqsFake, SQS4_InjectedClockSignsTheDate) {
  auto t = make([](Options& o) {
    o.clock = [] { return std::chrono::system_clock::from_time_t(1'800'000'000); };
  });
  ASSERT_TRUE(t->publish("orders", "x").ok());
  const Call c = fake->calls("SendMessage").back();
  std::map<std::string, std::string> h(c.headers.begin(), c.headers.end());
  EXPECT_EQ(h["X-Amz-Date"], "20270115T080000Z");
}

TEST_F(SqsFake, SQS5_QueueUrlPrefixSkipsGetQueueUrl) {
  auto t = make([](Options& o) { o.queue_url_prefix = "http://127.0.0.1:9324/000000000000/"; });
  ASSERT_TRUE(t->publish("orders", "x").ok());
  EXPECT_EQ(fake->count("GetQueueUrl"), 0U);
  EXPECT_EQ(fake->calls("SendMessage").back().body.find("QueueUrl")->as_string(),
            "http://127.0.0.1:9324/000000000000/orders");
}

// ---- consuming ----

TEST_F(SqsFake, SQS9_ReceiveRequest) {
  auto t = make([](Options& o) { o.visibility_timeout = 45; });
  auto none = t->pop("orders", 100ms);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
  const Call c = fake->calls("ReceiveMessage").back();
  EXPECT_EQ(*c.body.find("MaxNumberOfMessages")->as_int64(), 10);
  // A sub-second timeout waits one whole second rather than short-polling in a busy loop.
  EXPECT_EQ(*c.body.find("WaitTimeSeconds")->as_int64(), 1);
  EXPECT_EQ(*c.body.find("VisibilityTimeout")->as_int64(), 45);
  EXPECT_EQ(c.body.find("MessageAttributeNames")->dump(), R"(["All"])");
  EXPECT_EQ(c.body.find("AttributeNames")->dump(), R"(["ApproximateReceiveCount"])");
  EXPECT_EQ(c.timeout, 11s);
  // The queue's attributes are read once, by the first pop.
  EXPECT_EQ(fake->count("GetQueueAttributes"), 1U);
  (void)t->pop("orders", 0ms);
  EXPECT_EQ(*fake->calls("ReceiveMessage").back().body.find("WaitTimeSeconds")->as_int64(), 0);
  (void)t->pop("orders", 60s);
  EXPECT_EQ(*fake->calls("ReceiveMessage").back().body.find("WaitTimeSeconds")->as_int64(), 20);
  EXPECT_EQ(fake->calls("ReceiveMessage").back().timeout, 30s);
  EXPECT_EQ(fake->count("GetQueueAttributes"), 1U);

  auto capped = make([](Options& o) {
    o.wait_time_seconds = 3;
    o.prefetch = 1;
  });
  (void)capped->pop("orders", 10s);
  const Call d = fake->calls("ReceiveMessage").back();
  EXPECT_EQ(*d.body.find("WaitTimeSeconds")->as_int64(), 3);
  EXPECT_EQ(*d.body.find("MaxNumberOfMessages")->as_int64(), 1);
  EXPECT_EQ(d.body.find("VisibilityTimeout"), nullptr);
}

TEST_F(SqsFake, SQS10_ReceivedMessage) {
  auto t = make();
  fake->add_message(
      sqs_message("the body", "m-1", "2",
                  {{"bq-job", string_attribute("urn:x")},
                   {"traceparent", string_attribute("00-1")},
                   {"n", string_attribute("12", "Number.int")},
                   {"bin", Json::object({{"DataType", "Binary"}, {"BinaryValue", "AAE="}})}}));
  const ReceivedMessage m = pop_one(*t);
  EXPECT_EQ(m.body, "the body");
  EXPECT_EQ(m.queue, "orders");
  EXPECT_EQ(m.delivery_count, 2);
  EXPECT_TRUE(m.route.empty());
  const Headers expected{{"bq-job", "urn:x"}, {"n", "12"}, {"traceparent", "00-1"}};
  EXPECT_EQ(m.headers, expected);
}

TEST_F(SqsFake, SQST2_ReceiveCountVectorsThroughPop) {
  const Json& cases = *binding_test::manifest_block("sqs", "attempts_reconciliation").find("cases");
  auto t = make();
  for (const Json& c : cases.as_array()) {
    const Json* count = c.find("approximate_receive_count");
    const std::optional<std::string> rc =
        count->is_null() ? std::nullopt : std::optional<std::string>(count->as_string());
    fake->add_message(sqs_message("{}", c.find("name")->as_string(), rc));
    const ReceivedMessage m = pop_one(*t);
    EXPECT_EQ(binding::reconcile_attempts(*c.find("body_attempts")->as_int64(), m.delivery_count),
              *c.find("expected_attempts")->as_int64())
        << c.find("name")->as_string();
  }
}

TEST_F(SqsFake, SQST3_GateVectorsThroughPop) {
  const Json& cases = *binding_test::manifest_block("sqs", "schema_version_gate").find("cases");
  std::vector<std::pair<std::string, std::string>> rejected;
  auto t = make([&](Options& o) {
    o.on_schema_version_rejected = [&](std::string_view version, std::string_view queue) {
      rejected.emplace_back(version, queue);
    };
  });
  std::size_t rejects = 0;
  for (const Json& c : cases.as_array()) {
    JsonObject attributes;
    const bool absent = c.find("absent") != nullptr;
    if (!absent)
      attributes.emplace_back("bq-schema-version", string_attribute(c.find("value")->as_string()));
    fake->add_message(sqs_message(binding_test::order_created(), "m", "1", std::move(attributes)));
    const ReceivedMessage m = pop_one(*t);
    const bool reject = c.find("expect")->as_string() == "reject";
    const std::string label = absent ? "<absent>" : c.find("value")->dump();
    if (reject) {
      ++rejects;
      EXPECT_EQ(m.route, binding::unsupported_route(c.find("value")->as_string())) << label;
    } else {
      EXPECT_TRUE(m.route.empty()) << label;
    }
  }
  ASSERT_EQ(rejected.size(), rejects);
  EXPECT_EQ(rejected[0].second, "orders");
}

TEST_F(SqsFake, SQST3_GateReadsNumberAndBinaryValues) {
  auto t = make([](Options& o) {
    o.on_schema_version_rejected = [](std::string_view, std::string_view) {
      throw std::runtime_error("hook failure");
    };
  });
  fake->add_message(
      sqs_message("{}", "a", "1", {{"bq-schema-version", string_attribute("1", "Number")}}));
  fake->add_message(
      sqs_message("{}", "b", "1", {{"bq-schema-version", string_attribute("01", "Number")}}));
  fake->add_message(sqs_message(
      "{}", "c", "1",
      {{"bq-schema-version", Json::object({{"DataType", "Binary"}, {"BinaryValue", "Mg=="}})}}));
  EXPECT_TRUE(pop_one(*t).route.empty());
  EXPECT_EQ(pop_one(*t).route, binding::unsupported_route("01"));
  EXPECT_EQ(pop_one(*t).route, binding::unsupported_route("2"));
  // The hook's exceptions are caught and logged.
  EXPECT_FALSE(log_lines(LogLevel::Error).empty());
}

TEST_F(SqsFake, DI11_ReceiveOfTenServesTenPopsWithOneRequest) {
  auto t = make();
  for (int i = 0; i < 10; ++i)
    fake->add_message(sqs_message(numbered("b", i), numbered("m", i)));
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(pop_one(*t).body, numbered("b", i));
  EXPECT_EQ(fake->count("ReceiveMessage"), 1U);
  auto none = t->pop("orders", 0ms);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(fake->count("ReceiveMessage"), 2U);
}

TEST_F(SqsFake, DI11_PrefetchedMessageAboutToLapseIsNotHandedOut) {
  auto t = make([](Options& o) {
    o.visibility_timeout = 1;
    o.keep_visibility = false;
    o.prefetch = 2;
  });
  fake->add_message(sqs_message("first", "m1"));
  fake->add_message(sqs_message("second", "m2"));
  fake->add_message(sqs_message("third", "m3"));
  EXPECT_EQ(pop_one(*t).body, "first");
  // With a 1 s window the margin is a quarter of it: after 0.75 s "second" is not handed out.
  std::this_thread::sleep_for(800ms);
  EXPECT_EQ(pop_one(*t).body, "third");
  EXPECT_EQ(fake->count("ReceiveMessage"), 2U);
}

// ---- settling ----

TEST_F(SqsFake, DI11_TenAcksAreOneDeleteMessageBatch) {
  auto t = make([](Options& o) { o.ack_flush_interval = 1h; });
  for (int i = 0; i < 10; ++i)
    fake->add_message(sqs_message("b", numbered("m", i)));
  std::vector<ReceivedMessage> held;
  for (int i = 0; i < 10; ++i)
    held.push_back(pop_one(*t));
  for (int i = 0; i < 9; ++i)
    ASSERT_TRUE(t->ack(held[static_cast<std::size_t>(i)]).ok());
  EXPECT_EQ(fake->count("DeleteMessageBatch"), 0U);
  ASSERT_TRUE(t->ack(held[9]).ok());  // the tenth fills the batch: sent by the acking thread
  const auto deletes = fake->calls("DeleteMessageBatch");
  ASSERT_EQ(deletes.size(), 1U);
  const auto& entries = deletes[0].body.find("Entries")->as_array();
  ASSERT_EQ(entries.size(), 10U);
  EXPECT_EQ(entries[0].find("ReceiptHandle")->as_string(), "rh-m0");
  EXPECT_EQ(entries[9].find("Id")->as_string(), "9");
  EXPECT_EQ(deletes[0].body.find("QueueUrl")->as_string(), std::string(kUrlBase) + "orders");
  EXPECT_TRUE(t->flush().ok());
  EXPECT_EQ(fake->count("DeleteMessageBatch"), 1U);
}

TEST_F(SqsFake, DI11_AcksAreFlushedOnTheTimer) {
  auto t = make([](Options& o) { o.ack_flush_interval = 20ms; });
  fake->add_message(sqs_message("a", "m1"));
  fake->add_message(sqs_message("b", "m2"));
  const ReceivedMessage a = pop_one(*t);
  const ReceivedMessage b = pop_one(*t);
  ASSERT_TRUE(t->ack(a).ok());
  ASSERT_TRUE(t->ack(b).ok());
  ASSERT_TRUE(fake->wait_for("DeleteMessageBatch", 1));
  EXPECT_EQ(fake->calls("DeleteMessageBatch")[0].body.find("Entries")->size(), 2U);
}

TEST_F(SqsFake, SQS7_FifoPopSendsPendingDeletesBeforeReceiving) {
  auto t = make([](Options& o) { o.ack_flush_interval = 1h; });
  fake->add_message(sqs_message("a", "m1"));
  ASSERT_TRUE(t->ack(pop_one(*t, "orders.fifo")).ok());
  fake->add_message(sqs_message("b", "m2"));
  EXPECT_EQ(pop_one(*t, "orders.fifo").body, "b");
  const auto calls = fake->calls();
  ASSERT_GE(calls.size(), 2U);
  EXPECT_EQ(calls[calls.size() - 2].action, "DeleteMessageBatch");
  EXPECT_EQ(calls.back().action, "ReceiveMessage");
  // A standard queue keeps batching.
  fake->add_message(sqs_message("c", "m3"));
  ASSERT_TRUE(t->ack(pop_one(*t)).ok());
  fake->add_message(sqs_message("d", "m4"));
  EXPECT_EQ(pop_one(*t).body, "d");
  EXPECT_EQ(fake->count("DeleteMessageBatch"), 1U);
}

TEST_F(SqsFake, DI11_FlushSendsPendingAcksAndReportsStaleOnes) {
  auto t = make([](Options& o) { o.ack_flush_interval = 1h; });
  fake->add_message(sqs_message("a", "m1"));
  fake->add_message(sqs_message("b", "m2"));
  const ReceivedMessage a = pop_one(*t);
  const ReceivedMessage b = pop_one(*t);
  fake->on("DeleteMessageBatch", [](const Call&) -> std::optional<Result<HttpResponse>> {
    return json_response(
        200, Json::object({{"Successful", Json::array({Json::object({{"Id", "0"}})})},
                           {"Failed", Json::array({Json::object({{"Id", "1"},
                                                                 {"SenderFault", true},
                                                                 {"Code", "ReceiptHandleIsInvalid"},
                                                                 {"Message", "expired"}})})}}));
  });
  ASSERT_TRUE(t->ack(a).ok());
  ASSERT_TRUE(t->ack(b).ok());
  const Status s = t->flush();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ErrorCode::StaleDelivery);
  EXPECT_NE(std::string(s.error().what()).find("\"m2\""), std::string::npos) << s.error().what();
  EXPECT_EQ(fake->count("DeleteMessageBatch"), 1U);
  EXPECT_TRUE(t->flush().ok());  // reported once, not resent
  EXPECT_EQ(fake->count("DeleteMessageBatch"), 1U);
  EXPECT_FALSE(log_lines(LogLevel::Error).empty());
}

TEST_F(SqsFake, DI11_TransientDeleteFailuresAreRetried) {
  auto t = make([](Options& o) { o.ack_flush_interval = 1h; });
  fake->add_message(sqs_message("a", "m1"));
  const ReceivedMessage a = pop_one(*t);
  int n = 0;
  fake->on("DeleteMessageBatch", [&](const Call&) -> std::optional<Result<HttpResponse>> {
    if (n++ == 0) return error_response(500, "InternalError", "later");
    return std::nullopt;
  });
  ASSERT_TRUE(t->ack(a).ok());
  const Status first = t->flush();
  ASSERT_FALSE(first.ok());
  EXPECT_TRUE(first.error().is_transient());
  // Restored, and sent again by the housekeeper after its backoff.
  ASSERT_TRUE(fake->wait_for("DeleteMessageBatch", 2));
  const auto deletes = fake->calls("DeleteMessageBatch");
  EXPECT_EQ(deletes[1].body.find("Entries")->as_array()[0].find("ReceiptHandle")->as_string(),
            "rh-m1");
  EXPECT_TRUE(t->flush().ok());
}

TEST_F(SqsFake, DI11_SecondAckIsStaleWithoutARequest) {
  auto t = make([](Options& o) { o.ack_batch = 1; });
  fake->add_message(sqs_message("a", "m1"));
  const ReceivedMessage m = pop_one(*t);
  ASSERT_TRUE(t->ack(m).ok());
  EXPECT_EQ(fake->count("DeleteMessageBatch"), 1U);
  EXPECT_TRUE(t->ack(m).is(ErrorCode::StaleDelivery));
  EXPECT_TRUE(t->release(m, 0ms).is(ErrorCode::StaleDelivery));
  EXPECT_EQ(fake->count("DeleteMessageBatch"), 1U);
  EXPECT_EQ(fake->count("ChangeMessageVisibility"), 0U);
  EXPECT_TRUE(t->ack(ReceivedMessage{}).is(ErrorCode::Usage));
}

TEST_F(SqsFake, SQS13_ReleaseChangesVisibility) {
  auto t = make();
  fake->add_message(sqs_message("a", "m1"));
  fake->add_message(sqs_message("b", "m2"));
  const ReceivedMessage a = pop_one(*t);
  const ReceivedMessage b = pop_one(*t);
  ASSERT_TRUE(t->release(a, 1500ms).ok());
  const Call c = fake->calls("ChangeMessageVisibility").back();
  EXPECT_EQ(c.body.find("ReceiptHandle")->as_string(), "rh-m1");
  EXPECT_EQ(*c.body.find("VisibilityTimeout")->as_int64(), 2);
  fake->on("ChangeMessageVisibility", [](const Call&) -> std::optional<Result<HttpResponse>> {
    return error_response(400, "MessageNotInflight", "not in flight");
  });
  EXPECT_TRUE(t->release(b, 50'000s).is(ErrorCode::StaleDelivery));
  EXPECT_EQ(
      *fake->calls("ChangeMessageVisibility").back().body.find("VisibilityTimeout")->as_int64(),
      43'200);
}

TEST_F(SqsFake, SQS15_HandToBrokerSendsNothingAndWarnsOncePerQueue) {
  auto t = make();
  for (int i = 0; i < 3; ++i)
    fake->add_message(sqs_message("a", numbered("m", i)));
  const ReceivedMessage a = pop_one(*t);
  const ReceivedMessage b = pop_one(*t);
  const std::size_t before = fake->calls().size();
  ASSERT_TRUE(t->hand_to_broker(a, "poison").ok());
  ASSERT_TRUE(t->hand_to_broker(b, "poison").ok());
  EXPECT_EQ(fake->calls().size(), before);
  const auto warnings = log_lines(LogLevel::Warning);
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find("RedrivePolicy"), std::string::npos);
  EXPECT_TRUE(t->ack(a).is(ErrorCode::StaleDelivery));

  fake->set_queue_attribute("RedrivePolicy",
                            R"({"deadLetterTargetArn":"arn","maxReceiveCount":"3"})");
  auto with_redrive = make();
  fake->add_message(sqs_message("a", "r1"));
  ASSERT_TRUE(with_redrive->hand_to_broker(pop_one(*with_redrive, "other"), "poison").ok());
  EXPECT_EQ(log_lines(LogLevel::Warning).size(), 1U);
}

TEST_F(SqsFake, DI11_KeepAliveExtendsAHeldMessage) {
  auto t = make([](Options& o) {
    o.visibility_timeout = 1;
    o.prefetch = 2;
  });
  fake->add_message(sqs_message("in a handler", "m1"));
  fake->add_message(sqs_message("prefetched", "m2"));
  const ReceivedMessage m = pop_one(*t);
  // Two thirds of the 1 s window later both held messages are extended by a window.
  ASSERT_TRUE(fake->wait_for("ChangeMessageVisibilityBatch", 1));
  const Call c = fake->calls("ChangeMessageVisibilityBatch")[0];
  const auto& entries = c.body.find("Entries")->as_array();
  ASSERT_EQ(entries.size(), 2U);
  EXPECT_EQ(*entries[0].find("VisibilityTimeout")->as_int64(), 1);
  // Extended again while still held; an acked message is no longer extended.
  ASSERT_TRUE(fake->wait_for("ChangeMessageVisibilityBatch", 2));
  ASSERT_TRUE(t->ack(m).ok());
  ASSERT_TRUE(t->flush().ok());
  EXPECT_EQ(pop_one(*t).body, "prefetched");  // kept alive, so still handed out
  const std::size_t extensions = fake->count("ChangeMessageVisibilityBatch");
  ASSERT_TRUE(fake->wait_for("ChangeMessageVisibilityBatch", extensions + 1));
  const Call last = fake->calls("ChangeMessageVisibilityBatch").back();
  for (const Json& e : last.body.find("Entries")->as_array()) {
    EXPECT_EQ(e.find("ReceiptHandle")->as_string(), "rh-m2");
  }
}

TEST_F(SqsFake, DI11_CloseReleasesPrefetchedAndFlushesAcks) {
  auto t = make([](Options& o) { o.ack_flush_interval = 1h; });
  for (int i = 0; i < 5; ++i)
    fake->add_message(sqs_message("b", numbered("m", i)));
  const ReceivedMessage m = pop_one(*t);
  ASSERT_TRUE(t->ack(m).ok());
  t->close();
  ASSERT_EQ(fake->count("DeleteMessageBatch"), 1U);
  const auto released = fake->calls("ChangeMessageVisibilityBatch");
  ASSERT_EQ(released.size(), 1U);
  const auto& entries = released[0].body.find("Entries")->as_array();
  ASSERT_EQ(entries.size(), 4U);
  for (const Json& e : entries)
    EXPECT_EQ(*e.find("VisibilityTimeout")->as_int64(), 0);
  EXPECT_TRUE(fake->closed());
  // Afterwards every call fails with ClosedError; close is idempotent.
  EXPECT_TRUE(t->publish("orders", "x").is(ErrorCode::Closed));
  EXPECT_EQ(t->pop("orders", 0ms).error().code(), ErrorCode::Closed);
  EXPECT_TRUE(t->ack(m).is(ErrorCode::Closed));
  EXPECT_TRUE(t->flush().is(ErrorCode::Closed));
  t->close();
  EXPECT_EQ(fake->count("DeleteMessageBatch"), 1U);
}

// ---- inspection ----

TEST_F(SqsFake, InspectorStats) {
  auto t = make();
  fake->set_queue_attribute("ApproximateNumberOfMessages", "7");
  fake->set_queue_attribute("ApproximateNumberOfMessagesNotVisible", "2");
  fake->set_queue_attribute("ApproximateNumberOfMessagesDelayed", "1");
  auto s = t->stats("orders", "");
  ASSERT_TRUE(s.has_value()) << s.error().what();
  EXPECT_EQ(s->ready, 7);
  EXPECT_EQ(s->in_flight, 2);
  EXPECT_EQ(s->delayed, 1);
  EXPECT_EQ(s->dead_letter, 7);  // the fake answers every queue alike
  EXPECT_FALSE(s->consumers.has_value());
  EXPECT_EQ(fake->calls("GetQueueUrl").back().body.find("QueueName")->as_string(), "orders-dlq");

  fake->on("GetQueueUrl", [](const Call& c) -> std::optional<Result<HttpResponse>> {
    if (c.body.find("QueueName")->as_string() == "orders") return std::nullopt;
    return error_response(400, "QueueDoesNotExist", "no");
  });
  auto fresh = make();
  auto no_dlq = fresh->stats("orders", "custom-dead");
  ASSERT_TRUE(no_dlq.has_value()) << no_dlq.error().what();
  EXPECT_FALSE(no_dlq->dead_letter.has_value());
  EXPECT_EQ(fake->calls("GetQueueUrl").back().body.find("QueueName")->as_string(), "custom-dead");
  EXPECT_EQ(fresh->stats("orders", "bad.name").error().code(), ErrorCode::Config);
}

TEST_F(SqsFake, InspectorPeekReleasesWhatItSaw) {
  auto t = make();
  for (int i = 0; i < 12; ++i)
    fake->add_message(sqs_message(numbered("b", i), numbered("m", i)));
  auto peeked = t->peek("orders", 11);
  ASSERT_TRUE(peeked.has_value()) << peeked.error().what();
  ASSERT_EQ(peeked->size(), 11U);
  EXPECT_EQ((*peeked)[10].body, "b10");
  const auto receives = fake->calls("ReceiveMessage");
  ASSERT_EQ(receives.size(), 2U);
  EXPECT_EQ(*receives[1].body.find("MaxNumberOfMessages")->as_int64(), 1);
  EXPECT_EQ(*receives[0].body.find("VisibilityTimeout")->as_int64(), 30);
  std::size_t released = 0;
  for (const Call& c : fake->calls("ChangeMessageVisibilityBatch"))
    released += c.body.find("Entries")->size();
  EXPECT_EQ(released, 11U);
}

}  // namespace
}  // namespace babelqueue::sqs
