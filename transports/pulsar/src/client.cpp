// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "client.hpp"

#include <babelqueue/spi/backoff.hpp>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

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

// A broker address: pulsar://host:port or pulsar+ssl://host:port.
struct Endpoint {
  std::string host;
  std::uint16_t port = 0;
  bool tls = false;
  [[nodiscard]] std::string key() const {
    return (tls ? "pulsar+ssl://" : "pulsar://") + host + ":" + std::to_string(port);
  }
};

Endpoint parse_service_url(const std::string& url) {
  constexpr std::string_view plain = "pulsar://";
  constexpr std::string_view secure = "pulsar+ssl://";
  Endpoint out;
  std::string rest;
  if (url.rfind(plain, 0) == 0) {
    rest = url.substr(plain.size());
  } else if (url.rfind(secure, 0) == 0) {
    rest = url.substr(secure.size());
    out.tls = true;
  } else {
    throw ConfigError("pulsar: service URL '" + url +
                      "' is not pulsar://host:port or pulsar+ssl://host:port");
  }
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
  out.host = rest.substr(0, colon);
  out.port = static_cast<std::uint16_t>(port);
  return out;
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

struct Connection;

struct ProducerState {
  std::uint64_t id = 0;
  std::string topic;
  std::string name;
  bool ready = false;
  bool creating = false;
  detail::PendingSends sends;
  spi::Backoff retry;
  std::shared_ptr<Connection> connection;  // the broker serving the topic, after its lookup
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
  std::shared_ptr<Connection> connection;  // the broker serving the topic, after its lookup
  // Shared with the callers' threads (written by the I/O thread).
  std::atomic<std::uint64_t> incarnation{0};
  // The number of the connection it is subscribed on while ready; 0 while not.
  std::atomic<std::uint64_t> serving{0};
  mutable std::mutex mu;
  std::condition_variable cv;
  std::deque<Received> queue;
  bool closed = false;

  // A message that came on connection `number` to the consumer's `generation` (incarnation) can
  // still be settled: both are the consumer's current ones, and its connection is up.
  [[nodiscard]] bool current(std::uint64_t number, std::uint64_t generation) const {
    return number != 0 && number == serving.load() && generation == incarnation.load();
  }

  // Wakes receive() and the doorbell's waiter (messages arrived, or closed).
  void wake() {
    cv.notify_all();
    if (options.doorbell) options.doorbell->ring();
  }
};

using Stream = asio::ssl::stream<tcp::socket>;
using Done = std::function<void(std::exception_ptr)>;
using Answer = std::function<void(const pb::BaseCommand*, std::exception_ptr)>;

// One connection to one broker address (the service URL's, or a broker a lookup named), its
// requests, and the producers and consumers of the topics that broker serves. I/O thread only.
struct Connection {
  struct Request {
    std::string context;
    Answer answer;
  };
  enum class Phase { Idle, Connecting, Ready, Waiting };

  Connection(asio::io_context& io, Endpoint where, spi::Backoff reconnect)
      : endpoint(std::move(where)),
        resolver(io),
        keepalive_timer(io),
        connect_timer(io),
        reconnect_timer(io),
        backoff(reconnect) {}

  [[nodiscard]] std::string address() const {
    return endpoint.host + ":" + std::to_string(endpoint.port);
  }

  Endpoint endpoint;
  Phase phase = Phase::Idle;
  bool draining = false;     // close() waits for its queued writes
  std::uint64_t number = 0;  // ClientState::generation at its last CONNECTED
  int protocol = 0;          // the version both sides speak since its last CONNECTED
  std::shared_ptr<Stream> stream;
  std::string tls_failure;  // why the certificate was refused, for the handshake's error
  tcp::resolver resolver;
  asio::steady_timer keepalive_timer;
  asio::steady_timer connect_timer;
  asio::steady_timer reconnect_timer;
  wire::FrameReader reader;
  std::array<char, 64 * 1024> buffer{};
  std::deque<std::string> writes;
  bool writing = false;
  Clock::time_point last_heard;
  std::map<std::uint64_t, Request> requests;
  std::vector<Done> waiting_ready;
  std::map<std::uint64_t, std::shared_ptr<ProducerState>> producers;
  std::map<std::uint64_t, std::shared_ptr<ConsumerState>> consumers;
  spi::Backoff backoff;
};

struct ClientState {
  using Phase = Connection::Phase;

  explicit ClientState(ClientOptions opts)
      : options(std::move(opts)), service(parse_service_url(options.service_url)) {
    if (options.keepalive.count() <= 0 || options.operation_timeout.count() <= 0 ||
        options.reconnect_initial.count() <= 0) {
      throw ConfigError("pulsar: keepalive, operation_timeout and reconnect_initial must be > 0");
    }
    if (service.tls) configure_tls();
    primary = connection_for(service);
  }
  // Producers and consumers point at their connections and these back at them: the cycles are
  // broken here (the I/O thread is gone: the last handle of the client is).
  ~ClientState() {
    for (auto& [key, c] : connections) {
      c->producers.clear();
      c->consumers.clear();
    }
  }
  ClientState(const ClientState&) = delete;
  ClientState& operator=(const ClientState&) = delete;

  ClientOptions options;
  Endpoint service;
  asio::ssl::context tls{asio::ssl::context::tls_client};
  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;
  std::mutex post_mu;  // guards `closing` and the start of the thread against posts
  bool closing = false;
  std::atomic<std::uint64_t> generation{0};
  std::atomic<int> protocol{0};

  // ---- I/O thread only (and the constructor) ----
  bool closed = false;
  bool finished = false;
  int draining = 0;  // connections close() waits for
  asio::steady_timer close_timer{io};
  std::uint64_t last_id = 0;
  // By endpoint key; never erased (a connection without producers or consumers stays idle).
  std::map<std::string, std::shared_ptr<Connection>> connections;
  std::shared_ptr<Connection> primary;  // the service URL's: lookups and metadata
  std::map<std::uint64_t, std::shared_ptr<ProducerState>> producers;
  std::map<std::uint64_t, std::shared_ptr<ConsumerState>> consumers;

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

  void configure_tls() {
    boost::system::error_code error;
    if (options.tls_allow_insecure) {
      tls.set_verify_mode(asio::ssl::verify_none);
      return;
    }
    tls.set_verify_mode(asio::ssl::verify_peer);
    if (options.tls_trust_certs_file.empty()) {
      static_cast<void>(tls.set_default_verify_paths(error));
      if (error) throw ConfigError("pulsar: TLS: the system's CA certificates: " + error.message());
    } else {
      static_cast<void>(tls.load_verify_file(options.tls_trust_certs_file, error));
      if (error) {
        throw ConfigError("pulsar: TLS CA file '" + options.tls_trust_certs_file +
                          "': " + error.message());
      }
    }
  }

  // The connection to `where`, made (idle) on first use. A TLS client speaks TLS to every broker.
  std::shared_ptr<Connection> connection_for(const Endpoint& where) {
    std::shared_ptr<Connection>& c = connections[where.key()];
    if (!c) {
      c = std::make_shared<Connection>(
          io, where, spi::Backoff(options.reconnect_initial, options.reconnect_cap));
    }
    return c;
  }

  // ---- connection ----
  void ensure_ready(Connection& c, Done done) {
    if (closed) {
      done(std::make_exception_ptr(ClosedError("pulsar: the client is closed")));
      return;
    }
    if (c.phase == Phase::Ready) {
      done(nullptr);
      return;
    }
    c.waiting_ready.push_back(std::move(done));
    if (c.phase == Phase::Idle) connect(c);
  }

  void connect(Connection& c) {
    c.phase = Phase::Connecting;
    auto stream = std::make_shared<Stream>(io, tls);
    c.stream = stream;
    c.reader = wire::FrameReader();
    c.writes.clear();
    c.writing = false;
    c.tls_failure.clear();
    Connection* raw = &c;
    c.connect_timer.expires_after(options.operation_timeout);
    c.connect_timer.async_wait([this, raw, stream](boost::system::error_code error) {
      if (!error)
        lost(*raw, stream,
             "no CONNECTED within " + std::to_string(options.operation_timeout.count()) + " ms");
    });
    c.resolver.async_resolve(
        c.endpoint.host, std::to_string(c.endpoint.port),
        [this, raw, stream](boost::system::error_code error,
                            const tcp::resolver::results_type& results) {
          if (stream != raw->stream) return;
          if (error) {
            lost(*raw, stream, "resolve " + raw->endpoint.host + ": " + error.message());
            return;
          }
          asio::async_connect(
              stream->next_layer(), results,
              [this, raw, stream](boost::system::error_code err, const tcp::endpoint&) {
                if (stream != raw->stream) return;
                if (err) {
                  lost(*raw, stream, "connect: " + err.message());
                  return;
                }
                boost::system::error_code ignored;
                stream->next_layer().set_option(tcp::no_delay(true), ignored);
                if (raw->endpoint.tls) {
                  handshake(*raw, stream);
                } else {
                  start(*raw, stream);
                }
              });
        });
  }

  // TLS: the handshake, verifying the certificate chain (tls_trust_certs_file) and the peer name
  // (the host connected to) unless the options turn that off.
  void handshake(Connection& c, const std::shared_ptr<Stream>& stream) {
    Connection* raw = &c;
    const std::string& host = c.endpoint.host;
    boost::system::error_code ip_error;
    static_cast<void>(asio::ip::make_address(host, ip_error));
    if (ip_error) {  // a DNS name: SNI
      static_cast<void>(SSL_set_tlsext_host_name(stream->native_handle(), host.c_str()));
    }
    if (!options.tls_allow_insecure) {
      stream->set_verify_callback(
          [raw, host, names = asio::ssl::host_name_verification(host),
           check = options.tls_verify_hostname](bool preverified,
                                                asio::ssl::verify_context& context) mutable {
            X509_STORE_CTX* store = context.native_handle();
            if (!preverified) {
              raw->tls_failure = X509_verify_cert_error_string(X509_STORE_CTX_get_error(store));
              return false;
            }
            if (check && !names(true, context)) {
              raw->tls_failure = "the certificate does not name " + host;
              return false;
            }
            return true;
          });
    }
    stream->async_handshake(
        asio::ssl::stream_base::client, [this, raw, stream](boost::system::error_code error) {
          if (stream != raw->stream) return;
          if (error) {
            std::string why = error.message();
            if (!raw->tls_failure.empty()) why += " (" + raw->tls_failure + ")";
            // An SSL error (a refused certificate, no common protocol, a peer not speaking TLS)
            // is for the configuration to fix; a cut connection is transient.
            const bool config = error.category() == asio::error::get_ssl_category();
            lost(*raw, stream, "TLS handshake: " + why,
                 config ? std::make_exception_ptr(ConfigError("pulsar: TLS handshake with " +
                                                              raw->address() + ": " + why))
                        : nullptr);
            return;
          }
          start(*raw, stream);
        });
  }

  // The stream is open (and TLS established): CONNECT.
  void start(Connection& c, const std::shared_ptr<Stream>& stream) {
    read(c, stream);
    pb::BaseCommand command = command_of(pb::BaseCommand::CONNECT);
    command.mutable_connect()->set_client_version("babelqueue-cpp");
    command.mutable_connect()->set_protocol_version(kProtocolVersion);
    if (!options.token.empty()) {
      command.mutable_connect()->set_auth_method_name("token");
      command.mutable_connect()->set_auth_data(options.token);
    }
    write(c, wire::encode_command(command));
  }

  void read(Connection& c, const std::shared_ptr<Stream>& stream) {
    Connection* raw = &c;
    auto on_read = [this, raw, stream](boost::system::error_code error, std::size_t n) {
      if (stream != raw->stream) return;
      if (error) {
        lost(*raw, stream,
             error == asio::error::eof || error == asio::ssl::error::stream_truncated
                 ? "the broker closed the connection"
                 : error.message());
        return;
      }
      raw->last_heard = Clock::now();
      try {
        raw->reader.feed(std::string_view(raw->buffer.data(), n));
        while (stream == raw->stream) {
          std::optional<wire::Frame> frame = raw->reader.next();
          if (!frame) break;
          dispatch(*raw, *frame);
        }
      } catch (const Error& e) {
        lost(*raw, stream, e.what());
        return;
      }
      if (stream == raw->stream) read(*raw, stream);
    };
    if (c.endpoint.tls) {
      stream->async_read_some(asio::buffer(c.buffer), std::move(on_read));
    } else {
      stream->next_layer().async_read_some(asio::buffer(c.buffer), std::move(on_read));
    }
  }

  void write(Connection& c, std::string frame) {
    if (!c.stream) return;
    c.writes.push_back(std::move(frame));
    if (!c.writing) write_next(c, c.stream);
  }

  void write_next(Connection& c, const std::shared_ptr<Stream>& stream) {
    c.writing = true;
    Connection* raw = &c;
    auto on_write = [this, raw, stream](boost::system::error_code error, std::size_t) {
      if (stream != raw->stream) return;
      if (error) {
        lost(*raw, stream, "write: " + error.message());
        return;
      }
      raw->writes.pop_front();
      raw->writing = false;
      if (!raw->writes.empty()) {
        write_next(*raw, stream);
      } else if (raw->draining) {
        drained(*raw);
      }
    };
    if (c.endpoint.tls) {
      asio::async_write(*stream, asio::buffer(c.writes.front()), std::move(on_write));
    } else {
      asio::async_write(stream->next_layer(), asio::buffer(c.writes.front()), std::move(on_write));
    }
  }

  void keepalive(Connection& c, const std::shared_ptr<Stream>& stream) {
    Connection* raw = &c;
    c.keepalive_timer.expires_after(options.keepalive);
    c.keepalive_timer.async_wait([this, raw, stream](boost::system::error_code error) {
      if (error || stream != raw->stream) return;
      if (Clock::now() - raw->last_heard > 2 * options.keepalive) {
        lost(*raw, stream, "no frame from the broker for two keep-alive intervals");
        return;
      }
      pb::BaseCommand ping = command_of(pb::BaseCommand::PING);
      ping.mutable_ping();
      write(*raw, wire::encode_command(ping));
      keepalive(*raw, stream);
    });
  }

  // The connection `stream` of `c` is dead: fail what was in flight on it with `cause` (by
  // default a transient TransportError naming `reason`), reconnect when a producer or consumer
  // of a topic its broker serves needs it.
  void lost(Connection& c, const std::shared_ptr<Stream>& stream, const std::string& reason,
            std::exception_ptr cause = nullptr) {
    if (stream != c.stream) return;
    boost::system::error_code ignored;
    stream->next_layer().close(ignored);
    c.stream.reset();
    c.keepalive_timer.cancel();
    c.connect_timer.cancel();
    c.writes.clear();
    c.writing = false;
    const auto error = closed ? std::make_exception_ptr(ClosedError("pulsar: the client is closed"))
                       : cause ? cause
                               : std::make_exception_ptr(TransportError(
                                     "pulsar: connection to " + c.address() + " lost: " + reason));
    fail_all(c, error);
    if (closed) {
      drained(c);
      return;
    }
    if (c.producers.empty() && c.consumers.empty()) {
      c.phase = Phase::Idle;
      return;
    }
    c.phase = Phase::Waiting;
    Connection* raw = &c;
    c.reconnect_timer.expires_after(c.backoff.next());
    c.reconnect_timer.async_wait([this, raw](boost::system::error_code timer_error) {
      if (!timer_error && !closed && raw->phase == Phase::Waiting) connect(*raw);
    });
  }

  void fail_all(Connection& c, const std::exception_ptr& error) {
    std::map<std::uint64_t, Connection::Request> failing;
    failing.swap(c.requests);
    for (auto& [id, request] : failing)
      request.answer(nullptr, error);
    std::vector<Done> waiting;
    waiting.swap(c.waiting_ready);
    for (auto& done : waiting)
      done(error);
    for (auto& [id, producer] : c.producers) {
      producer->ready = false;
      producer->sends.fail_all(error);
    }
    for (auto& [id, consumer] : c.consumers) {
      consumer->ready = false;
      consumer->serving = 0;
      std::lock_guard<std::mutex> lock(consumer->mu);
      consumer->queue.clear();  // never acked on another connection: the broker redelivers them
    }
  }

  // ---- requests ----
  void request(Connection& c, std::uint64_t id, const pb::BaseCommand& command, std::string context,
               Answer answer) {
    c.requests.emplace(id, Connection::Request{std::move(context), std::move(answer)});
    write(c, wire::encode_command(command));
  }

  static void answer(Connection& c, std::uint64_t id, const pb::BaseCommand* command,
                     std::exception_ptr error) {
    const auto found = c.requests.find(id);
    if (found == c.requests.end()) return;
    Connection::Request request = std::move(found->second);
    c.requests.erase(found);
    request.answer(command, std::move(error));
  }

  static void answer_error(Connection& c, std::uint64_t id, pb::ServerError code,
                           const std::string& message) {
    const auto found = c.requests.find(id);
    if (found == c.requests.end()) return;
    answer(c, id, nullptr, detail::broker_error(code, found->second.context, message));
  }

  using Looked = std::function<void(std::exception_ptr, LookupResult, std::shared_ptr<Connection>)>;

  // LOOKUP of `topic` on `c`: a Redirect is asked again of the broker it names (with its
  // authoritative flag, at most kMaxRedirects times); Connect names the broker serving the topic,
  // whose connection `done` gets (made on first use, connected when used).
  void lookup(const std::shared_ptr<Connection>& c, const std::string& topic, bool authoritative,
              int redirects, Looked done) {
    ensure_ready(*c, [this, c, topic, authoritative, redirects, done](std::exception_ptr error) {
      if (error) {
        done(redirects == 0 ? error : redirect_failed(error, topic, *c), {}, nullptr);
        return;
      }
      const std::uint64_t id = ++last_id;
      pb::BaseCommand command = command_of(pb::BaseCommand::LOOKUP);
      command.mutable_lookuptopic()->set_topic(topic);
      command.mutable_lookuptopic()->set_request_id(id);
      command.mutable_lookuptopic()->set_authoritative(authoritative);
      request(
          *c, id, command, "LOOKUP " + topic,
          [this, c, topic, redirects, done](const pb::BaseCommand* answer, std::exception_ptr e) {
            if (e) {
              done(e, {}, nullptr);
              return;
            }
            try {
              looked_up(c, topic, redirects, answer->lookuptopicresponse(), done);
            } catch (const ConfigError&) {
              done(std::current_exception(), {}, nullptr);
            }
          });
    });
  }

  // `error` of the connection to the broker a redirect named, as the lookup's (same class).
  static std::exception_ptr redirect_failed(const std::exception_ptr& error,
                                            const std::string& topic, const Connection& c) {
    const Failure failure = failure_of(error);
    try {
      throw_failure(Failure{
          failure.code,
          "pulsar: LOOKUP " + topic + ": redirected to " + c.endpoint.key() + ": " + failure.what,
          failure.transient});
    } catch (const Error&) {
      return std::current_exception();
    }
  }

  void looked_up(const std::shared_ptr<Connection>& c, const std::string& topic, int redirects,
                 const pb::CommandLookupTopicResponse& response, const Looked& done) {
    if (response.response() == pb::CommandLookupTopicResponse::Failed) {
      done(detail::broker_error(response.error(), "LOOKUP " + topic, response.message()), {},
           nullptr);
      return;
    }
    const std::string& url =
        service.tls ? response.brokerserviceurltls() : response.brokerserviceurl();
    if (url.empty()) {
      done(std::make_exception_ptr(
               TransportError("pulsar: LOOKUP " + topic + ": " + c->address() + " names no " +
                                  (service.tls ? "pulsar+ssl://" : "pulsar://") + " broker URL",
                              false)),
           {}, nullptr);
      return;
    }
    // proxy_through_service_url: the broker asked serves it on the broker's behalf.
    const std::shared_ptr<Connection> target =
        response.proxy_through_service_url() ? c : connection_for(parse_service_url(url));
    if (response.response() == pb::CommandLookupTopicResponse::Redirect) {
      if (redirects >= kMaxRedirects) {
        done(std::make_exception_ptr(TransportError("pulsar: LOOKUP " + topic + ": more than " +
                                                    std::to_string(kMaxRedirects) + " redirects")),
             {}, nullptr);
        return;
      }
      lookup(target, topic, response.authoritative(), redirects + 1, done);
      return;
    }
    done(nullptr, LookupResult{url, redirects}, target);
  }

  // `state` is served by `target` from now on.
  template <class State>
  void bind(const std::shared_ptr<State>& state, const std::shared_ptr<Connection>& target) {
    if (state->connection == target) return;
    unbind(*state);
    state->connection = target;
    if constexpr (std::is_same_v<State, ProducerState>) {
      target->producers[state->id] = state;
    } else {
      target->consumers[state->id] = state;
    }
  }

  template <class State>
  void unbind(State& state) {
    if (!state.connection) return;
    if constexpr (std::is_same_v<State, ProducerState>) {
      state.connection->producers.erase(state.id);
    } else {
      state.connection->consumers.erase(state.id);
    }
    state.connection.reset();
  }

  using Owned = std::function<void(std::exception_ptr, const std::shared_ptr<Connection>&)>;

  // LOOKUP of `topic`, then `done(nullptr, connection)` once the broker serving it is connected;
  // `found(connection)` first, as soon as the lookup names it.
  void with_owner(const std::string& topic,
                  std::function<void(const std::shared_ptr<Connection>&)> found, Owned done) {
    lookup(primary, topic, false, 0,
           [this, found, done](std::exception_ptr error, LookupResult,
                               std::shared_ptr<Connection> target) {
             if (error) {
               done(error, nullptr);
               return;
             }
             found(target);
             ensure_ready(*target, [target, done](std::exception_ptr e) { done(e, target); });
           });
  }

  // LOOKUP, then `then(connection)` once the broker serving the topic is connected.
  template <class State>
  void on_owner(const std::shared_ptr<State>& state, std::function<void(Connection&)> then,
                Done done) {
    state->creating = true;
    with_owner(
        state->topic,
        [this, state](const std::shared_ptr<Connection>& target) { bind(state, target); },
        [state, then, done](std::exception_ptr error, const std::shared_ptr<Connection>& target) {
          if (error) {
            state->creating = false;
            done(error);
            return;
          }
          then(*target);
        });
  }

  void create_producer(const std::shared_ptr<ProducerState>& producer, Done done) {
    on_owner(
        producer,
        [this, producer, done](Connection& c) {
          const std::uint64_t id = ++last_id;
          pb::BaseCommand command = command_of(pb::BaseCommand::PRODUCER);
          command.mutable_producer()->set_topic(producer->topic);
          command.mutable_producer()->set_producer_id(producer->id);
          command.mutable_producer()->set_request_id(id);
          if (!producer->name.empty())
            command.mutable_producer()->set_producer_name(producer->name);
          request(c, id, command, "PRODUCER " + producer->topic,
                  [producer, done](const pb::BaseCommand* answer, std::exception_ptr e) {
                    producer->creating = false;
                    if (!e) {
                      producer->ready = true;
                      producer->name = answer->producer_success().producer_name();
                      producer->retry.reset();
                    }
                    done(e);
                  });
        },
        done);
  }

  void subscribe(const std::shared_ptr<ConsumerState>& consumer, Done done) {
    on_owner(
        consumer,
        [this, consumer, done](Connection& c) {
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
          request(c, id, command,
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
                      consumer->serving = consumer->connection->number;
                      consumer->handed_out = 0;
                      consumer->batch_left.clear();
                      consumer->retry.reset();
                      flow(*consumer, consumer->options.prefetch);
                    }
                    done(e);
                  });
        },
        done);
  }

  void flow(const ConsumerState& consumer, std::uint32_t permits) {
    pb::BaseCommand command = command_of(pb::BaseCommand::FLOW);
    command.mutable_flow()->set_consumer_id(consumer.id);
    command.mutable_flow()->set_messagepermits(permits);
    write(*consumer.connection, wire::encode_command(command));
  }

  // Re-creates a producer or consumer the broker closed or a lost connection took, looking its
  // topic up again (it may have moved to another broker), retrying with its backoff.
  template <class State>
  void recreate(const std::shared_ptr<State>& state) {
    if (closed || state->ready || state->creating) return;
    auto retry = [this, state](std::exception_ptr error) {
      if (!error || closed) return;
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

  void connected(Connection& c, const pb::CommandConnected& connected) {
    if (c.phase != Phase::Connecting) return;
    c.connect_timer.cancel();
    c.phase = Phase::Ready;
    c.number = generation.fetch_add(1) + 1;
    c.protocol = std::min(kProtocolVersion, connected.protocol_version());
    protocol = c.protocol;
    if (connected.has_max_message_size() && connected.max_message_size() > 0) {
      c.reader.set_max_frame_size(static_cast<std::size_t>(connected.max_message_size()) +
                                  wire::kFramePadding);
    }
    c.backoff.reset();
    keepalive(c, c.stream);
    std::vector<Done> waiting;
    waiting.swap(c.waiting_ready);
    for (auto& done : waiting)
      done(nullptr);
    const auto bound_producers = c.producers;
    const auto bound_consumers = c.consumers;
    for (const auto& [id, producer] : bound_producers)
      recreate(producer);
    for (const auto& [id, consumer] : bound_consumers)
      recreate(consumer);
  }

  // AUTH_CHALLENGE (a broker refreshing its authentication): the token again.
  void challenged(Connection& c) {
    pb::BaseCommand command = command_of(pb::BaseCommand::AUTH_RESPONSE);
    pb::CommandAuthResponse* response = command.mutable_authresponse();
    response->set_client_version("babelqueue-cpp");
    response->set_protocol_version(kProtocolVersion);
    response->mutable_response()->set_auth_method_name(options.token.empty() ? "none" : "token");
    response->mutable_response()->set_auth_data(options.token);
    write(c, wire::encode_command(command));
  }

  // ---- frames ----
  void dispatch(Connection& c, const wire::Frame& frame) {
    const pb::BaseCommand& command = frame.command;
    switch (command.type()) {
      case pb::BaseCommand::CONNECTED:
        connected(c, command.connected());
        break;
      case pb::BaseCommand::AUTH_CHALLENGE:
        challenged(c);
        break;
      case pb::BaseCommand::PING: {
        pb::BaseCommand pong = command_of(pb::BaseCommand::PONG);
        pong.mutable_pong();
        write(c, wire::encode_command(pong));
        break;
      }
      case pb::BaseCommand::LOOKUP_RESPONSE:
        answer(c, command.lookuptopicresponse().request_id(), &command, nullptr);
        break;
      case pb::BaseCommand::PARTITIONED_METADATA_RESPONSE:
        answer(c, command.partitionmetadataresponse().request_id(), &command, nullptr);
        break;
      case pb::BaseCommand::PRODUCER_SUCCESS:
        // producer_ready false: queued for exclusive access; the ready one follows.
        if (!command.producer_success().has_producer_ready() ||
            command.producer_success().producer_ready()) {
          answer(c, command.producer_success().request_id(), &command, nullptr);
        }
        break;
      case pb::BaseCommand::SUCCESS:
        answer(c, command.success().request_id(), &command, nullptr);
        break;
      case pb::BaseCommand::ERROR:
        if (c.phase == Phase::Connecting) {
          // CONNECT refused (AuthenticationError, UnsupportedVersionError, ...): the broker closes
          // the connection next; what waits for it gets the broker's error, not "lost". The
          // error names the broker, never the token.
          lost(c, c.stream, command.error().message(),
               detail::broker_error(command.error().error(), "CONNECT to " + c.address(),
                                    command.error().message()));
          break;
        }
        answer_error(c, command.error().request_id(), command.error().error(),
                     command.error().message());
        break;
      case pb::BaseCommand::ACK_RESPONSE:
        if (command.ackresponse().has_error()) {
          answer_error(c, command.ackresponse().request_id(), command.ackresponse().error(),
                       command.ackresponse().message());
        } else {
          answer(c, command.ackresponse().request_id(), &command, nullptr);
        }
        break;
      case pb::BaseCommand::SEND_RECEIPT:
        if (const auto p = c.producers.find(command.send_receipt().producer_id());
            p != c.producers.end()) {
          static_cast<void>(p->second->sends.receipt(command.send_receipt().sequence_id(),
                                                     command.send_receipt().message_id()));
        }
        break;
      case pb::BaseCommand::SEND_ERROR:
        if (const auto p = c.producers.find(command.send_error().producer_id());
            p != c.producers.end()) {
          static_cast<void>(p->second->sends.fail(
              command.send_error().sequence_id(),
              detail::broker_error(command.send_error().error(), "SEND to " + p->second->topic,
                                   command.send_error().message())));
        }
        break;
      case pb::BaseCommand::CLOSE_PRODUCER:
        if (const auto p = c.producers.find(command.close_producer().producer_id());
            p != c.producers.end()) {
          const std::shared_ptr<ProducerState> producer = p->second;
          producer->ready = false;
          producer->sends.fail_all(std::make_exception_ptr(TransportError(
              "pulsar: the broker closed the producer of " + producer->topic + "; resend")));
          recreate(producer);
        }
        break;
      case pb::BaseCommand::CLOSE_CONSUMER:
        if (const auto found = c.consumers.find(command.close_consumer().consumer_id());
            found != c.consumers.end()) {
          const std::shared_ptr<ConsumerState> consumer = found->second;
          consumer->ready = false;
          consumer->serving = 0;
          {
            std::lock_guard<std::mutex> lock(consumer->mu);
            consumer->queue.clear();
          }
          recreate(consumer);
        }
        break;
      case pb::BaseCommand::MESSAGE:
        message(c, frame);
        break;
      default:
        break;  // PONG (any frame counts as heard), ACTIVE_CONSUMER_CHANGE, ...: nothing to do
    }
  }

  void message(Connection& c, const wire::Frame& frame) {
    const pb::CommandMessage& command = frame.command.message();
    const auto found = c.consumers.find(command.consumer_id());
    if (found == c.consumers.end() || !found->second->ready) return;
    ConsumerState& consumer = *found->second;
    const wire::Message decoded = wire::decode_message(frame.payload_section);
    const pb::MessageMetadata& metadata = decoded.metadata;
    std::string payload = decoded.payload;
    if (metadata.has_compression() && metadata.compression() != pb::NONE) {
      payload = wire::decompress(metadata.compression(), payload, metadata.uncompressed_size(),
                                 c.reader.max_frame_size());
    }
    Received base;
    base.topic = consumer.topic;
    base.id.ledger = command.message_id().ledgerid();
    base.id.entry = command.message_id().entryid();
    base.id.partition =
        command.message_id().has_partition() ? command.message_id().partition() : -1;
    base.redelivery_count = command.redelivery_count();
    base.connection = c.number;
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
    consumer.wake();
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
  // close(): on every connection CLOSE_PRODUCER and CLOSE_CONSUMER after what is queued (acks),
  // then the sockets once their writes drained (at most 2 s), then the thread. Blocked receivers
  // wake at once.
  void shut_down() {
    closed = true;
    for (auto& [id, consumer] : consumers) {
      {
        std::lock_guard<std::mutex> lock(consumer->mu);
        consumer->closed = true;
      }
      consumer->wake();
    }
    for (auto& [key, c] : connections) {
      c->resolver.cancel();
      c->reconnect_timer.cancel();
      if (!c->stream || c->phase != Phase::Ready) continue;
      for (auto& [id, producer] : c->producers) {
        if (!producer->ready) continue;
        pb::BaseCommand command = command_of(pb::BaseCommand::CLOSE_PRODUCER);
        command.mutable_close_producer()->set_producer_id(id);
        command.mutable_close_producer()->set_request_id(++last_id);
        write(*c, wire::encode_command(command));
      }
      for (auto& [id, consumer] : c->consumers) {
        if (!consumer->ready) continue;
        pb::BaseCommand command = command_of(pb::BaseCommand::CLOSE_CONSUMER);
        command.mutable_close_consumer()->set_consumer_id(id);
        command.mutable_close_consumer()->set_request_id(++last_id);
        write(*c, wire::encode_command(command));
      }
      if (c->writing) {
        c->draining = true;
        ++draining;
      }
    }
    if (draining == 0) {
      finish();
      return;
    }
    close_timer.expires_after(
        std::min<std::chrono::milliseconds>(options.operation_timeout, std::chrono::seconds(2)));
    close_timer.async_wait([this](boost::system::error_code error) {
      if (!error) finish();
    });
  }

  // A connection close() waited for has written everything (or is gone).
  void drained(Connection& c) {
    if (!c.draining) return;
    c.draining = false;
    if (--draining == 0) finish();
  }

  void finish() {
    if (finished) return;
    finished = true;
    draining = 0;
    close_timer.cancel();
    for (auto& [key, c] : connections) {
      c->draining = false;
      if (c->stream) {
        lost(*c, c->stream, "closed");
      } else {
        fail_all(*c, std::make_exception_ptr(ClosedError("pulsar: the client is closed")));
      }
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
    consumer->wake();
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
  return s.call<LookupResult>("LOOKUP " + topic,
                              [&s, topic](std::shared_ptr<Reply<Outcome<LookupResult>>> promise) {
                                s.lookup(s.primary, topic, false, 0,
                                         [promise](std::exception_ptr error, LookupResult result,
                                                   const std::shared_ptr<Connection>&) {
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
        s.ensure_ready(*s.primary, [&s, topic, promise](std::exception_ptr error) {
          if (error) {
            promise->set_exception(error);
            return;
          }
          const std::uint64_t id = ++s.last_id;
          pb::BaseCommand command = command_of(pb::BaseCommand::PARTITIONED_METADATA);
          command.mutable_partitionmetadata()->set_topic(topic);
          command.mutable_partitionmetadata()->set_request_id(id);
          s.request(
              *s.primary, id, command, "PARTITIONED_METADATA " + topic,
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
            s.unbind(*producer);
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
            s.unbind(*consumer);
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
  static_cast<void>(s.call<bool>(
      what, [&s, topic, subscription, type, what](std::shared_ptr<Reply<Outcome<bool>>> promise) {
        s.with_owner(
            topic, [](const std::shared_ptr<Connection>&) {},
            [&s, topic, subscription, type, what, promise](std::exception_ptr error,
                                                           const std::shared_ptr<Connection>& c) {
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
              s.request(*c, id, command, what,
                        [&s, c, consumer_id, what, promise](const pb::BaseCommand*,
                                                            std::exception_ptr e) {
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
                          s.request(*c, close_id, close, what + ": CLOSE_CONSUMER",
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
    if (message.deliver_at_ms) metadata.set_deliver_at_time(*message.deliver_at_ms);
    s.write(*producer.connection, wire::encode_message(command, metadata, message.payload));
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

bool Consumer::current(const Received& message) const {
  return state_->current(message.connection, message.incarnation);
}

std::uint64_t Doorbell::rung() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return rung_;
}

bool Doorbell::wait(std::uint64_t seen, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [this, seen] { return rung_ != seen; });
}

void Doorbell::ring() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    ++rung_;
  }
  cv_.notify_all();
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
    std::size_t stale = 0;
    pb::BaseCommand command = command_of(pb::BaseCommand::ACK);
    command.mutable_ack()->set_consumer_id(id);
    command.mutable_ack()->set_ack_type(pb::CommandAck::Individual);
    for (const Entry& message : entries) {
      if (!consumer.current(message.connection, message.incarnation)) {
        ++stale;
        continue;
      }
      if (!ClientState::last_of_batch(consumer, message.id)) continue;
      *command.mutable_ack()->add_message_id() = id_data(message.id);
    }
    if (command.ack().message_id_size() == 0) {
      promise->set_value(stale);
      return;
    }
    // The consumer's connection: the one every message left in arrived on.
    Connection& c = *consumer.connection;
    if (!confirmed || c.protocol < kAckReceiptVersion) {
      s.write(c, wire::encode_command(command));
      promise->set_value(stale);
      return;
    }
    // With a request id the broker answers ACK_RESPONSE once it applied the acks: a flush
    // returns when the broker has them.
    const std::uint64_t request = ++s.last_id;
    command.mutable_ack()->set_request_id(request);
    s.request(c, request, command, what,
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
    if (!consumer.current(message.connection, message.incarnation)) {
      promise->set_exception(std::make_exception_ptr(StaleDeliveryError(
          "pulsar: " + what + ": its connection or consumer is gone; the broker redelivers it")));
      return;
    }
    const pb::MessageIdData entry = id_data(message.id);
    if (positive) {
      if (!ClientState::last_of_batch(consumer, message.id)) {
        promise->set_value(true);  // the batch is acked with its last entry
        return;
      }
      pb::BaseCommand command = command_of(pb::BaseCommand::ACK);
      command.mutable_ack()->set_consumer_id(id);
      command.mutable_ack()->set_ack_type(pb::CommandAck::Individual);
      *command.mutable_ack()->add_message_id() = entry;
      s.write(*consumer.connection, wire::encode_command(command));
    } else {
      consumer.batch_left.erase({message.id.ledger, message.id.entry});
      pb::BaseCommand command = command_of(pb::BaseCommand::REDELIVER_UNACKNOWLEDGED_MESSAGES);
      command.mutable_redeliverunacknowledgedmessages()->set_consumer_id(id);
      *command.mutable_redeliverunacknowledgedmessages()->add_message_ids() = entry;
      s.write(*consumer.connection, wire::encode_command(command));
    }
    promise->set_value(true);
  });
}

}  // namespace babelqueue::pulsar
