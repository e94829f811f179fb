// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Topic creation (C admin API: the C++ API of librdkafka 2.0.2 has none) and the Inspector,
// which uses short-lived consumers that never subscribe, so they never join or disturb the group.

#include "admin.hpp"

#include <babelqueue/spi/text.hpp>

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <utility>

#include "consumer.hpp"
#include "options.hpp"
#include "records.hpp"

namespace babelqueue::kafka::detail {
namespace {

int timeout_ms(const Options& options) {
  return static_cast<int>(options.publish_timeout.count());
}

template <class T, void (*Destroy)(T*)>
struct CDeleter {
  void operator()(T* p) const noexcept { Destroy(p); }
};
using Queue = std::unique_ptr<rd_kafka_queue_t, CDeleter<rd_kafka_queue_t, rd_kafka_queue_destroy>>;
using AdminOptions =
    std::unique_ptr<rd_kafka_AdminOptions_t,
                    CDeleter<rd_kafka_AdminOptions_t, rd_kafka_AdminOptions_destroy>>;
using Event = std::unique_ptr<rd_kafka_event_t, CDeleter<rd_kafka_event_t, rd_kafka_event_destroy>>;
using NewTopic =
    std::unique_ptr<rd_kafka_NewTopic_t, CDeleter<rd_kafka_NewTopic_t, rd_kafka_NewTopic_destroy>>;

struct Partitions {
  std::vector<RdKafka::TopicPartition*> list;
  Partitions() = default;
  Partitions(const Partitions&) = delete;
  Partitions& operator=(const Partitions&) = delete;
  ~Partitions() { RdKafka::TopicPartition::destroy(list); }
};

Result<std::unique_ptr<RdKafka::KafkaConsumer>> make_consumer(const Options& options,
                                                              EventLogger& logger,
                                                              const std::string& group) {
  try {
    const std::unique_ptr<RdKafka::Conf> conf =
        consumer_conf(options, group, Callbacks{.event = &logger});
    std::string err;
    std::unique_ptr<RdKafka::KafkaConsumer> c(RdKafka::KafkaConsumer::create(conf.get(), err));
    if (!c)
      return ConfigError("kafka: cannot create a consumer: " + scrub(err, options.sasl_password));
    return c;
  } catch (const Error& e) {
    return e;
  }
}

// The partition count of `topic`; 0 when it does not exist.
Result<int> partition_count(RdKafka::KafkaConsumer& c, const std::string& topic,
                            const Options& options) {
  std::string err;
  const std::unique_ptr<RdKafka::Topic> t(RdKafka::Topic::create(&c, topic, nullptr, err));
  if (!t) return ConfigError("kafka: topic " + spi::quoted(topic) + ": " + err);
  RdKafka::Metadata* raw = nullptr;
  const RdKafka::ErrorCode code = c.metadata(false, t.get(), &raw, timeout_ms(options));
  const std::unique_ptr<RdKafka::Metadata> md(raw);
  if (code != RdKafka::ERR_NO_ERROR) return map_error(code, "metadata of " + topic);
  for (const RdKafka::TopicMetadata* tm : *md->topics()) {
    if (tm->topic() != topic) continue;
    if (tm->err() == RdKafka::ERR_UNKNOWN_TOPIC_OR_PART) return 0;
    if (tm->err() != RdKafka::ERR_NO_ERROR) return map_error(tm->err(), "metadata of " + topic);
    return static_cast<int>(tm->partitions()->size());
  }
  return 0;
}

struct Watermarks {
  std::int64_t low = 0;
  std::int64_t high = 0;
};

Result<Watermarks> watermarks(RdKafka::KafkaConsumer& c, const std::string& topic,
                              std::int32_t partition, const Options& options) {
  Watermarks w;
  const RdKafka::ErrorCode code =
      c.query_watermark_offsets(topic, partition, &w.low, &w.high, timeout_ms(options));
  if (code != RdKafka::ERR_NO_ERROR) return map_error(code, "watermarks of " + topic);
  return w;
}

}  // namespace

Status create_topics(RdKafka::Handle& client, const std::vector<std::string>& topics,
                     const Options& options) {
  rd_kafka_t* rk = client.c_ptr();
  char errstr[512];
  std::vector<NewTopic> owned;
  std::vector<rd_kafka_NewTopic_t*> raw;
  for (const std::string& name : topics) {
    owned.emplace_back(rd_kafka_NewTopic_new(name.c_str(), options.partitions,
                                             options.replication_factor, errstr, sizeof errstr));
    if (!owned.back()) return ConfigError("kafka: topic " + spi::quoted(name) + ": " + errstr);
    raw.push_back(owned.back().get());
  }
  const Queue queue(rd_kafka_queue_new(rk));
  const AdminOptions admin(rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS));
  rd_kafka_AdminOptions_set_request_timeout(admin.get(), timeout_ms(options), errstr,
                                            sizeof errstr);
  rd_kafka_CreateTopics(rk, raw.data(), raw.size(), admin.get(), queue.get());
  const Event event(rd_kafka_queue_poll(queue.get(), timeout_ms(options)));
  if (!event) return TimeoutError("kafka: create topics: no answer within publish_timeout");
  if (rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return map_error(static_cast<RdKafka::ErrorCode>(rd_kafka_event_error(event.get())),
                     "create topics", rd_kafka_event_error_string(event.get()));
  }
  std::size_t count = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event.get()), &count);
  for (std::size_t i = 0; i < count; ++i) {
    const rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
      continue;
    const char* why = rd_kafka_topic_result_error_string(results[i]);
    return map_error(static_cast<RdKafka::ErrorCode>(err),
                     std::string("create topic ") + rd_kafka_topic_result_name(results[i]),
                     why == nullptr ? "" : why);
  }
  return {};
}

Result<QueueStats> topic_stats(const Options& options, EventLogger& logger,
                               const std::string& topic, const std::string& dlq) {
  auto c = make_consumer(options, logger, options.group_id);
  if (!c) return c.error();
  RdKafka::KafkaConsumer& consumer = **c;
  QueueStats stats;
  auto partitions = partition_count(consumer, topic, options);
  if (!partitions) return partitions.error();
  Partitions committed;
  for (std::int32_t p = 0; p < *partitions; ++p)
    committed.list.push_back(RdKafka::TopicPartition::create(topic, p));
  if (!committed.list.empty()) {
    const RdKafka::ErrorCode code = consumer.committed(committed.list, timeout_ms(options));
    if (code != RdKafka::ERR_NO_ERROR) return map_error(code, "committed offsets of " + topic);
  }
  std::int64_t ready = 0;
  for (const RdKafka::TopicPartition* tp : committed.list) {
    auto w = watermarks(consumer, topic, tp->partition(), options);
    if (!w) return w.error();
    const std::int64_t offset = tp->offset();
    const std::int64_t lag = offset >= 0 ? w->high - offset : w->high - w->low;
    ready += lag;
    stats.details.emplace_back("partition " + std::to_string(tp->partition()),
                               "end " + std::to_string(w->high) + ", committed " +
                                   (offset >= 0 ? std::to_string(offset) : std::string("none")) +
                                   ", lag " + std::to_string(lag));
  }
  if (*partitions == 0) stats.details.emplace_back("topic", topic + " does not exist");
  stats.ready = ready;
  auto dlq_partitions = partition_count(consumer, dlq, options);
  if (!dlq_partitions) return dlq_partitions.error();
  std::int64_t dead = 0;
  for (std::int32_t p = 0; p < *dlq_partitions; ++p) {
    auto w = watermarks(consumer, dlq, p, options);
    if (!w) return w.error();
    dead += w->high - w->low;
  }
  if (*dlq_partitions == 0)
    stats.details.emplace_back("dead-letter topic", dlq + " does not exist");
  stats.dead_letter = dead;
  consumer.close();
  return stats;
}

Result<std::vector<PeekedMessage>> peek_topic(const Options& options, EventLogger& logger,
                                              const std::string& topic, std::size_t max) {
  static std::atomic<std::uint64_t> peeks{0};
  const std::string group =
      options.group_id + ".peek." +
      std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "." +
      std::to_string(++peeks);
  auto c = make_consumer(options, logger, group);
  if (!c) return c.error();
  RdKafka::KafkaConsumer& consumer = **c;
  auto partitions = partition_count(consumer, topic, options);
  if (!partitions) return partitions.error();
  Partitions assignment;
  std::map<std::int32_t, std::int64_t> ends;
  for (std::int32_t p = 0; p < *partitions; ++p) {
    auto w = watermarks(consumer, topic, p, options);
    if (!w) return w.error();
    if (w->high <= w->low) continue;
    ends[p] = w->high;
    assignment.list.push_back(RdKafka::TopicPartition::create(topic, p, w->low));
  }
  std::vector<PeekedMessage> out;
  if (!assignment.list.empty()) {
    const RdKafka::ErrorCode code = consumer.assign(assignment.list);
    if (code != RdKafka::ERR_NO_ERROR) return map_error(code, "peek " + topic);
  }
  const auto deadline = std::chrono::steady_clock::now() + options.publish_timeout;
  while (!ends.empty() && (max == 0 || out.size() < max) &&
         std::chrono::steady_clock::now() < deadline) {
    const std::unique_ptr<RdKafka::Message> m(consumer.consume(100));
    if (m->err() == RdKafka::ERR__TIMED_OUT || m->err() == RdKafka::ERR__PARTITION_EOF) continue;
    if (m->err() != RdKafka::ERR_NO_ERROR) return map_error(m->err(), "peek " + topic, m->errstr());
    const auto end = ends.find(m->partition());
    if (end == ends.end()) continue;
    if (m->offset() + 1 >= end->second) ends.erase(end);
    PeekedMessage peeked;
    peeked.body = record_value(*m->c_ptr());
    peeked.headers = text_headers(WireHeaders(*m->c_ptr()).views());
    out.push_back(std::move(peeked));
  }
  consumer.close();
  return out;
}

}  // namespace babelqueue::kafka::detail
