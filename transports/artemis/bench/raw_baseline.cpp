// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The raw Qpid Proton C++ baseline of `babelqueue bench transport --url artemis://...` (issue
// 12): the same patterns on the plain Proton API, one connection (SASL PLAIN), links with the
// `queue` capability, durable messages whose body is an AMQP string of --size bytes (or the
// bytes of --body-file: the envelope `bench transport` sends) with the fields of the ART-4
// projection (the x-opt-jms-type annotation, correlation-id, creation-time and the four bq_
// application properties; --bare: none), and no BabelQueue code.
//
//   publish1  send one message, wait for its accepted outcome
//   publishN  send --batch messages, wait for all their outcomes
//   consume   a receiver with credit --prefetch (topped up per message), accepting each; also
//             its CPU time per message (user + system of the process, getrusage), the
//             load-insensitive figure `bench transport` reports beside it
//
// publish1 fills one queue, publishN a second one; consume drains the first.
//
//   babelqueue_artemis_raw_baseline --host 127.0.0.1 --port PORT --user U --password P
//       --messages 20000 [--body-file FILE] [--json]

#include <CLI/CLI.hpp>
#include <proton/annotation_key.hpp>
#include <proton/connection.hpp>
#include <proton/connection_options.hpp>
#include <proton/container.hpp>
#include <proton/delivery.hpp>
#include <proton/error_condition.hpp>
#include <proton/message.hpp>
#include <proton/message_id.hpp>
#include <proton/messaging_handler.hpp>
#include <proton/receiver.hpp>
#include <proton/receiver_options.hpp>
#include <proton/sender.hpp>
#include <proton/sender_options.hpp>
#include <proton/source_options.hpp>
#include <proton/symbol.hpp>
#include <proton/target_options.hpp>
#include <proton/timestamp.hpp>
#include <proton/tracker.hpp>
#include <proton/transport.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string host = "127.0.0.1";
  int port = 5672;
  std::string user;
  std::string password;
  int messages = 20000;
  int batch = 16;
  int prefetch = 100;
  int size = 259;
  std::string body_file;
  bool durable = true;
  bool bare = false;
  bool json = false;
};

// The process's CPU time so far (user + system, every thread), in ns.
double cpu_ns() {
  rusage r{};
  (void)getrusage(RUSAGE_SELF, &r);
  const auto ns = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_usec) * 1e3;
  };
  return ns(r.ru_utime) + ns(r.ru_stime);
}

class Bench : public proton::messaging_handler {
 public:
  Bench(Args a, std::string body)
      : args_(std::move(a)),
        body_(std::move(body)),
        one_("raw-baseline-" + std::to_string(::getpid())),
        many_(one_ + "-batch") {}

  void on_container_start(proton::container& c) override {
    proton::connection_options co;
    co.sasl_enabled(true).user(args_.user).password(args_.password);
    co.sasl_allowed_mechs("PLAIN").sasl_allow_insecure_mechs(true);
    conn_ = c.connect(args_.host + ":" + std::to_string(args_.port), co);
    const std::vector<proton::symbol> caps = {proton::symbol("queue")};
    one_sender_ = conn_.open_sender(
        one_, proton::sender_options().target(proton::target_options().capabilities(caps)));
    many_sender_ = conn_.open_sender(
        many_, proton::sender_options().target(proton::target_options().capabilities(caps)));
  }

  void on_sendable(proton::sender&) override { step(); }

  void on_tracker_accept(proton::tracker&) override {
    ++accepted_;
    step();
  }
  void on_tracker_reject(proton::tracker&) override { fail("a send was rejected"); }
  void on_tracker_release(proton::tracker&) override { fail("a send was released"); }

  void on_message(proton::delivery& d, proton::message&) override {
    d.accept();
    ++received_;
    if (received_ == args_.messages) {
      figures_.emplace_back("consume_cpu_ns_per_msg", (cpu_ns() - start_cpu_) / received_);
      report("consume", "consume, 1 worker", received_);
      conn_.close();
      return;
    }
    receiver_.add_credit(1);
  }

  void on_transport_error(proton::transport& t) override { fail(t.error().what()); }

 private:
  enum class Phase { One, Many, Consume, Done };

  void send(proton::sender& s) {
    proton::message m(body_);
    m.durable(args_.durable);
    if (!args_.bare) {
      // The fields of the ART-4 projection `bench transport` sends (the same bytes on the wire).
      m.message_annotations().put(proton::symbol("x-opt-jms-type"),
                                  proton::value(std::string("urn:babel:orders:created")));
      m.correlation_id(std::string("8a6c7e0e-6a0b-4d4e-9d1e-3f5a2c1b0d9e"));
      m.creation_time(proton::timestamp(1765000000000));
      m.properties().put("bq_schema_version", "1");
      m.properties().put("bq_source_lang", "cpp");
      m.properties().put("bq_attempts", "0");
      m.properties().put("bq_app_id", "babelqueue");
    }
    s.send(m);
    ++sent_;
  }

  // Advances the phase whose outcome or credit just came.
  void step() {
    if (phase_ == Phase::One) {
      if (sent_ == 0) start_ = Clock::now();
      if (accepted_ == args_.messages) {
        report("publish1", "publish, one at a time", accepted_);
        phase_ = Phase::Many;
        sent_ = accepted_ = 0;
      } else if (sent_ == accepted_ && one_sender_.credit() > 0) {
        send(one_sender_);
        return;
      } else {
        return;
      }
    }
    if (phase_ == Phase::Many) {
      if (sent_ == 0) start_ = Clock::now();
      if (accepted_ == args_.messages) {
        report("publishN", "publish, batches of " + std::to_string(args_.batch), accepted_);
        phase_ = Phase::Consume;
        start_ = Clock::now();
        start_cpu_ = cpu_ns();
        receiver_ = conn_.open_receiver(
            one_, proton::receiver_options().credit_window(0).auto_accept(false).source(
                      proton::source_options().capabilities({proton::symbol("queue")})));
        receiver_.add_credit(static_cast<std::uint32_t>(args_.prefetch));
        return;
      }
      // The next batch once the previous one is in.
      if (sent_ == accepted_) {
        const int n = std::min(args_.batch, args_.messages - sent_);
        for (int i = 0; i < n && many_sender_.credit() > 0; ++i)
          send(many_sender_);
      }
    }
  }

  void report(const std::string& key, const std::string& what, int n) {
    const double s = std::chrono::duration<double>(Clock::now() - start_).count();
    figures_.emplace_back(key + "_msgs_per_s", n / s);
    if (args_.json) return;
    std::printf("  %-30s %10.0f msg/s\n", what.c_str(), n / s);
    std::fflush(stdout);
  }

  void fail(const std::string& why) {
    std::fprintf(stderr, "raw baseline: %s\n", why.c_str());
    failed_ = true;
    if (conn_) conn_.close();
  }

 public:
  bool failed_ = false;
  // (key, value) in the order measured: the JSON fields.
  std::vector<std::pair<std::string, double>> figures_;

 private:
  Args args_;
  std::string body_;
  std::string one_;
  std::string many_;
  proton::connection conn_;
  proton::sender one_sender_;
  proton::sender many_sender_;
  proton::receiver receiver_;
  Phase phase_ = Phase::One;
  int sent_ = 0;
  int accepted_ = 0;
  int received_ = 0;
  Clock::time_point start_;
  double start_cpu_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app("Raw Qpid Proton C++ baseline of bench transport on Artemis");
  app.add_option("--host", a.host);
  app.add_option("--port", a.port);
  app.add_option("--user", a.user);
  app.add_option("--password", a.password);
  app.add_option("--messages", a.messages)->check(CLI::Range(1, 100'000'000));
  app.add_option("--batch", a.batch)->check(CLI::Range(1, 10'000));
  app.add_option("--prefetch", a.prefetch)->check(CLI::Range(1, 100'000));
  app.add_option("--size", a.size)->check(CLI::Range(1, 1'000'000));
  app.add_option("--body-file", a.body_file, "The body's bytes (instead of --size)")
      ->check(CLI::ExistingFile);
  app.add_flag("--json", a.json, "Print one JSON object");
  app.add_flag("--non-durable{false}", a.durable, "Send with header.durable false");
  app.add_flag("--bare", a.bare,
               "Send the body alone (without the ART-4 annotation, correlation-id, creation-time "
               "and four application properties)");
  CLI11_PARSE(app, argc, argv);
  std::string body(static_cast<std::size_t>(a.size), 'x');
  if (!a.body_file.empty()) {
    std::ifstream in(a.body_file, std::ios::binary);
    body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  Bench bench(a, std::move(body));
  proton::container(bench).run();
  if (bench.failed_) return 1;
  if (a.json) {
    std::printf("{\"client\":\"qpid-proton-cpp\",\"messages\":%d,\"batch\":%d,\"prefetch\":%d",
                a.messages, a.batch, a.prefetch);
    for (const auto& [key, value] : bench.figures_)
      std::printf(",\"%s\":%.0f", key.c_str(), value);
    std::printf("}\n");
  }
  return 0;
}
