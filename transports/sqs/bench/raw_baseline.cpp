// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The raw libcurl baseline of `babelqueue bench transport --url sqs://...` (issue 11, D-11): the
// same patterns and the same batched calls the transport makes, on plain libcurl (one keep-alive
// connection, libcurl's own CURLOPT_AWS_SIGV4 signer, the AWS JSON 1.0 protocol), with bodies of
// the same bytes and the six bq-* message attributes of the transport's projection (SQS-6).
//
//   publish1  one SendMessage per message
//   publishN  --batch messages at a time, sent as SendMessageBatch requests of up to 10 (16 =
//             one of 10 and one of 6, as the transport splits a publish_batch of 16)
//   consume   one worker: ReceiveMessage of up to 10, then one DeleteMessageBatch of what it got
//
// publish1 fills one queue, publishN a second one; consume drains the first. Every pattern runs
// an untimed warm-up of min(--warmup, --messages) messages first. The queues
// (raw-baseline-<pid>[-batch]) are created first and deleted at the end. Beside msg/s it prints
// the requests each pattern made per message.
//
//   babelqueue_sqs_raw_baseline --endpoint http://127.0.0.1:PORT --messages 20000 [--json]

#include <curl/curl.h>
#include <simdjson.h>
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr long kMaxEntries = 10;  // SQS's most entries per batch call and messages per receive
constexpr std::chrono::seconds kDeadline{300};

struct Args {
  std::string endpoint = "http://127.0.0.1:9324";
  std::string region = "us-east-1";
  std::string access_key_id = "AKIDBABELQUEUETEST";
  std::string secret_access_key = "babelqueue/test/secret+KEY";
  long messages = 20'000;
  long size = 259;
  std::string body_file;
  long batch = 16;  // kBenchBatch of tools/babelqueue/src/bench_transport.cpp
  long warmup = 1000;
  bool json = false;
};

// Exits with CLI11's message on bad arguments (status 2 on an error, 0 for --help).
Args parse(int argc, char** argv) {
  Args a;
  CLI::App app{"The raw libcurl baseline of `babelqueue bench transport --url sqs://...`"};
  app.add_option("--endpoint", a.endpoint, "The SQS endpoint every request goes to");
  app.add_option("--region", a.region, "Signing region");
  app.add_option("--access-key-id", a.access_key_id, "Credentials (an emulator takes any)");
  app.add_option("--secret-access-key", a.secret_access_key, "Credentials");
  app.add_option("--messages", a.messages, "Messages per pattern")
      ->check(CLI::Range(1L, 100'000'000L));
  app.add_option("--size", a.size, "Body bytes (without --body-file)")
      ->check(CLI::Range(1L, 1'048'576L));
  app.add_option("--body-file", a.body_file, "The body of every message")->check(CLI::ExistingFile);
  app.add_option("--batch", a.batch, "Messages per batched publish (split into requests of 10)")
      ->check(CLI::Range(1L, 1'000'000L));
  app.add_option("--warmup", a.warmup, "Untimed messages before each pattern")
      ->check(CLI::Range(0L, 100'000'000L));
  app.add_flag("--json", a.json, "Print one JSON object");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
  return a;
}

// `text` as a JSON string literal.
std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", u);
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::size_t append(char* data, std::size_t size, std::size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

// One keep-alive connection to the endpoint; every request signed by libcurl and counted.
class Sqs {
 public:
  explicit Sqs(const Args& a) : endpoint_(a.endpoint), easy_(curl_easy_init()) {
    if (easy_ == nullptr) throw std::runtime_error("curl_easy_init failed");
    const std::string sigv4 = "aws:amz:" + a.region + ":sqs";
    set(CURLOPT_AWS_SIGV4, sigv4.c_str());
    set(CURLOPT_USERNAME, a.access_key_id.c_str());
    set(CURLOPT_PASSWORD, a.secret_access_key.c_str());
    set(CURLOPT_URL, endpoint_.c_str());
    set(CURLOPT_POST, 1L);
    set(CURLOPT_NOSIGNAL, 1L);
    set(CURLOPT_TIMEOUT_MS, 30'000L);
    set(CURLOPT_WRITEFUNCTION, &append);
    set(CURLOPT_WRITEDATA, &reply_);
  }
  Sqs(const Sqs&) = delete;
  Sqs& operator=(const Sqs&) = delete;
  ~Sqs() {
    curl_slist_free_all(headers_);
    curl_easy_cleanup(easy_);
  }

  // The parsed reply of a 200 (an empty body: null); throws on anything else.
  simdjson::dom::element post(const std::string& action, const std::string& body) {
    curl_slist_free_all(headers_);
    headers_ = nullptr;
    for (const std::string& header : {std::string("Content-Type: application/x-amz-json-1.0"),
                                      "X-Amz-Target: AmazonSQS." + action}) {
      curl_slist* next = curl_slist_append(headers_, header.c_str());
      if (next == nullptr) throw std::runtime_error("out of memory");
      headers_ = next;
    }
    set(CURLOPT_HTTPHEADER, headers_);
    set(CURLOPT_POSTFIELDS, body.data());
    set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    reply_.clear();
    ++requests_;
    const CURLcode code = curl_easy_perform(easy_);
    if (code != CURLE_OK)
      throw std::runtime_error(action + " to " + endpoint_ + ": " + curl_easy_strerror(code));
    long status = 0;
    curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200)
      throw std::runtime_error(action + " answered HTTP " + std::to_string(status) + ": " + reply_);
    if (reply_.empty()) reply_ = "null";
    return parser_.parse(reply_);
  }

  [[nodiscard]] long requests() const { return requests_; }

 private:
  template <typename T>
  void set(CURLoption option, T value) {
    if (curl_easy_setopt(easy_, option, value) != CURLE_OK)
      throw std::runtime_error("curl_easy_setopt " + std::to_string(option) + " failed");
  }

  std::string endpoint_;
  CURL* easy_;
  curl_slist* headers_ = nullptr;
  std::string reply_;
  simdjson::dom::parser parser_;
  long requests_ = 0;
};

// A batch reply's failed entries are an error (the transport retries or reports them; here none
// is expected).
void require_no_failed(const std::string& action, simdjson::dom::element reply) {
  simdjson::dom::array failed;
  if (reply["Failed"].get(failed) == simdjson::SUCCESS && failed.size() != 0) {
    throw std::runtime_error(action + ": " + std::to_string(failed.size()) +
                             " entries failed: " + simdjson::minify(failed));
  }
}

class Bench {
 public:
  Bench(const Args& a, std::string body) : sqs_(a), body_(json_string(body)) {}

  std::string create_queue(const std::string& name) {
    const simdjson::dom::element reply =
        sqs_.post("CreateQueue", "{\"QueueName\":" + json_string(name) +
                                     ",\"Attributes\":{\"VisibilityTimeout\":\"30\"}}");
    return std::string(std::string_view(reply["QueueUrl"]));
  }

  void delete_queue(const std::string& url) {
    sqs_.post("DeleteQueue", "{\"QueueUrl\":" + json_string(url) + "}");
  }

  void publish_each(const std::string& url, long n) {
    const std::string head = "{\"QueueUrl\":" + json_string(url) + ",\"MessageBody\":" + body_ +
                             ",\"MessageAttributes\":" + kAttributes + "}";
    for (long i = 0; i < n; ++i)
      sqs_.post("SendMessage", head);
  }

  // `n` messages, `batch` at a time, each batch as SendMessageBatch requests of up to 10.
  void publish_batched(const std::string& url, long n, long batch) {
    for (long done = 0; done < n;) {
      const long group = std::min(batch, n - done);
      for (long first = 0; first < group; first += kMaxEntries) {
        std::string request = "{\"QueueUrl\":" + json_string(url) + ",\"Entries\":[";
        for (long i = first; i < std::min(group, first + kMaxEntries); ++i) {
          if (i != first) request += ',';
          request += "{\"Id\":\"" + std::to_string(i) + "\",\"MessageBody\":" + body_ +
                     ",\"MessageAttributes\":" + kAttributes + "}";
        }
        request += "]}";
        require_no_failed("SendMessageBatch", sqs_.post("SendMessageBatch", request));
      }
      done += group;
    }
  }

  // Receives and deletes `n` messages: ReceiveMessage of 10, DeleteMessageBatch of what came.
  void consume(const std::string& url, long n) {
    const std::string receive = "{\"QueueUrl\":" + json_string(url) +
                                ",\"MaxNumberOfMessages\":10,\"WaitTimeSeconds\":1,"
                                "\"MessageSystemAttributeNames\":[\"ApproximateReceiveCount\"],"
                                "\"MessageAttributeNames\":[\"All\"]}";
    const auto deadline = std::chrono::steady_clock::now() + kDeadline;
    for (long got = 0; got < n;) {
      if (std::chrono::steady_clock::now() >= deadline)
        throw std::runtime_error("consume timed out");
      simdjson::dom::array messages;
      if (sqs_.post("ReceiveMessage", receive)["Messages"].get(messages) != simdjson::SUCCESS ||
          messages.size() == 0) {
        continue;
      }
      std::string request = "{\"QueueUrl\":" + json_string(url) + ",\"Entries\":[";
      long id = 0;
      for (const simdjson::dom::element message : messages) {
        if (id != 0) request += ',';
        request += "{\"Id\":\"" + std::to_string(id++) + "\",\"ReceiptHandle\":" +
                   json_string(std::string_view(message["ReceiptHandle"])) + "}";
      }
      request += "]}";
      require_no_failed("DeleteMessageBatch", sqs_.post("DeleteMessageBatch", request));
      got += id;
    }
  }

  [[nodiscard]] long requests() const { return sqs_.requests(); }

 private:
  // The SQS-6 projection of a typical envelope (values of the same sizes).
  static constexpr const char* kAttributes =
      R"({"bq-job":{"DataType":"String","StringValue":"urn:babel:orders:created"},)"
      R"("bq-trace-id":{"DataType":"String","StringValue":"4bf92f3577b34da6a3ce929d0e0e4736"},)"
      R"("bq-message-id":{"DataType":"String",)"
      R"("StringValue":"0b9a3c0e-8f7d-4c62-9a41-6f3e2d1c0b9a"},)"
      R"("bq-schema-version":{"DataType":"Number","StringValue":"1"},)"
      R"("bq-source-lang":{"DataType":"String","StringValue":"cpp"},)"
      R"("bq-created-at":{"DataType":"Number","StringValue":"1764676800000"}})";

  Sqs sqs_;
  std::string body_;  // as a JSON string
};

using Clock = std::chrono::steady_clock;

struct Figure {
  double msgs_per_s = 0;
  double requests_per_msg = 0;
};

std::string read_body(const Args& a) {
  if (a.body_file.empty()) return std::string(static_cast<std::size_t>(a.size), 'x');
  std::ifstream in(a.body_file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + a.body_file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
    const std::string body = read_body(a);
    Bench bench(a, body);
    const std::string name = "raw-baseline-" + std::to_string(::getpid());
    const std::string each = bench.create_queue(name);
    const std::string batched = bench.create_queue(name + "-batch");
    const long warm = std::min(a.warmup, a.messages);
    // Runs `pattern` on `warm` then `a.messages` messages; the figures of the second run.
    const auto timed = [&](const auto& pattern) {
      pattern(warm);
      const long before = bench.requests();
      const auto start = Clock::now();
      pattern(a.messages);
      const std::chrono::duration<double> took = Clock::now() - start;
      return Figure{
          static_cast<double>(a.messages) / std::max(took.count(), 1e-9),
          static_cast<double>(bench.requests() - before) / static_cast<double>(a.messages)};
    };
    const Figure publish1 = timed([&](long n) { bench.publish_each(each, n); });
    const Figure publish_n = timed([&](long n) { bench.publish_batched(batched, n, a.batch); });
    const Figure consume = timed([&](long n) { bench.consume(each, n); });
    bench.consume(batched, warm + a.messages);  // untimed: the queue is left empty
    bench.delete_queue(each);
    bench.delete_queue(batched);
    const char* curl = curl_version_info(CURLVERSION_NOW)->version;
    if (a.json) {
      std::printf(
          "{\"client\":\"libcurl %s\",\"endpoint\":\"%s\",\"messages\":%ld,\"bytes\":%zu,"
          "\"batch\":%ld,\"publish1_msgs_per_s\":%.0f,\"publishN_msgs_per_s\":%.0f,"
          "\"consume_msgs_per_s\":%.0f,\"publish1_requests_per_msg\":%.3f,"
          "\"publishN_requests_per_msg\":%.3f,\"consume_requests_per_msg\":%.3f}\n",
          curl, a.endpoint.c_str(), a.messages, body.size(), a.batch, publish1.msgs_per_s,
          publish_n.msgs_per_s, consume.msgs_per_s, publish1.requests_per_msg,
          publish_n.requests_per_msg, consume.requests_per_msg);
    } else {
      std::printf("libcurl %s on %s, %ld messages of %zu bytes, keep-alive, CURLOPT_AWS_SIGV4\n",
                  curl, a.endpoint.c_str(), a.messages, body.size());
      const auto row = [](const std::string& label, const Figure& f) {
        std::printf("  %-44s %10.0f msg/s %7.3f requests/msg\n", label.c_str(), f.msgs_per_s,
                    f.requests_per_msg);
      };
      row("publish, SendMessage each", publish1);
      row("publish " + std::to_string(a.batch) + " at a time, SendMessageBatch of <= 10",
          publish_n);
      row("consume, ReceiveMessage 10 + DeleteMessageBatch", consume);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "raw_baseline: %s\n", e.what());
    return 1;
  }
  return 0;
}
