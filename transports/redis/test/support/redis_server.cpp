// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "redis_server.hpp"

#include "raw_client.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

namespace babelqueue::redis::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr auto kStartDeadline = std::chrono::seconds(10);
constexpr auto kStopGrace = std::chrono::seconds(5);
constexpr milliseconds kStartPoll{5};
constexpr milliseconds kStopPoll{2};
// Per readiness probe; a probe that times out is simply repeated until the start deadline.
constexpr milliseconds kProbeTimeout{1000};
// Another process can take the probed port before the server binds it; each retry probes anew.
constexpr int kMaxPortAttempts = 5;

// find_program()'s result, set by CMake.
constexpr std::string_view kConfiguredServer = BABELQUEUE_REDIS_SERVER;

bool is_executable(const std::string& path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0 && !std::filesystem::is_directory(path);
}

// The configured path when it is usable (CMake leaves "...-NOTFOUND" when find_program failed),
// else the first redis-server on PATH.
std::optional<std::string> find_executable() {
  if (const std::string configured(kConfiguredServer); is_executable(configured)) {
    return configured;
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    const std::size_t colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/redis-server";
    if (is_executable(candidate)) return candidate;
  }
  return std::nullopt;
}

void ignore_sigpipe_once() {
  // hiredis writes to sockets the server may have closed (killed clients, a stopped server); the
  // test must see EPIPE there, not die of SIGPIPE.
  [[maybe_unused]] static const auto previous = std::signal(SIGPIPE, SIG_IGN);
}

int probe_free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int error = errno;
    ::close(fd);
    throw std::system_error(error, std::generic_category(), "probe a free port on 127.0.0.1");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

std::string make_temp_dir() {
  const char* tmpdir = std::getenv("TMPDIR");
  const std::filesystem::path base =
      std::filesystem::absolute(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp");
  std::string pattern = (base / "babelqueue-redis-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  }
  return pattern;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

std::string read_file_from(const std::string& path, std::streamoff offset) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(offset);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::streamoff file_size(const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  return error ? 0 : static_cast<std::streamoff>(size);
}

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0x0f];
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> redis_server_unavailable() {
  if (find_executable()) return std::nullopt;
  return "redis-server not found (BABELQUEUE_REDIS_SERVER=\"" + std::string(kConfiguredServer) +
         "\", nor on PATH); install it (Debian: apt-get install redis-server)";
}

RedisServer::RedisServer() : RedisServer(Config{}) {}

RedisServer::RedisServer(Config config) : config_(std::move(config)) {
  ignore_sigpipe_once();
  const std::optional<std::string> executable = find_executable();
  if (!executable) throw std::runtime_error(*redis_server_unavailable());
  executable_ = *executable;
  dir_ = make_temp_dir();
  log_path_ = dir_ + "/redis.log";
  try {
    for (int attempt = 1;; ++attempt) {
      port_ = probe_free_port();
      if (spawn_and_wait() == SpawnResult::kReady) return;
      if (attempt == kMaxPortAttempts) {
        throw std::runtime_error("redis-server: the probed port was taken " +
                                 std::to_string(attempt) + " times; log tail:\n" + log_tail());
      }
    }
  } catch (...) {
    // No destructor runs for a half-built object; the child is already reaped.
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    throw;
  }
}

RedisServer::~RedisServer() {
  // The data is deleted next, so a crash stop loses nothing; SIGTERM would wait for the server's
  // next cron tick (up to 100 ms at the default hz 10) in every test.
  kill();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string RedisServer::url(int db) const {
  // Appended piece by piece: GCC 12 -O2 reports a bogus -Wrestrict for `":" + std::string`.
  std::string url = "redis://";
  if (!config_.requirepass.empty()) {
    url += ':';
    url += percent_encode(config_.requirepass);
    url += '@';
  }
  url += "127.0.0.1:";
  url += std::to_string(port_);
  url += '/';
  url += std::to_string(db);
  return url;
}

void RedisServer::stop() {
  reap(SIGTERM, /*escalate=*/true);
}

void RedisServer::kill() {
  reap(SIGKILL, /*escalate=*/false);
}

void RedisServer::start() {
  if (running()) throw std::logic_error("RedisServer::start: the server is running");
  if (spawn_and_wait() == SpawnResult::kPortTaken) {
    throw std::runtime_error("redis-server: port " + std::to_string(port_) +
                             " was taken while the server was stopped; log tail:\n" + log_tail());
  }
}

std::string RedisServer::log_tail(std::size_t lines) const {
  const std::string log = read_file_from(log_path_, 0);
  // Walk back from the last line's terminator to the newline before the first wanted line.
  std::size_t start = log.size();
  if (start > 0 && log[start - 1] == '\n') --start;
  for (std::size_t taken = 0; taken < lines && start > 0; ++taken) {
    const std::size_t newline = log.rfind('\n', start - 1);
    start = newline == std::string::npos ? 0 : newline;
  }
  return log.substr(start == 0 ? 0 : start + 1);
}

RedisServer::SpawnResult RedisServer::spawn_and_wait() {
  // Only what this start writes decides whether it lost the port race; the log keeps earlier runs.
  const std::streamoff log_start = file_size(log_path_);
  spawn();
  const auto deadline = Clock::now() + kStartDeadline;
  for (;;) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      if (read_file_from(log_path_, log_start).find("Address already in use") !=
          std::string::npos) {
        return SpawnResult::kPortTaken;
      }
      throw std::runtime_error("redis-server exited during startup (" + describe_status(status) +
                               "); log tail:\n" + log_tail());
    }
    try {
      // A short timeout: a foreign process on the port may never answer.
      RawClient client(port_, config_.requirepass, kProbeTimeout);
      const Reply pong = client.command({"PING"});
      // A process that took the port before our child could bind it also answers PONG; only our
      // own child counts (it exits with "Address already in use" and is handled above).
      if (pong.type == Reply::Status && pong.str == "PONG" &&
          client.command({"INFO", "server"})
                  .str.find("process_id:" + std::to_string(pid_) + "\r\n") != std::string::npos) {
        return SpawnResult::kReady;
      }
    } catch (const std::runtime_error&) {
      // Not listening yet (or AUTH refused by a foreign server): poll again.
    }
    if (Clock::now() >= deadline) {
      reap(SIGKILL, /*escalate=*/false);
      throw std::runtime_error("redis-server did not answer PING on 127.0.0.1:" +
                               std::to_string(port_) + " within 10 s; log tail:\n" + log_tail());
    }
    std::this_thread::sleep_for(kStartPoll);
  }
}

void RedisServer::spawn() {
  std::vector<std::string> args = {executable_};
  const auto add = [&args](std::initializer_list<std::string> more) {
    args.insert(args.end(), more);
  };
  add({"--bind", "127.0.0.1", "--port", std::to_string(port_), "--dir", dir_});
  add({"--save", "", "--appendonly", config_.appendonly ? "yes" : "no"});
  if (config_.appendonly) add({"--appendfsync", "always"});
  add({"--daemonize", "no", "--protected-mode", "no", "--logfile", log_path_});
  if (!config_.requirepass.empty()) add({"--requirepass", config_.requirepass});
  args.insert(args.end(), config_.extra_args.begin(), config_.extra_args.end());
  std::vector<char*> argv;
  for (std::string& arg : args) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);

  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) throw std::system_error(errno, std::generic_category(), "fork redis-server");
  if (child == 0) {
    // Only async-signal-safe calls until exec: other threads of the test process may have held
    // locks (malloc's included) at the moment of fork. The death signal is set before checking
    // the parent, so a parent that died in between is noticed.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(126);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // The test process ignores SIGPIPE; the server should start with the default disposition.
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    ::sigaction(SIGPIPE, &default_action, nullptr);
    // Early errors (bad arguments) go to stderr before the log file is opened: keep them too.
    const int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    const int null = ::open("/dev/null", O_RDONLY);
    if (log < 0 || null < 0 || ::dup2(null, STDIN_FILENO) < 0 || ::dup2(log, STDOUT_FILENO) < 0 ||
        ::dup2(log, STDERR_FILENO) < 0) {
      ::_exit(126);
    }
    // Sockets of the test's clients must not stay open in the server, or closing them in the test
    // would not close the connection.
    ::closefrom(3);
    ::execv(argv[0], argv.data());
    static constexpr char kMessage[] = "RedisServer: execv redis-server failed\n";
    [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    ::_exit(127);
  }
  pid_ = child;
}

void RedisServer::reap(int signal_number, bool escalate) {
  if (pid_ <= 0) return;
  ::kill(pid_, signal_number);
  if (escalate) {
    const auto deadline = Clock::now() + kStopGrace;
    while (Clock::now() < deadline) {
      const pid_t reaped = ::waitpid(pid_, nullptr, WNOHANG);
      if (reaped == pid_ || (reaped < 0 && errno != EINTR)) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(kStopPoll);
    }
    ::kill(pid_, SIGKILL);
  }
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

}  // namespace babelqueue::redis::test
