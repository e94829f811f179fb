// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The raw Qpid Proton C++ baseline of `babelqueue bench transport --url artemis://...` (issue
// 12): the same patterns on the plain Proton API, one connection (SASL PLAIN), links with the
// `queue` capability, durable messages whose body is an AMQP string of --size bytes, and no
// BabelQueue code.
//
//   publish1  send one message, wait for its accepted outcome
//   publishN  send --batch messages, wait for all their outcomes
//   consume   a receiver with credit --prefetch (topped up per message), accepting each
//
// publish1 fills one queue, publishN a second one; consume drains the first.
//
//   babelqueue_artemis_raw_baseline --host 127.0.0.1 --port PORT --user U --password P
//       --messages 20000

#include <CLI/CLI.hpp>
#include <proton/connection.hpp>
#include <proton/connection_options.hpp>
#include <proton/container.hpp>
#include <proton/delivery.hpp>
#include <proton/error_condition.hpp>
#include <proton/message.hpp>
#include <proton/messaging_handler.hpp>
#include <proton/receiver.hpp>
#include <proton/receiver_options.hpp>
#include <proton/sender.hpp>
#include <proton/sender_options.hpp>
#include <proton/source_options.hpp>
#include <proton/symbol.hpp>
#include <proton/target_options.hpp>
#include <proton/tracker.hpp>
#include <proton/transport.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
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
};

class Bench : public proton::messaging_handler {
 public:
  explicit Bench(Args a)
      : args_(std::move(a)),
        body_(static_cast<std::size_t>(args_.size), 'x'),
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
      report("consume, 1 worker", received_);
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
    m.durable(true);
    s.send(m);
    ++sent_;
  }

  // Advances the phase whose outcome or credit just came.
  void step() {
    if (phase_ == Phase::One) {
      if (sent_ == 0) start_ = Clock::now();
      if (accepted_ == args_.messages) {
        report("publish, one at a time", accepted_);
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
        report("publish, batches of " + std::to_string(args_.batch), accepted_);
        phase_ = Phase::Consume;
        start_ = Clock::now();
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

  void report(const std::string& what, int n) {
    const double s = std::chrono::duration<double>(Clock::now() - start_).count();
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
  CLI11_PARSE(app, argc, argv);
  Bench bench(a);
  proton::container(bench).run();
  return bench.failed_ ? 1 : 0;
}
