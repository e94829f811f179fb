// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "client.hpp"

#include <babelqueue/spi/backoff.hpp>

#include <boost/asio.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "batch.hpp"
#include "client_detail.hpp"
#include "compression.hpp"
#include "frame.hpp"

namespace babelqueue::pulsar {

namespace asio = boost::asio;
namespace pb = proto;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

// The protocol version we announce (21: the newest the codec's .proto knows).
constexpr int kProtocolVersion = 21;
// The first protocol version whose brokers answer an ACK carrying a request id (ACK_RESPONSE).
constexpr int kAckReceiptVersion = 17;
// Redirects a LOOKUP may follow before it fails.
constexpr int kMaxRedirects = 8;

pb::BaseCommand command_of(pb::BaseCommand::Type type) {
  pb::BaseCommand command;
  command.set_type(type);
  return command;
}

std::string id_text(const MessageId& id) {
  std::string text = std::to_string(id.ledger) + ":" + std::to_string(id.entry);
  if (id.batch_index >= 0) text += ":" + std::to_string(id.batch_index);
  return text;
}

pb::MessageIdData id_data(const MessageId& id) {
  pb::MessageIdData data;
  data.set_ledgerid(id.ledger);
  data.set_entryid(id.entry);
  if (id.partition >= 0) data.set_partition(id.partition);
  return data;
}

pb::CommandSubscribe::SubType sub_type(SubscriptionType type) {
  switch (type) {
    case SubscriptionType::Exclusive:
      return pb::CommandSubscribe::Exclusive;
    case SubscriptionType::Failover:
      return pb::CommandSubscribe::Failover;
    case SubscriptionType::KeyShared:
      return pb::CommandSubscribe::Key_Shared;
    case SubscriptionType::Shared:
      break;
  }
  return pb::CommandSubscribe::Shared;
}

// The host and port of pulsar://host:port.
std::pair<std::string, std::uint16_t> parse_service_url(const std::string& url) {
  constexpr std::string_view scheme = "pulsar://";
  if (url.rfind(scheme, 0) != 0) {
    throw ConfigError("pulsar: service URL '" + url + "' is not pulsar://host:port" +
                      (url.rfind("pulsar+ssl://", 0) == 0 ? " (TLS is not supported yet)" : ""));
  }
  std::string rest = url.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    throw ConfigError("pulsar: service URL '" + url + "' has no host:port");
  }
  unsigned port = 0;
  const char* first = rest.data() + colon + 1;
  const char* last = rest.data() + rest.size();
  const auto [end, error] = std::from_chars(first, last, port);
  if (error != std::errc() || end != last || port == 0 || port > 65535) {
    throw ConfigError("pulsar: service URL '" + url + "' has a bad port");
  }
  return {rest.substr(0, colon), static_cast<std::uint16_t>(port)};
}

// What the I/O thread hands a caller: a value or a Failure (never an exception_ptr).
template <class T>
struct Outcome {
  std::optional<T> value = {};
  std::optional<Failure> failure = {};
};

Failure failure_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return Failure{e.code(), e.what(), e.is_transient()};
  } catch (const std::exception& e) {
    return Failure{ErrorCode::Transport, std::string("pulsar: ") + e.what(), true};
  }
}

// The I/O thread's end of an Outcome `R`; the caller waits on future().
template <class R>
class Reply {
 public:
  std::future<R> future() { return promise_.get_future(); }
  template <class T>
  void set_value(T&& value) {
    R outcome;
    outcome.value = std::forward<T>(value);
    promise_.set_value(std::move(outcome));
  }
  void set_exception(const std::exception_ptr& error) {
    R outcome;
    outcome.failure = failure_of(error);
    promise_.set_value(std::move(outcome));
  }

 private:
  std::promise<R> promise_;
};

template <class T>
T await_future(std::future<T>& future, std::chrono::milliseconds timeout, const std::string& what) {
  if (future.wait_for(timeout) != std::future_status::ready) {
    throw TimeoutError("pulsar: " + what + ": no answer within " + std::to_string(timeout.count()) +
                       " ms");
  }
  return future.get();
}

}  // namespace

struct ProducerState {
  std::uint64_t id = 0;
  std::string topic;
  std::string name;
  bool ready = false;
  bool creating = false;
  detail::PendingSends sends;
  spi::Backoff retry;
};

struct ConsumerState {
  std::uint64_t id = 0;
  std::string topic;
  ConsumerOptions options;
  // I/O thread only.
  bool ready = false;
  bool creating = false;
  std::uint32_t handed_out = 0;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::int32_t> batch_left;
  spi::Backoff retry;
  // Shared with the callers' threads.
  std::atomic<std::uint64_t> incarnation{0};
  mutable std::mutex mu;
  std::condition_variable cv;
  std::deque<Received> queue;
  bool closed = false;
};

struct ClientState {
  using Done = std::function<void(std::exception_ptr)>;
  using Answer = std::function<void(const pb::BaseCommand*, std::exception_ptr)>;
  struct Request {
    std::string context;
    Answer answer;
  };

  explicit ClientState(ClientOptions opts) : options(std::move(opts)) {
    std::tie(host, port) = parse_service_url(options.service_url);
    if (options.keepalive.count() <= 0 || options.operation_timeout.count() <= 0 ||
        options.reconnect_initial.count() <= 0) {
      throw ConfigError("pulsar: keepalive, operation_timeout and reconnect_initial must be > 0");
    }
    backoff = spi::Backoff(options.reconnect_initial, options.reconnect_cap);
  }

  ClientOptions options;
  std::string host;
  std::uint16_t port = 0;

  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;
  std::mutex post_mu;  // guards `closing` and the start of the thread against posts
  bool closing = false;
  std::atomic<std::uint64_t> generation{0};
  std::atomic<int> protocol{0};

  // ---- I/O thread only ----
  enum class Phase { Idle, Connecting, Ready, Waiting };
  Phase phase = Phase::Idle;
  bool closed = false;
  bool draining = false;  // close() waits for the queued writes
  bool finished = false;
  std::shared_ptr<tcp::socket> socket;
  tcp::resolver resolver{io};
  asio::steady_timer keepalive_timer{io};
  asio::steady_timer connect_timer{io};
  asio::steady_timer reconnect_timer{io};
  wire::FrameReader reader;
  std::array<char, 64 * 1024> buffer{};
  std::deque<std::string> writes;
  bool writing = false;
  Clock::time_point last_heard;
  std::uint64_t last_id = 0;
  std::map<std::uint64_t, Request> requests;
  std::vector<Done> waiting_ready;
  std::map<std::uint64_t, std::shared_ptr<ProducerState>> producers;
  std::map<std::uint64_t, std::shared_ptr<ConsumerState>> consumers;
  spi::Backoff backoff;

  // Runs `work` on the I/O thread (starting it on first use); false after close().
  bool post(std::function<void()> fn) {
    std::lock_guard<std::mutex> lock(post_mu);
    if (closing) return false;
    if (!thread.joinable()) {
      work.emplace(io.get_executor());
      thread = std::thread([this] { io.run(); });
    }
    asio::post(io, std::move(fn));
    return true;
  }

  // Runs `fn(promise)` on the I/O thread and waits for the promise (operation_timeout).
  template <class T>
  T call(const std::string& what, std::function<void(std::shared_ptr<Reply<Outcome<T>>>)> fn) {
    auto promise = std::make_shared<Reply<Outcome<T>>>();
    std::future<Outcome<T>> future = promise->future();
    if (!post([promise, fn = std::move(fn)] { fn(promise); })) {
      throw ClosedError("pulsar: " + what + ": the client is closed");
    }
    Outcome<T> outcome = await_future(future, options.operation_timeout, what);
    if (outcome.failure) throw_failure(*outcome.failure);
    return std::move(*outcome.value);
  }

  std::string address() const { return host + ":" + std::to_string(port); }

  // ---- connection ----
  void ensure_ready(Done done) {
    if (closed) {
      done(std::make_exception_ptr(ClosedError("pulsar: the client is closed")));
      return;
    }
    if (phase == Phase::Ready) {
      done(nullptr);
      return;
    }
    waiting_ready.push_back(std::move(done));
    if (phase == Phase::Idle) connect();
  }

  void connect() {
    phase = Phase::Connecting;
    auto sock = std::make_shared<tcp::socket>(io);
    socket = sock;
    reader = wire::FrameReader();
    writes.clear();
    writing = false;
    connect_timer.expires_after(options.operation_timeout);
    connect_timer.async_wait([this, sock](boost::system::error_code error) {
      if (!error)
        lost(sock,
             "no CONNECTED within " + std::to_string(options.operation_timeout.count()) + " ms");
    });
    resolver.async_resolve(
        host, std::to_string(port),
        [this, sock](boost::system::error_code error, const tcp::resolver::results_type& results) {
          if (sock != socket) return;
          if (error) {
            lost(sock, "resolve " + host + ": " + error.message());
            return;
          }
          asio::async_connect(*sock, results,
                              [this, sock](boost::system::error_code err, const tcp::endpoint&) {
                                if (sock != socket) return;
                                if (err) {
                                  lost(sock, "connect: " + err.message());
                                  return;
                                }
                                boost::system::error_code ignored;
                                sock->set_option(tcp::no_delay(true), ignored);
                                read(sock);
                                pb::BaseCommand command = command_of(pb::BaseCommand::CONNECT);
                                command.mutable_connect()->set_client_version("babelqueue-cpp");
                                command.mutable_connect()->set_protocol_version(kProtocolVersion);
                                if (!options.token.empty()) {
                                  command.mutable_connect()->set_auth_method_name("token");
                                  command.mutable_connect()->set_auth_data(options.token);
                                }
                                write(wire::encode_command(command));
                              });
        });
  }

  void read(const std::shared_ptr<tcp::socket>& sock) {
    sock->async_read_some(
        asio::buffer(buffer), [this, sock](boost::system::error_code error, std::size_t n) {
          if (sock != socket) return;
          if (error) {
            lost(sock,
                 error == asio::error::eof ? "the broker closed the connection" : error.message());
            return;
          }
          last_heard = Clock::now();
          try {
            reader.feed(std::string_view(buffer.data(), n));
            while (sock == socket) {
              std::optional<wire::Frame> frame = reader.next();
              if (!frame) break;
              dispatch(*frame);
            }
          } catch (const Error& e) {
            lost(sock, e.what());
            return;
          }
          if (sock == socket) read(sock);
        });
  }

  void write(std::string frame) {
    if (!socket) return;
    writes.push_back(std::move(frame));
    if (!writing) write_next(socket);
  }

  void write_next(const std::shared_ptr<tcp::socket>& sock) {
    writing = true;
    asio::async_write(*sock, asio::buffer(writes.front()),
                      [this, sock](boost::system::error_code error, std::size_t) {
                        if (sock != socket) return;
                        if (error) {
                          lost(sock, "write: " + error.message());
                          return;
                        }
                        writes.pop_front();
                        writing = false;
                        if (!writes.empty()) {
                          write_next(sock);
                        } else if (draining) {
                          finish();
                        }
                      });
  }

  void keepalive(const std::shared_ptr<tcp::socket>& sock) {
    keepalive_timer.expires_after(options.keepalive);
    keepalive_timer.async_wait([this, sock](boost::system::error_code error) {
      if (error || sock != socket) return;
      if (Clock::now() - last_heard > 2 * options.keepalive) {
        lost(sock, "no frame from the broker for two keep-alive intervals");
        return;
      }
      pb::BaseCommand ping = command_of(pb::BaseCommand::PING);
      ping.mutable_ping();
      write(wire::encode_command(ping));
      keepalive(sock);
    });
  }

  // The connection `sock` is dead: fail what was in flight on it with `cause` (by default a
  // transient TransportError naming `reason`), reconnect when something (a producer, a consumer)
  // needs the connection.
  void lost(const std::shared_ptr<tcp::socket>& sock, const std::string& reason) {
    if (sock != socket) return;
    boost::system::error_code ignored;
    sock->close(ignored);
    socket.reset();
    keepalive_timer.cancel();
    connect_timer.cancel();
    writes.clear();
    writing = false;
    const auto error = closed ? std::make_exception_ptr(ClosedError("pulsar: the client is closed"))
                              : std::make_exception_ptr(TransportError(
                                    "pulsar: connection to " + address() + " lost: " + reason));
    fail_all(error);
    if (closed) {
      if (draining) finish();
      return;
    }
    if (producers.empty() && consumers.empty()) {
      phase = Phase::Idle;
      return;
    }
    phase = Phase::Waiting;
    reconnect_timer.expires_after(backoff.next());
    reconnect_timer.async_wait([this](boost::system::error_code timer_error) {
      if (!timer_error && !closed && phase == Phase::Waiting) connect();
    });
  }

  void fail_all(const std::exception_ptr& error) {
    std::map<std::uint64_t, Request> failing;
    failing.swap(requests);
    for (auto& [id, request] : failing)
      request.answer(nullptr, error);
    std::vector<Done> waiting;
    waiting.swap(waiting_ready);
    for (auto& done : waiting)
      done(error);
    for (auto& [id, producer] : producers) {
      producer->ready = false;
      producer->sends.fail_all(error);
    }
    for (auto& [id, consumer] : consumers) {
      consumer->ready = false;
      std::lock_guard<std::mutex> lock(consumer->mu);
      consumer->queue.clear();  // never acked on another connection: the broker redelivers them
    }
  }

  // ---- requests ----
  void request(std::uint64_t id, const pb::BaseCommand& command, std::string context,
               Answer answer) {
    requests.emplace(id, Request{std::move(context), std::move(answer)});
    write(wire::encode_command(command));
  }

  void answer(std::uint64_t id, const pb::BaseCommand* command, std::exception_ptr error) {
    const auto found = requests.find(id);
    if (found == requests.end()) return;
    Request request = std::move(found->second);
    requests.erase(found);
    request.answer(command, std::move(error));
  }

  void answer_error(std::uint64_t id, pb::ServerError code, const std::string& message) {
    const auto found = requests.find(id);
    if (found == requests.end()) return;
    answer(id, nullptr, detail::broker_error(code, found->second.context, message));
  }

  bool same_broker(const std::string& url) const {
    try {
      const auto [h, p] = parse_service_url(url);
      return h == host && p == port;
    } catch (const ConfigError&) {
      return false;
    }
  }

  void lookup(const std::string& topic, bool authoritative, int redirects,
              std::function<void(std::exception_ptr, LookupResult)> done) {
    ensure_ready([this, topic, authoritative, redirects, done](std::exception_ptr error) {
      if (error) {
        done(error, {});
        return;
      }
      const std::uint64_t id = ++last_id;
      pb::BaseCommand command = command_of(pb::BaseCommand::LOOKUP);
      command.mutable_lookuptopic()->set_topic(topic);
      command.mutable_lookuptopic()->set_request_id(id);
      command.mutable_lookuptopic()->set_authoritative(authoritative);
      request(id, command, "LOOKUP " + topic,
              [this, topic, redirects, done](const pb::BaseCommand* answer, std::exception_ptr e) {
                if (e) {
                  done(e, {});
                  return;
                }
                const auto& response = answer->lookuptopicresponse();
                if (response.response() == pb::CommandLookupTopicResponse::Failed) {
                  done(
                      detail::broker_error(response.error(), "LOOKUP " + topic, response.message()),
                      {});
                  return;
                }
                const std::string& url = response.brokerserviceurl();
                if (!response.proxy_through_service_url() && !same_broker(url)) {
                  done(std::make_exception_ptr(TransportError(
                           "pulsar: LOOKUP " + topic + ": served by " + url + ", not by " +
                               address() + " (one broker connection per client: not supported yet)",
                           false)),
                       {});
                  return;
                }
                if (response.response() == pb::CommandLookupTopicResponse::Redirect) {
                  if (redirects >= kMaxRedirects) {
                    done(std::make_exception_ptr(
                             TransportError("pulsar: LOOKUP " + topic + ": more than " +
                                            std::to_string(kMaxRedirects) + " redirects")),
                         {});
                    return;
                  }
                  lookup(topic, response.authoritative(), redirects + 1, done);
                  return;
                }
                done(nullptr, LookupResult{url, redirects});
              });
    });
  }

  void create_producer(const std::shared_ptr<ProducerState>& producer, Done done) {
    producer->creating = true;
    lookup(producer->topic, false, 0,
           [this, producer, done](std::exception_ptr error, LookupResult) {
             if (error) {
               producer->creating = false;
               done(error);
               return;
             }
             const std::uint64_t id = ++last_id;
             pb::BaseCommand command = command_of(pb::BaseCommand::PRODUCER);
             command.mutable_producer()->set_topic(producer->topic);
             command.mutable_producer()->set_producer_id(producer->id);
             command.mutable_producer()->set_request_id(id);
             if (!producer->name.empty())
               command.mutable_producer()->set_producer_name(producer->name);
             request(id, command, "PRODUCER " + producer->topic,
                     [producer, done](const pb::BaseCommand* answer, std::exception_ptr e) {
                       producer->creating = false;
                       if (!e) {
                         producer->ready = true;
                         producer->name = answer->producer_success().producer_name();
                         producer->retry.reset();
                       }
                       done(e);
                     });
           });
  }

  void subscribe(const std::shared_ptr<ConsumerState>& consumer, Done done) {
    consumer->creating = true;
    lookup(consumer->topic, false, 0,
           [this, consumer, done](std::exception_ptr error, LookupResult) {
             if (error) {
               consumer->creating = false;
               done(error);
               return;
             }
             const std::uint64_t id = ++last_id;
             pb::BaseCommand command = command_of(pb::BaseCommand::SUBSCRIBE);
             pb::CommandSubscribe* subscribe = command.mutable_subscribe();
             subscribe->set_topic(consumer->topic);
             subscribe->set_subscription(consumer->options.subscription);
             subscribe->set_subtype(sub_type(consumer->options.type));
             subscribe->set_consumer_id(consumer->id);
             subscribe->set_request_id(id);
             subscribe->set_initialposition(consumer->options.position == InitialPosition::Earliest
                                                ? pb::CommandSubscribe::Earliest
                                                : pb::CommandSubscribe::Latest);
             request(id, command,
                     "SUBSCRIBE " + consumer->topic + " (" + consumer->options.subscription + ")",
                     [this, consumer, done](const pb::BaseCommand*, std::exception_ptr e) {
                       consumer->creating = false;
                       if (!e) {
                         {
                           std::lock_guard<std::mutex> lock(consumer->mu);
                           consumer->queue.clear();
                           consumer->incarnation.fetch_add(1);
                         }
                         consumer->ready = true;
                         consumer->handed_out = 0;
                         consumer->batch_left.clear();
                         consumer->retry.reset();
                         flow(*consumer, consumer->options.prefetch);
                       }
                       done(e);
                     });
           });
  }

  void flow(const ConsumerState& consumer, std::uint32_t permits) {
    pb::BaseCommand command = command_of(pb::BaseCommand::FLOW);
    command.mutable_flow()->set_consumer_id(consumer.id);
    command.mutable_flow()->set_messagepermits(permits);
    write(wire::encode_command(command));
  }

  // Re-creates a producer or consumer the broker closed or a reconnect lost, retrying with its
  // backoff while the connection stands.
  template <class State>
  void recreate(const std::shared_ptr<State>& state) {
    if (closed || phase != Phase::Ready || state->ready || state->creating) return;
    auto retry = [this, state](std::exception_ptr error) {
      if (!error || closed || phase != Phase::Ready) return;
      auto timer = std::make_shared<asio::steady_timer>(io, state->retry.next());
      timer->async_wait([this, state, timer](boost::system::error_code e) {
        if (!e) recreate(state);
      });
    };
    if constexpr (std::is_same_v<State, ProducerState>) {
      create_producer(state, retry);
    } else {
      subscribe(state, retry);
    }
  }

  void connected(const pb::CommandConnected& connected) {
    if (phase != Phase::Connecting) return;
    connect_timer.cancel();
    phase = Phase::Ready;
    generation.fetch_add(1);
    protocol = std::min(kProtocolVersion, connected.protocol_version());
    if (connected.has_max_message_size() && connected.max_message_size() > 0) {
      reader.set_max_frame_size(static_cast<std::size_t>(connected.max_message_size()) +
                                wire::kFramePadding);
    }
    backoff.reset();
    keepalive(socket);
    std::vector<Done> waiting;
    waiting.swap(waiting_ready);
    for (auto& done : waiting)
      done(nullptr);
    for (auto& [id, producer] : producers)
      recreate(producer);
    for (auto& [id, consumer] : consumers)
      recreate(consumer);
  }

  // The broker answered CONNECT with ERROR (refused credentials, an unsupported version): the
  // callers waiting for the connection get the broker's error (AuthenticationError is a
  // ConfigError), then the connection is dropped as lost.
  void refused(const pb::CommandError& error) {
    const auto failure =
        detail::broker_error(error.error(), "CONNECT to " + address(), error.message());
    std::vector<Done> waiting;
    waiting.swap(waiting_ready);
    for (auto& done : waiting)
      done(failure);
    lost(socket, "CONNECT refused: " + error.message());
  }

  // ---- frames ----
  void dispatch(const wire::Frame& frame) {
    const pb::BaseCommand& command = frame.command;
    switch (command.type()) {
      case pb::BaseCommand::CONNECTED:
        connected(command.connected());
        break;
      case pb::BaseCommand::PING: {
        pb::BaseCommand pong = command_of(pb::BaseCommand::PONG);
        pong.mutable_pong();
        write(wire::encode_command(pong));
        break;
      }
      case pb::BaseCommand::LOOKUP_RESPONSE:
        answer(command.lookuptopicresponse().request_id(), &command, nullptr);
        break;
      case pb::BaseCommand::PARTITIONED_METADATA_RESPONSE:
        answer(command.partitionmetadataresponse().request_id(), &command, nullptr);
        break;
      case pb::BaseCommand::PRODUCER_SUCCESS:
        // producer_ready false: queued for exclusive access; the ready one follows.
        if (!command.producer_success().has_producer_ready() ||
            command.producer_success().producer_ready()) {
          answer(command.producer_success().request_id(), &command, nullptr);
        }
        break;
      case pb::BaseCommand::SUCCESS:
        answer(command.success().request_id(), &command, nullptr);
        break;
      case pb::BaseCommand::AUTH_CHALLENGE: {
        pb::BaseCommand response = command_of(pb::BaseCommand::AUTH_RESPONSE);
        response.mutable_authresponse()->set_client_version("babelqueue-cpp");
        response.mutable_authresponse()->set_protocol_version(kProtocolVersion);
        response.mutable_authresponse()->mutable_response()->set_auth_method_name("token");
        response.mutable_authresponse()->mutable_response()->set_auth_data(options.token);
        write(wire::encode_command(response));
        break;
      }
      case pb::BaseCommand::ERROR:
        if (phase == Phase::Connecting) {
          refused(command.error());
          break;
        }
        answer_error(command.error().request_id(), command.error().error(),
                     command.error().message());
        break;
      case pb::BaseCommand::ACK_RESPONSE:
        if (command.ackresponse().has_error()) {
          answer_error(command.ackresponse().request_id(), command.ackresponse().error(),
                       command.ackresponse().message());
        } else {
          answer(command.ackresponse().request_id(), &command, nullptr);
        }
        break;
      case pb::BaseCommand::SEND_RECEIPT:
        if (const auto p = producers.find(command.send_receipt().producer_id());
            p != producers.end()) {
          static_cast<void>(p->second->sends.receipt(command.send_receipt().sequence_id(),
                                                     command.send_receipt().message_id()));
        }
        break;
      case pb::BaseCommand::SEND_ERROR:
        if (const auto p = producers.find(command.send_error().producer_id());
            p != producers.end()) {
          static_cast<void>(p->second->sends.fail(
              command.send_error().sequence_id(),
              detail::broker_error(command.send_error().error(), "SEND to " + p->second->topic,
                                   command.send_error().message())));
        }
        break;
      case pb::BaseCommand::CLOSE_PRODUCER:
        if (const auto p = producers.find(command.close_producer().producer_id());
            p != producers.end()) {
          p->second->ready = false;
          p->second->sends.fail_all(std::make_exception_ptr(TransportError(
              "pulsar: the broker closed the producer of " + p->second->topic + "; resend")));
          recreate(p->second);
        }
        break;
      case pb::BaseCommand::CLOSE_CONSUMER:
        if (const auto c = consumers.find(command.close_consumer().consumer_id());
            c != consumers.end()) {
          c->second->ready = false;
          {
            std::lock_guard<std::mutex> lock(c->second->mu);
            c->second->queue.clear();
          }
          recreate(c->second);
        }
        break;
      case pb::BaseCommand::MESSAGE:
        message(frame);
        break;
      default:
        break;  // PONG (any frame counts as heard), ACTIVE_CONSUMER_CHANGE, ...: nothing to do
    }
  }

  void message(const wire::Frame& frame) {
    const pb::CommandMessage& command = frame.command.message();
    const auto found = consumers.find(command.consumer_id());
    if (found == consumers.end() || !found->second->ready) return;
    ConsumerState& consumer = *found->second;
    const wire::Message decoded = wire::decode_message(frame.payload_section);
    const pb::MessageMetadata& metadata = decoded.metadata;
    std::string payload = decoded.payload;
    if (metadata.has_compression() && metadata.compression() != pb::NONE) {
      payload = wire::decompress(metadata.compression(), payload, metadata.uncompressed_size(),
                                 reader.max_frame_size());
    }
    Received base;
    base.topic = consumer.topic;
    base.id.ledger = command.message_id().ledgerid();
    base.id.entry = command.message_id().entryid();
    base.id.partition =
        command.message_id().has_partition() ? command.message_id().partition() : -1;
    base.redelivery_count = command.redelivery_count();
    base.connection = generation.load();
    base.incarnation = consumer.incarnation.load();
    std::vector<Received> out;
    if (metadata.has_num_messages_in_batch()) {
      const auto entries = wire::split_batch(payload, metadata.num_messages_in_batch());
      const auto size = static_cast<std::int32_t>(entries.size());
      consumer.batch_left[{base.id.ledger, base.id.entry}] = size;
      for (std::int32_t i = 0; i < size; ++i) {
        const auto& entry = entries[static_cast<std::size_t>(i)];
        Received one = base;
        one.id.batch_index = i;
        one.id.batch_size = size;
        for (const auto& property : entry.metadata.properties()) {
          one.properties[property.key()] = property.value();
        }
        if (entry.metadata.has_partition_key()) one.key = entry.metadata.partition_key();
        one.payload = std::string(entry.payload);
        out.push_back(std::move(one));
      }
    } else {
      for (const auto& property : metadata.properties()) {
        base.properties[property.key()] = property.value();
      }
      if (metadata.has_partition_key()) base.key = metadata.partition_key();
      base.payload = std::move(payload);
      out.push_back(std::move(base));
    }
    {
      std::lock_guard<std::mutex> lock(consumer.mu);
      for (auto& one : out)
        consumer.queue.push_back(std::move(one));
    }
    consumer.cv.notify_all();
  }

  // A message of `consumer` was handed out: FLOW again once half the window is.
  void handed_out(ConsumerState& consumer, std::uint64_t incarnation) {
    if (!consumer.ready || incarnation != consumer.incarnation.load()) return;
    ++consumer.handed_out;
    if (consumer.handed_out >= std::max<std::uint32_t>(1, consumer.options.prefetch / 2)) {
      flow(consumer, consumer.handed_out);
      consumer.handed_out = 0;
    }
  }

  // False for an entry of a batch whose other entries are not all acked yet (the batch is acked
  // with its last entry); true for a message of its own and for a batch's last entry.
  static bool last_of_batch(ConsumerState& consumer, const MessageId& id) {
    if (id.batch_index < 0) return true;
    const auto left = consumer.batch_left.find({id.ledger, id.entry});
    if (left == consumer.batch_left.end()) return true;
    if (--left->second > 0) return false;
    consumer.batch_left.erase(left);
    return true;
  }

  // ---- close ----
  // close(): CLOSE_PRODUCER and CLOSE_CONSUMER after what is queued (acks), then the socket
  // once the writes drained (at most 2 s), then the thread. Blocked receivers wake at once.
  void shut_down() {
    closed = true;
    for (auto& [id, consumer] : consumers) {
      {
        std::lock_guard<std::mutex> lock(consumer->mu);
        consumer->closed = true;
      }
      consumer->cv.notify_all();
    }
    resolver.cancel();
    reconnect_timer.cancel();
    if (!socket || phase != Phase::Ready) {
      finish();
      return;
    }
    for (auto& [id, producer] : producers) {
      if (!producer->ready) continue;
      pb::BaseCommand command = command_of(pb::BaseCommand::CLOSE_PRODUCER);
      command.mutable_close_producer()->set_producer_id(id);
      command.mutable_close_producer()->set_request_id(++last_id);
      write(wire::encode_command(command));
    }
    for (auto& [id, consumer] : consumers) {
      if (!consumer->ready) continue;
      pb::BaseCommand command = command_of(pb::BaseCommand::CLOSE_CONSUMER);
      command.mutable_close_consumer()->set_consumer_id(id);
      command.mutable_close_consumer()->set_request_id(++last_id);
      write(wire::encode_command(command));
    }
    if (!writing) {
      finish();
      return;
    }
    draining = true;
    connect_timer.cancel();
    connect_timer.expires_after(
        std::min<std::chrono::milliseconds>(options.operation_timeout, std::chrono::seconds(2)));
    connect_timer.async_wait([this](boost::system::error_code error) {
      if (!error) finish();
    });
  }

  void finish() {
    if (finished) return;
    finished = true;
    draining = false;
    if (socket) {
      lost(socket, "closed");
    } else {
      fail_all(std::make_exception_ptr(ClosedError("pulsar: the client is closed")));
    }
    work.reset();
    io.stop();
  }
};

// ---- Failures ----

void throw_failure(const Failure& failure) {
  throw_error(Error(failure.code, failure.what, failure.transient));
}

MessageId SendResult::get() const {
  if (failure) throw_failure(*failure);
  return *value;
}

// ---- Client ----

Client::Client(ClientOptions options) : state_(std::make_shared<ClientState>(std::move(options))) {}

Client::~Client() {
  close();
}

void Client::close() {
  ClientState& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.post_mu);
    if (s.closing) return;
    s.closing = true;
    if (s.thread.joinable()) asio::post(s.io, [&s] { s.shut_down(); });
  }
  if (s.thread.joinable() && s.thread.get_id() != std::this_thread::get_id()) s.thread.join();
  // Consumers created never woke anyone if the thread never ran; wake them now.
  for (auto& [id, consumer] : s.consumers) {
    {
      std::lock_guard<std::mutex> lock(consumer->mu);
      consumer->closed = true;
    }
    consumer->cv.notify_all();
  }
}

std::uint64_t Client::connection() const {
  return state_->generation.load();
}
int Client::protocol_version() const {
  return state_->protocol.load();
}

LookupResult Client::lookup(const std::string& topic) {
  ClientState& s = *state_;
  return s.call<LookupResult>(
      "LOOKUP " + topic, [&s, topic](std::shared_ptr<Reply<Outcome<LookupResult>>> promise) {
        s.lookup(topic, false, 0, [promise](std::exception_ptr error, LookupResult result) {
          if (error) {
            promise->set_exception(error);
          } else {
            promise->set_value(std::move(result));
          }
        });
      });
}

std::uint32_t Client::partitions(const std::string& topic) {
  ClientState& s = *state_;
  return s.call<std::uint32_t>(
      "PARTITIONED_METADATA " + topic,
      [&s, topic](std::shared_ptr<Reply<Outcome<std::uint32_t>>> promise) {
        s.ensure_ready([&s, topic, promise](std::exception_ptr error) {
          if (error) {
            promise->set_exception(error);
            return;
          }
          const std::uint64_t id = ++s.last_id;
          pb::BaseCommand command = command_of(pb::BaseCommand::PARTITIONED_METADATA);
          command.mutable_partitionmetadata()->set_topic(topic);
          command.mutable_partitionmetadata()->set_request_id(id);
          s.request(
              id, command, "PARTITIONED_METADATA " + topic,
              [topic, promise](const pb::BaseCommand* answer, std::exception_ptr e) {
                if (e) {
                  promise->set_exception(e);
                  return;
                }
                const auto& response = answer->partitionmetadataresponse();
                if (response.response() == pb::CommandPartitionedTopicMetadataResponse::Failed) {
                  promise->set_exception(detail::broker_error(
                      response.error(), "PARTITIONED_METADATA " + topic, response.message()));
                  return;
                }
                promise->set_value(response.partitions());
              });
        });
      });
}

std::shared_ptr<Producer> Client::create_producer(const std::string& topic) {
  ClientState& s = *state_;
  const std::uint64_t id = s.call<std::uint64_t>(
      "PRODUCER " + topic, [&s, topic](std::shared_ptr<Reply<Outcome<std::uint64_t>>> promise) {
        auto producer = std::make_shared<ProducerState>();
        producer->id = ++s.last_id;
        producer->topic = topic;
        producer->retry = spi::Backoff(s.options.reconnect_initial, s.options.reconnect_cap);
        s.producers.emplace(producer->id, producer);
        s.create_producer(producer, [&s, producer, promise](std::exception_ptr error) {
          if (error) {
            s.producers.erase(producer->id);
            promise->set_exception(error);
          } else {
            promise->set_value(producer->id);
          }
        });
      });
  return std::shared_ptr<Producer>(new Producer(state_, id, topic));
}

std::shared_ptr<Consumer> Client::subscribe(const std::string& topic,
                                            const ConsumerOptions& options) {
  if (options.prefetch == 0) throw ConfigError("pulsar: SUBSCRIBE " + topic + ": prefetch 0");
  ClientState& s = *state_;
  auto state = s.call<std::shared_ptr<ConsumerState>>(
      "SUBSCRIBE " + topic,
      [&s, topic,
       options](std::shared_ptr<Reply<Outcome<std::shared_ptr<ConsumerState>>>> promise) {
        auto consumer = std::make_shared<ConsumerState>();
        consumer->id = ++s.last_id;
        consumer->topic = topic;
        consumer->options = options;
        consumer->retry = spi::Backoff(s.options.reconnect_initial, s.options.reconnect_cap);
        s.consumers.emplace(consumer->id, consumer);
        s.subscribe(consumer, [&s, consumer, promise](std::exception_ptr error) {
          if (error) {
            s.consumers.erase(consumer->id);
            promise->set_exception(error);
          } else {
            promise->set_value(consumer);
          }
        });
      });
  const std::uint64_t id = state->id;
  return std::shared_ptr<Consumer>(new Consumer(state_, std::move(state), id, topic));
}

void Client::create_subscription(const std::string& topic, const std::string& subscription,
                                 SubscriptionType type) {
  ClientState& s = *state_;
  const std::string what = "SUBSCRIBE " + topic + " (" + subscription + ", to create it)";
  static_cast<void>(s.call<bool>(what, [&s, topic, subscription, type,
                                        what](std::shared_ptr<Reply<Outcome<bool>>> promise) {
    s.lookup(
        topic, false, 0,
        [&s, topic, subscription, type, what, promise](std::exception_ptr error, LookupResult) {
          if (error) {
            promise->set_exception(error);
            return;
          }
          const std::uint64_t consumer_id = ++s.last_id;
          const std::uint64_t id = ++s.last_id;
          pb::BaseCommand command = command_of(pb::BaseCommand::SUBSCRIBE);
          pb::CommandSubscribe* subscribe = command.mutable_subscribe();
          subscribe->set_topic(topic);
          subscribe->set_subscription(subscription);
          subscribe->set_subtype(sub_type(type));
          subscribe->set_consumer_id(consumer_id);
          subscribe->set_request_id(id);
          subscribe->set_initialposition(pb::CommandSubscribe::Earliest);
          s.request(id, command, what,
                    [&s, consumer_id, what, promise](const pb::BaseCommand*, std::exception_ptr e) {
                      if (e) {
                        const Failure failure = failure_of(e);
                        if (failure.what.find("ConsumerBusy") != std::string::npos) {
                          promise->set_value(true);  // held by an Exclusive consumer: it exists
                        } else {
                          promise->set_exception(e);
                        }
                        return;
                      }
                      const std::uint64_t close_id = ++s.last_id;
                      pb::BaseCommand close = command_of(pb::BaseCommand::CLOSE_CONSUMER);
                      close.mutable_close_consumer()->set_consumer_id(consumer_id);
                      close.mutable_close_consumer()->set_request_id(close_id);
                      s.request(close_id, close, what + ": CLOSE_CONSUMER",
                                [promise](const pb::BaseCommand*, std::exception_ptr closed) {
                                  if (closed) {
                                    promise->set_exception(closed);
                                  } else {
                                    promise->set_value(true);
                                  }
                                });
                    });
        });
  }));
}

// ---- Producer ----

std::future<SendResult> Producer::send_async(OutgoingMessage message) {
  auto promise = std::make_shared<Reply<SendResult>>();
  std::future<SendResult> future = promise->future();
  ClientState& s = *client_;
  const bool posted = s.post([&s, id = id_, promise, message = std::move(message)] {
    const auto found = s.producers.find(id);
    if (s.closed || found == s.producers.end()) {
      promise->set_exception(std::make_exception_ptr(ClosedError("pulsar: the client is closed")));
      return;
    }
    ProducerState& producer = *found->second;
    if (!producer.ready) {
      promise->set_exception(std::make_exception_ptr(TransportError(
          "pulsar: SEND to " + producer.topic + ": the producer is reconnecting; resend")));
      return;
    }
    const std::uint64_t sequence =
        producer.sends.add([promise](const pb::MessageIdData* receipt, std::exception_ptr error) {
          if (error) {
            promise->set_exception(error);
            return;
          }
          MessageId out;
          out.ledger = receipt->ledgerid();
          out.entry = receipt->entryid();
          out.partition = receipt->has_partition() ? receipt->partition() : -1;
          promise->set_value(out);
        });
    pb::BaseCommand command = command_of(pb::BaseCommand::SEND);
    command.mutable_send()->set_producer_id(id);
    command.mutable_send()->set_sequence_id(sequence);
    pb::MessageMetadata metadata;
    metadata.set_producer_name(producer.name);
    metadata.set_sequence_id(sequence);
    metadata.set_publish_time(
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count()));
    for (const auto& [key, value] : message.properties) {
      pb::KeyValue* property = metadata.add_properties();
      property->set_key(key);
      property->set_value(value);
    }
    if (message.key) metadata.set_partition_key(*message.key);
    s.write(wire::encode_message(command, metadata, message.payload));
  });
  if (!posted) {
    promise->set_exception(std::make_exception_ptr(ClosedError("pulsar: the client is closed")));
  }
  return future;
}

MessageId Producer::send(OutgoingMessage message) {
  std::future<SendResult> future = send_async(std::move(message));
  return await_future(future, client_->options.operation_timeout, "SEND to " + topic_).get();
}

// ---- Consumer ----

std::optional<Received> Consumer::receive(std::chrono::milliseconds timeout) {
  ConsumerState& consumer = *state_;
  std::unique_lock<std::mutex> lock(consumer.mu);
  consumer.cv.wait_for(lock, timeout,
                       [&consumer] { return consumer.closed || !consumer.queue.empty(); });
  if (consumer.closed)
    throw ClosedError("pulsar: receive from " + topic_ + ": the client is closed");
  if (consumer.queue.empty()) return std::nullopt;
  Received out = std::move(consumer.queue.front());
  consumer.queue.pop_front();
  lock.unlock();
  ClientState& s = *client_;
  static_cast<void>(s.post(
      [&s, state = state_, incarnation = out.incarnation] { s.handed_out(*state, incarnation); }));
  return out;
}

void Consumer::ack(const Received& message) {
  settle(message, true);
}
void Consumer::negative_ack(const Received& message) {
  settle(message, false);
}

std::size_t Consumer::buffered() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->queue.size();
}

std::size_t Consumer::ack(const std::vector<Received>& messages, bool confirmed) {
  if (messages.empty()) return 0;
  ClientState& s = *client_;
  const std::string what = "ACK of " + std::to_string(messages.size()) + " on " + topic_;
  struct Entry {
    MessageId id;
    std::uint64_t connection;
    std::uint64_t incarnation;
  };
  std::vector<Entry> entries;
  entries.reserve(messages.size());
  for (const Received& message : messages)
    entries.push_back(Entry{message.id, message.connection, message.incarnation});
  return s.call<std::size_t>(what, [&s, id = id_, entries = std::move(entries), what, confirmed](
                                       std::shared_ptr<Reply<Outcome<std::size_t>>> promise) {
    const auto found = s.consumers.find(id);
    if (s.closed || found == s.consumers.end()) {
      promise->set_exception(std::make_exception_ptr(ClosedError("pulsar: " + what + ": closed")));
      return;
    }
    ConsumerState& consumer = *found->second;
    const bool live = consumer.ready && s.phase == ClientState::Phase::Ready;
    std::size_t stale = 0;
    pb::BaseCommand command = command_of(pb::BaseCommand::ACK);
    command.mutable_ack()->set_consumer_id(id);
    command.mutable_ack()->set_ack_type(pb::CommandAck::Individual);
    for (const Entry& message : entries) {
      if (!live || message.connection != s.generation.load() ||
          message.incarnation != consumer.incarnation.load()) {
        ++stale;
        continue;
      }
      if (!s.last_of_batch(consumer, message.id)) continue;
      *command.mutable_ack()->add_message_id() = id_data(message.id);
    }
    if (command.ack().message_id_size() == 0) {
      promise->set_value(stale);
      return;
    }
    if (!confirmed || s.protocol.load() < kAckReceiptVersion) {
      s.write(wire::encode_command(command));
      promise->set_value(stale);
      return;
    }
    // With a request id the broker answers ACK_RESPONSE once it applied the acks: a flush
    // returns when the broker has them.
    const std::uint64_t request = ++s.last_id;
    command.mutable_ack()->set_request_id(request);
    s.request(request, command, what,
              [promise, stale](const pb::BaseCommand*, std::exception_ptr e) {
                if (e) {
                  promise->set_exception(e);
                } else {
                  promise->set_value(stale);
                }
              });
  });
}

void Consumer::settle(const Received& message, bool positive) {
  ClientState& s = *client_;
  const std::string what = std::string(positive ? "ACK" : "negative ACK") + " of " +
                           id_text(message.id) + " on " + topic_;
  s.call<bool>(what, [&s, id = id_, message, positive,
                      what](std::shared_ptr<Reply<Outcome<bool>>> promise) {
    const auto found = s.consumers.find(id);
    if (s.closed || found == s.consumers.end()) {
      promise->set_exception(std::make_exception_ptr(ClosedError("pulsar: " + what + ": closed")));
      return;
    }
    ConsumerState& consumer = *found->second;
    if (!consumer.ready || s.phase != ClientState::Phase::Ready ||
        message.connection != s.generation.load() ||
        message.incarnation != consumer.incarnation.load()) {
      promise->set_exception(std::make_exception_ptr(StaleDeliveryError(
          "pulsar: " + what + ": its connection or consumer is gone; the broker redelivers it")));
      return;
    }
    const pb::MessageIdData entry = id_data(message.id);
    if (positive) {
      if (!s.last_of_batch(consumer, message.id)) {
        promise->set_value(true);  // the batch is acked with its last entry
        return;
      }
      pb::BaseCommand command = command_of(pb::BaseCommand::ACK);
      command.mutable_ack()->set_consumer_id(id);
      command.mutable_ack()->set_ack_type(pb::CommandAck::Individual);
      *command.mutable_ack()->add_message_id() = entry;
      s.write(wire::encode_command(command));
    } else {
      consumer.batch_left.erase({message.id.ledger, message.id.entry});
      pb::BaseCommand command = command_of(pb::BaseCommand::REDELIVER_UNACKNOWLEDGED_MESSAGES);
      command.mutable_redeliverunacknowledgedmessages()->set_consumer_id(id);
      *command.mutable_redeliverunacknowledgedmessages()->add_message_ids() = entry;
      s.write(wire::encode_command(command));
    }
    promise->set_value(true);
  });
}

}  // namespace babelqueue::pulsar
