// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors

#include "mock_cluster.hpp"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <stdexcept>

namespace babelqueue::kafka::testing {
namespace {

void check(rd_kafka_resp_err_t err, const char* what) {
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw std::runtime_error(std::string("mock cluster: ") + what + ": " + rd_kafka_err2str(err));
  }
}

}  // namespace

MockCluster::MockCluster(int brokers) {
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof errstr);
  handle_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
  if (handle_ == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("mock cluster: ") + errstr);
  }
  cluster_ = rd_kafka_mock_cluster_new(handle_, brokers);
  if (cluster_ == nullptr) {
    rd_kafka_destroy(handle_);
    throw std::runtime_error("mock cluster: rd_kafka_mock_cluster_new failed");
  }
}

MockCluster::~MockCluster() {
  rd_kafka_mock_cluster_destroy(cluster_);
  rd_kafka_destroy(handle_);
}

std::string MockCluster::bootstrap_servers() const {
  return rd_kafka_mock_cluster_bootstraps(cluster_);
}

std::string MockCluster::url(const std::string& query) const {
  return "kafka://" + bootstrap_servers() + query;
}

void MockCluster::create_topic(const std::string& topic, int partitions) {
  check(rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, 1), "create topic");
}

void MockCluster::push_request_errors(std::int16_t api_key, const std::vector<int>& errors) {
  std::vector<rd_kafka_resp_err_t> codes;
  codes.reserve(errors.size());
  for (const int e : errors)
    codes.push_back(static_cast<rd_kafka_resp_err_t>(e));
  rd_kafka_mock_push_request_errors_array(cluster_, api_key, codes.size(), codes.data());
}

void MockCluster::clear_request_errors(std::int16_t api_key) {
  rd_kafka_mock_clear_request_errors(cluster_, api_key);
}

void MockCluster::set_broker_down(std::int32_t broker) {
  check(rd_kafka_mock_broker_set_down(cluster_, broker), "broker down");
}

void MockCluster::set_broker_up(std::int32_t broker) {
  check(rd_kafka_mock_broker_set_up(cluster_, broker), "broker up");
}

void MockCluster::set_partition_leader(const std::string& topic, std::int32_t partition,
                                       std::int32_t broker) {
  check(rd_kafka_mock_partition_set_leader(cluster_, topic.c_str(), partition, broker),
        "partition leader");
}

}  // namespace babelqueue::kafka::testing
