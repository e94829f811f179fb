// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The sqs:// scheme for open_transport and the CLI's SQS flags.

#include <babelqueue/spi/registry.hpp>
#include <babelqueue/sqs/transport.hpp>

namespace babelqueue::sqs {
namespace {

spi::TransportFactory factory() {
  spi::TransportFactory f;
  f.component = "sqs";
  f.schemes = {"sqs"};
  f.summary =
      "Amazon SQS (JSON protocol, SigV4): batched sends, receives and deletes, visibility kept "
      "alive";
  f.flags = {
      {"endpoint", "endpoint",
       "SQS: endpoint every request goes to (default https://sqs.<region>.amazonaws.com)"},
      {"queue-url-prefix", "prefix",
       "SQS: queue URL = prefix + '/' + name, no GetQueueUrl (default: GetQueueUrl)"},
      {"visibility-timeout", "visibility_timeout",
       "SQS: visibility timeout set on receive, seconds (default 0: the queue's)"},
  };
  f.open = [](std::string_view url, const OpenOptions& options) -> std::shared_ptr<Transport> {
    Options o;
    o.logger = options.logger;
    return std::make_shared<SqsTransport>(parse_url(url, std::move(o)));
  };
  return f;
}

}  // namespace
}  // namespace babelqueue::sqs

BABELQUEUE_REGISTER_TRANSPORT(sqs, babelqueue::sqs::factory());
