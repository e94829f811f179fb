// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The raw librdkafka baseline of `babelqueue bench transport --url kafka://...` (issue 10): the
// same patterns on the plain librdkafka C++ API, with values of the same size, the six bq-*
// headers of the transport's projection (KFK-5) and the transport's producer defaults
// (acks=all, enable.idempotence=true, linger.ms=0).
//
//   produce1  produce one record, wait for its delivery report
//   produceN  produce --batch records, wait for all their reports
//   consume   a consumer group member (auto commit off) reading them, committing asynchronously
//             every --commit-every records (one worker, the transport's commit_batch) the offset
//             after the last record read of each partition, as the transport commits explicit
//             positions (committing the consumer's position() instead slowed 200,000-record
//             drains to ~185k records/s in 5 runs of 5; see transports/kafka/README.md); each
//             record's headers are read in place (the C API, no copy), as a job-queue consumer
//             reads its bq-* headers (--no-headers: the loop reads none; --decode: it also
//             decodes each value with the SDK's envelope codec, the one piece of the App's work
//             per record a raw loop would otherwise skip, so that the comparison isolates the
//             rest of the transport and App)
//
// produce1 fills one topic, produceN a second one; consume drains the first. Every pattern runs
// an untimed warm-up of min(--warmup, --messages) records first (the consume warm-up includes
// joining the group). The topics (raw-baseline-<pid>[-batch]) are deleted at the end.
//
//   babelqueue_kafka_raw_baseline --bootstrap 127.0.0.1:PORT --messages 20000 [--json]

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafkacpp.h>
#include <CLI/CLI.hpp>

#include <babelqueue/codec.hpp>

#include "bench_work.hpp"  // tools/babelqueue/src: Usage, as `bench transport` measures it

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr int kPollMs = 100;
constexpr std::chrono::seconds kDeadline{300};

struct Args {
  std::string bootstrap = "127.0.0.1:9092";
  long messages = 20'000;
  long size = 259;
  std::string body_file;
  long batch = 16;  // kBenchBatch of tools/babelqueue/src/bench_transport.cpp
  long commit_every = 100;
  long warmup = 1000;
  bool headers = true;
  bool decode = false;
  bool json = false;
};

// Exits with CLI11's message on bad arguments (status 2 on an error, 0 for --help).
Args parse(int argc, char** argv) {
  Args a;
  CLI::App app{"The raw librdkafka baseline of `babelqueue bench transport --url kafka://...`"};
  app.add_option("--bootstrap", a.bootstrap, "HOST:PORT of the broker");
  app.add_option("--messages", a.messages, "Records per pattern")
      ->check(CLI::Range(1L, 100'000'000L));
  app.add_option("--size", a.size, "Value bytes (without --body-file)")
      ->check(CLI::Range(1L, 100'000'000L));
  app.add_option("--body-file", a.body_file, "The value of every record")->check(CLI::ExistingFile);
  app.add_option("--batch", a.batch, "Records produced before waiting for their reports")
      ->check(CLI::Range(1L, 1'000'000L));
  app.add_option("--commit-every", a.commit_every, "Records between two commitAsync")
      ->check(CLI::Range(1L, 1'000'000L));
  app.add_option("--warmup", a.warmup, "Untimed records before each pattern")
      ->check(CLI::Range(0L, 100'000'000L));
  app.add_flag("!--no-headers", a.headers, "Consume without reading the records' headers");
  app.add_flag("--decode", a.decode, "Decode each consumed value with the SDK's envelope codec");
  app.add_flag("--json", a.json, "Print one JSON object");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
  return a;
}

std::unique_ptr<RdKafka::Conf> make_conf(
    const Args& a, std::initializer_list<std::pair<const char*, std::string>> settings) {
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string error;
  const auto set = [&](const std::string& name, const std::string& value) {
    if (conf->set(name, value, error) != RdKafka::Conf::CONF_OK)
      throw std::runtime_error(name + "=" + value + ": " + error);
  };
  set("bootstrap.servers", a.bootstrap);
  for (const auto& [name, value] : settings)
    set(name, value);
  return conf;
}

// Counts the delivery reports and keeps the first failure (called inside librdkafka's C code,
// which an exception must not cross).
class Reports : public RdKafka::DeliveryReportCb {
 public:
  void dr_cb(RdKafka::Message& message) override {
    if (message.err() != RdKafka::ERR_NO_ERROR && failure_.empty()) failure_ = message.errstr();
    ++delivered_;
  }
  [[nodiscard]] long delivered() const { return delivered_; }
  [[nodiscard]] const std::string& failure() const { return failure_; }

 private:
  long delivered_ = 0;
  std::string failure_;
};

class Producer {
 public:
  Producer(const Args& a, std::string body) : body_(std::move(body)) {
    const std::unique_ptr<RdKafka::Conf> conf =
        make_conf(a, {{"acks", "all"}, {"enable.idempotence", "true"}, {"linger.ms", "0"}});
    std::string error;
    if (conf->set("dr_cb", &reports_, error) != RdKafka::Conf::CONF_OK)
      throw std::runtime_error(error);
    producer_.reset(RdKafka::Producer::create(conf.get(), error));
    if (!producer_) throw std::runtime_error("producer: " + error);
  }

  // `count` records, `window` at a time: produce them, then wait for their reports.
  void produce(const std::string& topic, long count, long window) {
    for (long done = 0; done < count;) {
      const long n = std::min(window, count - done);
      const long target = reports_.delivered() + n;
      for (long i = 0; i < n; ++i)
        produce_one(topic);
      wait_for(target);
      done += n;
    }
  }

  RdKafka::Producer& handle() { return *producer_; }

 private:
  void produce_one(const std::string& topic) {
    // The projection's headers (KFK-5) with values of a typical envelope.
    RdKafka::Headers* headers = RdKafka::Headers::create();
    headers->add("bq-job", "urn:babel:orders:created");
    headers->add("bq-trace-id", "4bf92f3577b34da6a3ce929d0e0e4736");
    headers->add("bq-message-id", "0b9a3c0e-8f7d-4c62-9a41-6f3e2d1c0b9a");
    headers->add("bq-schema-version", "1");
    headers->add("bq-source-lang", "cpp");
    headers->add("bq-attempts", "0");
    const RdKafka::ErrorCode err = producer_->produce(
        topic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
        const_cast<char*>(body_.data()), body_.size(), nullptr, 0, 0, headers, nullptr);
    if (err != RdKafka::ERR_NO_ERROR) {
      delete headers;  // only a produced record takes them
      throw std::runtime_error("produce: " + RdKafka::err2str(err));
    }
  }

  void wait_for(long target) {
    const auto deadline = std::chrono::steady_clock::now() + kDeadline;
    while (reports_.delivered() < target) {
      if (std::chrono::steady_clock::now() >= deadline)
        throw std::runtime_error("delivery reports timed out");
      producer_->poll(kPollMs);
    }
    if (!reports_.failure().empty())
      throw std::runtime_error("delivery failed: " + reports_.failure());
  }

  std::string body_;
  Reports reports_;
  std::unique_ptr<RdKafka::Producer> producer_;
};

class Consumer {
 public:
  Consumer(const Args& a, const std::string& topic)
      : commit_every_(a.commit_every), headers_(a.headers), decode_(a.decode) {
    const std::unique_ptr<RdKafka::Conf> conf = make_conf(
        a,
        {{"group.id", topic}, {"enable.auto.commit", "false"}, {"auto.offset.reset", "earliest"}});
    std::string error;
    consumer_.reset(RdKafka::KafkaConsumer::create(conf.get(), error));
    if (!consumer_) throw std::runtime_error("consumer: " + error);
    const RdKafka::ErrorCode err = consumer_->subscribe({topic});
    if (err != RdKafka::ERR_NO_ERROR)
      throw std::runtime_error("subscribe: " + RdKafka::err2str(err));
  }
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;
  ~Consumer() { consumer_->close(); }

  void consume(long count) {
    const auto deadline = std::chrono::steady_clock::now() + kDeadline;
    for (long got = 0; got < count;) {
      if (std::chrono::steady_clock::now() >= deadline)
        throw std::runtime_error("consume timed out");
      const std::unique_ptr<RdKafka::Message> message(consumer_->consume(kPollMs));
      if (message->err() == RdKafka::ERR__TIMED_OUT) continue;
      if (message->err() != RdKafka::ERR_NO_ERROR)
        throw std::runtime_error("consume: " + message->errstr());
      if (headers_) read_headers(*message);
      if (decode_ && !babelqueue::try_decode(std::string_view(
                         static_cast<const char*>(message->payload()), message->len()))) {
        throw std::runtime_error("consume: a value is not an envelope");
      }
      ++got;
      next_[message->partition()] = message->offset() + 1;
      if (++since_commit_ == commit_every_) commit(message->topic_name());
    }
  }

  // Every header's name and value, in place (a consumer finds its bq-* headers among them).
  void read_headers(RdKafka::Message& message) {
    rd_kafka_headers_t* headers = nullptr;
    if (rd_kafka_message_headers(message.c_ptr(), &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) return;
    const char* name = nullptr;
    const void* value = nullptr;
    std::size_t size = 0;
    for (std::size_t i = 0;
         rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
         ++i) {
      header_bytes_ += std::string_view(name).size() + (value == nullptr ? 0 : size);
    }
  }
  [[nodiscard]] std::size_t header_bytes() const { return header_bytes_; }

  void commit(const std::string& topic) {
    since_commit_ = 0;
    std::vector<RdKafka::TopicPartition*> partitions;
    for (const auto& [partition, offset] : next_)
      partitions.push_back(RdKafka::TopicPartition::create(topic, partition, offset));
    const RdKafka::ErrorCode err = consumer_->commitAsync(partitions);
    RdKafka::TopicPartition::destroy(partitions);
    if (err != RdKafka::ERR_NO_ERROR) throw std::runtime_error("commit: " + RdKafka::err2str(err));
  }

 private:
  long commit_every_;
  bool headers_;
  bool decode_;
  long since_commit_ = 0;
  std::map<std::int32_t, std::int64_t> next_;  // partition -> offset after the last record read
  std::size_t header_bytes_ = 0;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer_;
};

using Clock = std::chrono::steady_clock;

// Records per second of `n` records handled since `start`.
double rate_since(long n, Clock::time_point start) {
  const std::chrono::duration<double> took = Clock::now() - start;
  return static_cast<double>(n) / std::max(took.count(), 1e-9);
}

std::string read_body(const Args& a) {
  if (a.body_file.empty()) return std::string(static_cast<std::size_t>(a.size), 'x');
  std::ifstream in(a.body_file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + a.body_file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void delete_topics(RdKafka::Producer& producer, const std::vector<std::string>& names) {
  rd_kafka_t* rk = producer.c_ptr();
  std::vector<rd_kafka_DeleteTopic_t*> topics;
  for (const std::string& name : names)
    topics.push_back(rd_kafka_DeleteTopic_new(name.c_str()));
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_DeleteTopics(rk, topics.data(), topics.size(), nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30'000);
  const bool failed = event == nullptr || rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR;
  if (event != nullptr) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_DeleteTopic_destroy_array(topics.data(), topics.size());
  if (failed) throw std::runtime_error("deleting the topics failed");
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
    const std::string body = read_body(a);
    const std::string each = "raw-baseline-" + std::to_string(::getpid());
    const std::string batched = each + "-batch";
    const long warm = std::min(a.warmup, a.messages);
    Producer producer(a, body);
    const auto produce = [&](const std::string& topic, long window) {
      producer.produce(topic, warm, window);
      const auto start = Clock::now();
      producer.produce(topic, a.messages, window);
      return rate_since(a.messages, start);
    };
    const double produce1 = produce(each, 1);
    const double produce_n = produce(batched, a.batch);
    double consume = 0;
    std::size_t header_bytes = 0;
    babelqueue::cli::Usage before;
    babelqueue::cli::Usage after;
    {
      Consumer consumer(a, each);
      consumer.consume(warm);
      before = babelqueue::cli::Usage::now();
      const auto start = Clock::now();
      consumer.consume(a.messages);
      consume = rate_since(a.messages, start);
      after = babelqueue::cli::Usage::now();
      header_bytes = consumer.header_bytes();
    }
    const auto n = static_cast<double>(a.messages);
    const double cpu_ns = (after.cpu_ns - before.cpu_ns) / n;
    const double waits = static_cast<double>(after.waits - before.waits) / n;
    delete_topics(producer.handle(), {each, batched});
    if (a.json) {
      std::printf(
          "{\"client\":\"librdkafka %s\",\"bootstrap\":\"%s\",\"messages\":%ld,\"bytes\":%zu,"
          "\"batch\":%ld,\"commit_every\":%ld,\"produce1_msgs_per_s\":%.0f,"
          "\"produceN_msgs_per_s\":%.0f,\"consume_msgs_per_s\":%.0f,"
          "\"consume_cpu_ns_per_msg\":%.0f,\"consume_waits_per_msg\":%.3f,"
          "\"header_bytes_read\":%zu}\n",
          RdKafka::version_str().c_str(), a.bootstrap.c_str(), a.messages, body.size(), a.batch,
          a.commit_every, produce1, produce_n, consume, cpu_ns, waits, header_bytes);
    } else {
      std::printf("librdkafka %s on %s, %ld records of %zu bytes, acks=all, idempotent\n",
                  RdKafka::version_str().c_str(), a.bootstrap.c_str(), a.messages, body.size());
      std::printf("  %-40s %12.0f msg/s\n", "produce, wait for each report", produce1);
      std::printf("  %-40s %12.0f msg/s\n",
                  ("produce " + std::to_string(a.batch) + ", wait for their reports").c_str(),
                  produce_n);
      std::printf("  %-40s %12.0f msg/s\n",
                  ("consume, commitAsync every " + std::to_string(a.commit_every) +
                   (a.headers ? ", headers read" : ", headers not read"))
                      .c_str(),
                  consume);
      std::printf("  per record consumed (the process, every thread): %.0f ns CPU, %.3f waits\n",
                  cpu_ns, waits);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "raw_baseline: %s\n", e.what());
    return 1;
  }
  return 0;
}
