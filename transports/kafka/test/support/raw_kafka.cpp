// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "raw_kafka.hpp"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string_view>

namespace babelqueue::kafka::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kCallTimeout{30'000};
constexpr int kPollMs = 100;
// librdkafka's consumer API needs a group.id even for assign(); read_all never joins or commits.
constexpr std::string_view kReadAllGroup = "babelqueue-raw-read-all";

struct KafkaDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using KafkaHandle = std::unique_ptr<rd_kafka_t, KafkaDeleter>;

struct ConfDeleter {
  void operator()(rd_kafka_conf_t* conf) const { rd_kafka_conf_destroy(conf); }
};
using ConfHandle = std::unique_ptr<rd_kafka_conf_t, ConfDeleter>;

struct TopicListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
using TopicList = std::unique_ptr<rd_kafka_topic_partition_list_t, TopicListDeleter>;

struct QueueDeleter {
  void operator()(rd_kafka_queue_t* queue) const { rd_kafka_queue_destroy(queue); }
};

struct EventDeleter {
  void operator()(rd_kafka_event_t* event) const { rd_kafka_event_destroy(event); }
};

struct MessageDeleter {
  void operator()(rd_kafka_message_t* message) const { rd_kafka_message_destroy(message); }
};

struct MetadataDeleter {
  void operator()(const rd_kafka_metadata_t* metadata) const {
    rd_kafka_metadata_destroy(metadata);
  }
};

[[noreturn]] void fail(const std::string& what, rd_kafka_resp_err_t err) {
  throw std::runtime_error("raw kafka: " + what + ": " + rd_kafka_err2str(err));
}

int to_ms(milliseconds timeout) {
  return static_cast<int>(std::max<milliseconds::rep>(timeout.count(), 0));
}

// Client errors (a refused connection while the broker starts, ...) reach the caller as the
// error of the call that needed the broker; the logs would only repeat them.
void discard_log(const rd_kafka_t*, int, const char*, const char*) {}

ConfHandle make_conf(const std::string& bootstrap,
                     std::initializer_list<std::pair<const char*, std::string>> settings) {
  ConfHandle conf(rd_kafka_conf_new());
  std::array<char, 512> errstr{};
  const auto set = [&conf, &errstr](const char* name, const std::string& value) {
    if (rd_kafka_conf_set(conf.get(), name, value.c_str(), errstr.data(), errstr.size()) !=
        RD_KAFKA_CONF_OK) {
      throw std::runtime_error("raw kafka: " + std::string(name) + "=" + value + ": " +
                               errstr.data());
    }
  };
  set("bootstrap.servers", bootstrap);
  for (const auto& [name, value] : settings)
    set(name, value);
  rd_kafka_conf_set_log_cb(conf.get(), discard_log);
  return conf;
}

KafkaHandle make_client(rd_kafka_type_t type, ConfHandle conf) {
  std::array<char, 512> errstr{};
  rd_kafka_t* rk = rd_kafka_new(type, conf.get(), errstr.data(), errstr.size());
  if (rk == nullptr)
    throw std::runtime_error("raw kafka: rd_kafka_new: " + std::string(errstr.data()));
  static_cast<void>(conf.release());  // rd_kafka_new took it
  return KafkaHandle(rk);
}

// A consumer that is closed (leaving its group, if any) before it is destroyed.
struct Consumer {
  KafkaHandle rk;
  explicit Consumer(KafkaHandle handle) : rk(std::move(handle)) {}
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;
  ~Consumer() { rd_kafka_consumer_close(rk.get()); }
};

Consumer make_consumer(const std::string& bootstrap, const std::string& group) {
  ConfHandle conf =
      make_conf(bootstrap, {{"enable.auto.commit", "false"}, {"enable.partition.eof", "true"}});
  std::array<char, 512> errstr{};
  if (rd_kafka_conf_set(conf.get(), "group.id", group.c_str(), errstr.data(), errstr.size()) !=
      RD_KAFKA_CONF_OK) {
    throw std::runtime_error("raw kafka: group.id=" + group + ": " + errstr.data());
  }
  return Consumer(make_client(RD_KAFKA_CONSUMER, std::move(conf)));
}

int partitions_of(rd_kafka_t* rk, const std::string& topic, milliseconds timeout) {
  std::unique_ptr<rd_kafka_topic_t, decltype(&rd_kafka_topic_destroy)> rkt(
      rd_kafka_topic_new(rk, topic.c_str(), nullptr), rd_kafka_topic_destroy);
  const rd_kafka_metadata_t* raw = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt.get(), &raw, to_ms(timeout));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) fail("metadata of " + topic, err);
  const std::unique_ptr<const rd_kafka_metadata_t, MetadataDeleter> metadata(raw);
  for (int i = 0; i < metadata->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& t = metadata->topics[i];
    if (topic != t.topic) continue;
    if (t.err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) return 0;
    if (t.err != RD_KAFKA_RESP_ERR_NO_ERROR) fail("metadata of " + topic, t.err);
    return t.partition_cnt;
  }
  return 0;
}

struct Delivery {
  bool done = false;
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  auto* delivery = static_cast<Delivery*>(message->_private);
  delivery->err = message->err;
  delivery->done = true;
}

RawRecord to_record(const rd_kafka_message_t& message) {
  RawRecord record;
  record.topic = rd_kafka_topic_name(message.rkt);
  record.partition = message.partition;
  record.offset = message.offset;
  if (message.key != nullptr)
    record.key.emplace(static_cast<const char*>(message.key), message.key_len);
  if (message.payload != nullptr)
    record.value.assign(static_cast<const char*>(message.payload), message.len);
  record.timestamp_ms = rd_kafka_message_timestamp(&message, nullptr);
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(&message, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    const char* name = nullptr;
    const void* value = nullptr;
    std::size_t size = 0;
    for (std::size_t i = 0;
         rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
         ++i) {
      std::optional<std::string> text;
      if (value != nullptr) text.emplace(static_cast<const char*>(value), size);
      record.headers.emplace_back(name, std::move(text));
    }
  }
  return record;
}

}  // namespace

struct RawKafka::Producer {
  KafkaHandle rk;
};

RawKafka::RawKafka(std::string bootstrap) : bootstrap_(std::move(bootstrap)) {
  ConfHandle conf =
      make_conf(bootstrap_, {{"enable.idempotence", "true"},
                             {"acks", "all"},
                             {"linger.ms", "0"},
                             {"message.timeout.ms", std::to_string(kCallTimeout.count())}});
  rd_kafka_conf_set_dr_msg_cb(conf.get(), on_delivery);
  producer_ = std::make_unique<Producer>(Producer{make_client(RD_KAFKA_PRODUCER, std::move(conf))});
}

RawKafka::~RawKafka() = default;

void RawKafka::create_topic(const std::string& topic, int partitions) {
  rd_kafka_t* rk = producer_->rk.get();
  std::array<char, 512> errstr{};
  std::unique_ptr<rd_kafka_NewTopic_t, decltype(&rd_kafka_NewTopic_destroy)> new_topic(
      rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, errstr.data(), errstr.size()),
      rd_kafka_NewTopic_destroy);
  if (!new_topic) throw std::runtime_error("raw kafka: topic " + topic + ": " + errstr.data());
  const std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(rk));
  std::array<rd_kafka_NewTopic_t*, 1> topics{new_topic.get()};
  rd_kafka_CreateTopics(rk, topics.data(), topics.size(), nullptr, queue.get());
  const std::unique_ptr<rd_kafka_event_t, EventDeleter> event(
      rd_kafka_queue_poll(queue.get(), to_ms(kCallTimeout)));
  if (!event) fail("create topic " + topic, RD_KAFKA_RESP_ERR__TIMED_OUT);
  if (rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR)
    fail("create topic " + topic, rd_kafka_event_error(event.get()));
  std::size_t count = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event.get()), &count);
  for (std::size_t i = 0; i < count; ++i) {
    const rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
      fail("create topic " + topic, err);
  }
  // The controller answers before the broker's metadata has the new topic.
  const auto deadline = Clock::now() + kCallTimeout;
  while (partitions_of(rk, topic, kCallTimeout) == 0) {
    if (Clock::now() >= deadline) fail("create topic " + topic, RD_KAFKA_RESP_ERR__TIMED_OUT);
    rd_kafka_poll(rk, 10);
  }
}

void RawKafka::produce(const std::string& topic, std::optional<std::string> key, std::string value,
                       std::vector<RawHeader> headers, std::int32_t partition) {
  rd_kafka_t* rk = producer_->rk.get();
  rd_kafka_headers_t* hdrs = rd_kafka_headers_new(headers.size());
  for (const auto& [name, header_value] : headers) {
    rd_kafka_header_add(hdrs, name.data(), static_cast<ssize_t>(name.size()),
                        header_value ? header_value->data() : nullptr,
                        header_value ? static_cast<ssize_t>(header_value->size()) : 0);
  }
  Delivery delivery;
  // A key that is present but empty needs a non-null pointer: a null one is the null key.
  static constexpr char kEmpty[] = "";
  const char* key_data = nullptr;
  if (key) key_data = key->empty() ? kEmpty : key->data();
  const std::size_t key_size = key ? key->size() : 0;
  const rd_kafka_resp_err_t err = rd_kafka_producev(
      rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key_data, key_size),
      RD_KAFKA_V_VALUE(value.data(), value.size()), RD_KAFKA_V_HEADERS(hdrs),
      RD_KAFKA_V_OPAQUE(&delivery), RD_KAFKA_V_END);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_headers_destroy(hdrs);  // only a produced record takes them
    fail("produce to " + topic, err);
  }
  // message.timeout.ms bounds the wait: the report comes, with an error at the latest.
  while (!delivery.done)
    rd_kafka_poll(rk, kPollMs);
  if (delivery.err != RD_KAFKA_RESP_ERR_NO_ERROR) fail("delivery to " + topic, delivery.err);
}

std::vector<RawRecord> RawKafka::read_all(const std::string& topic, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const int partitions = partitions_of(producer_->rk.get(), topic, timeout);
  // Next offset to read and the end, per partition.
  std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> pending;
  for (std::int32_t p = 0; p < partitions; ++p) {
    std::int64_t low = 0;
    std::int64_t high = 0;
    const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
        producer_->rk.get(), topic.c_str(), p, &low, &high, to_ms(timeout));
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) fail("watermarks of " + topic, err);
    if (high > low) pending[p] = {low, high};
  }
  std::map<std::int32_t, std::vector<RawRecord>> by_partition;
  if (!pending.empty()) {
    const Consumer consumer = make_consumer(bootstrap_, std::string(kReadAllGroup));
    const TopicList assignment(rd_kafka_topic_partition_list_new(static_cast<int>(pending.size())));
    for (const auto& [p, range] : pending)
      rd_kafka_topic_partition_list_add(assignment.get(), topic.c_str(), p)->offset = range.first;
    const rd_kafka_resp_err_t err = rd_kafka_assign(consumer.rk.get(), assignment.get());
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) fail("assign " + topic, err);
    while (!pending.empty()) {
      if (Clock::now() >= deadline) fail("read_all " + topic, RD_KAFKA_RESP_ERR__TIMED_OUT);
      const std::unique_ptr<rd_kafka_message_t, MessageDeleter> message(
          rd_kafka_consumer_poll(consumer.rk.get(), kPollMs));
      if (!message) continue;
      const auto it = pending.find(message->partition);
      if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        if (it != pending.end() && message->offset >= it->second.second) pending.erase(it);
        continue;
      }
      if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) fail("read_all " + topic, message->err);
      if (it == pending.end() || message->offset >= it->second.second) continue;
      by_partition[message->partition].push_back(to_record(*message));
      it->second.first = message->offset + 1;
      if (it->second.first >= it->second.second) pending.erase(it);
    }
  }
  std::vector<RawRecord> records;
  for (auto& [p, list] : by_partition)
    std::move(list.begin(), list.end(), std::back_inserter(records));
  return records;
}

std::int64_t RawKafka::committed(const std::string& group, const std::string& topic,
                                 std::int32_t partition, milliseconds timeout) {
  const Consumer consumer = make_consumer(bootstrap_, group);
  const TopicList list(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition);
  const rd_kafka_resp_err_t err = rd_kafka_committed(consumer.rk.get(), list.get(), to_ms(timeout));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) fail("committed of " + group, err);
  const rd_kafka_topic_partition_t& result = list->elems[0];
  if (result.err != RD_KAFKA_RESP_ERR_NO_ERROR) fail("committed of " + group, result.err);
  return result.offset < 0 ? -1 : result.offset;
}

std::int64_t RawKafka::end_offset(const std::string& topic, std::int32_t partition) {
  std::int64_t low = 0;
  std::int64_t high = 0;
  const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
      producer_->rk.get(), topic.c_str(), partition, &low, &high, to_ms(kCallTimeout));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) fail("end offset of " + topic, err);
  return high;
}

int RawKafka::partition_count(const std::string& topic) {
  return partitions_of(producer_->rk.get(), topic, kCallTimeout);
}

std::string RawKafka::cluster_id(milliseconds timeout) {
  char* id = rd_kafka_clusterid(producer_->rk.get(), to_ms(timeout));
  if (id == nullptr) fail("cluster id", RD_KAFKA_RESP_ERR__TIMED_OUT);
  std::string result(id);
  rd_kafka_mem_free(producer_->rk.get(), id);
  return result;
}

}  // namespace babelqueue::kafka::test
