// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/testing/broker_process.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

extern char** environ;  // NOLINT: POSIX

namespace babelqueue::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kStopPoll{2};
// The first start picks new ports this often when another process took one first.
constexpr int kMaxPortAttempts = 5;

// A socket that is closed when it goes out of scope.
class Socket {
 public:
  Socket() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
  }
  ~Socket() { ::close(fd_); }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  [[nodiscard]] int fd() const { return fd_; }

 private:
  int fd_;
};

sockaddr_in loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  return address;
}

// `n` distinct free ports: every socket stays bound until all are picked.
std::vector<int> free_loopback_ports(std::size_t n) {
  std::vector<Socket> sockets(n);
  std::vector<int> ports;
  for (const Socket& s : sockets) {
    sockaddr_in address = loopback(0);
    socklen_t length = sizeof address;
    if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      throw std::system_error(errno, std::generic_category(), "bind a free port on 127.0.0.1");
    }
    ports.push_back(ntohs(address.sin_port));
  }
  return ports;
}

bool is_executable(const std::string& path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0 && !std::filesystem::is_directory(path);
}

std::string make_temp_dir(std::string_view name) {
  std::string safe;
  for (const char c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    safe += plain || c == '-' || c == '_' ? c : '_';
  }
  const char* tmpdir = std::getenv("TMPDIR");
  const std::filesystem::path base =
      std::filesystem::absolute(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp");
  std::string pattern = (base / ("babelqueue-" + safe + "-XXXXXX")).string();
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

std::string read_from(const std::string& path, std::streamoff offset) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(offset);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::streamoff file_size(const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  return error ? 0 : static_cast<std::streamoff>(size);
}

std::string describe_ports(const std::vector<int>& ports) {
  std::string out = "127.0.0.1:";
  for (std::size_t i = 0; i < ports.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(ports[i]);
  }
  return out;
}

// The process runs in a process group of its own (see spawn), so a wrapper script's children
// get the signal too; the PID itself is the fallback when the group is already gone.
void signal_process(pid_t pid, int signal_number) {
  if (::kill(-pid, signal_number) != 0) ::kill(pid, signal_number);
}

// Brokers alive in this test process, for the failure listener below.
std::mutex live_mu;
std::vector<const BrokerProcess*> live;

// Prints the log tail of every live broker when a test fails; installed by the first broker.
class PrintLogsOnFailure final : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (!info.result()->Failed()) return;
    const std::lock_guard lock(live_mu);
    for (const BrokerProcess* broker : live) {
      broker->print_log_tail();
    }
  }
};

void track(const BrokerProcess* broker) {
  [[maybe_unused]] static const bool installed = [] {
    ::testing::UnitTest::GetInstance()->listeners().Append(new PrintLogsOnFailure);
    return true;
  }();
  const std::lock_guard lock(live_mu);
  live.push_back(broker);
}

void untrack(const BrokerProcess* broker) {
  const std::lock_guard lock(live_mu);
  live.erase(std::remove(live.begin(), live.end(), broker), live.end());
}

}  // namespace

int free_loopback_port() {
  return free_loopback_ports(1).front();
}

bool accepts_tcp(int port, milliseconds timeout) {
  const Socket s;
  const int flags = ::fcntl(s.fd(), F_GETFL);
  if (flags < 0 || ::fcntl(s.fd(), F_SETFL, flags | O_NONBLOCK) != 0) return false;
  const sockaddr_in address = loopback(port);
  if (::connect(s.fd(), reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) {
    return true;
  }
  if (errno != EINPROGRESS) return false;
  pollfd p{s.fd(), POLLOUT, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
  int error = 0;
  socklen_t length = sizeof error;
  return ::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
}

std::optional<std::string> find_executable(std::string_view name, std::string_view configured) {
  if (const std::string path(configured); is_executable(path)) return path;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    const std::size_t colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + std::string(name);
    if (is_executable(candidate)) return candidate;
  }
  return std::nullopt;
}

bool running_in_ci() {
  return std::getenv("CI") != nullptr;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

long long rss_kib(pid_t pid) {
  std::istringstream status(read_file("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

void report_figure(std::string_view what, long long value, std::string_view unit) {
  std::cout << "[ figure   ] " << what << ": " << value << " " << unit << std::endl;
}

void require_main_thread(std::string_view what) {
  // Only the main thread's id equals the process id.
  if (::syscall(SYS_gettid) != ::getpid()) {
    throw std::logic_error(std::string(what) + " must be started from the main thread");
  }
}

BrokerProcess::BrokerProcess(Spec spec) : spec_(std::move(spec)) {
  if (!spec_.launch) throw std::invalid_argument("BrokerProcess: Spec::launch is not set");
  if (spec_.ports == 0) throw std::invalid_argument("BrokerProcess: Spec::ports must be >= 1");
  dir_ = make_temp_dir(spec_.name);
  log_path_ = dir_ + "/" + spec_.name + ".log";
  try {
    for (int attempt = 1;; ++attempt) {
      ports_ = free_loopback_ports(spec_.ports);
      if (spawn_and_wait() == Started::Ready) break;
      if (attempt == kMaxPortAttempts) {
        throw std::runtime_error(spec_.name + ": the picked port was taken " +
                                 std::to_string(attempt) + " times; log tail:\n" + log_tail());
      }
    }
  } catch (...) {
    // No destructor runs for a half-built object; the child is already reaped.
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    throw;
  }
  track(this);
}

BrokerProcess::~BrokerProcess() {
  untrack(this);
  if (::testing::UnitTest::GetInstance()->current_test_info() != nullptr &&
      ::testing::Test::HasFailure()) {
    print_log_tail();
  }
  kill();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void BrokerProcess::stop() {
  reap(SIGTERM, /*escalate=*/true);
}

void BrokerProcess::kill() {
  reap(SIGKILL, /*escalate=*/false);
}

void BrokerProcess::start() {
  if (running()) throw std::logic_error("BrokerProcess::start: " + spec_.name + " is running");
  if (spawn_and_wait() == Started::PortTaken) {
    throw std::runtime_error(spec_.name + ": " + describe_ports(ports_) +
                             " was taken while it was stopped; log tail:\n" + log_tail());
  }
}

std::string BrokerProcess::log_tail(std::size_t lines) const {
  const std::string log = read_from(log_path_, 0);
  // Walk back from the last line's terminator to the newline before the first wanted line.
  std::size_t start = log.size();
  if (start > 0 && log[start - 1] == '\n') --start;
  for (std::size_t taken = 0; taken < lines && start > 0; ++taken) {
    const std::size_t newline = log.rfind('\n', start - 1);
    start = newline == std::string::npos ? 0 : newline;
  }
  return log.substr(start == 0 ? 0 : start + 1);
}

void BrokerProcess::print_log_tail(std::size_t lines) const {
  std::cerr << "---- " << spec_.name << " (pid " << pid_ << ", " << describe_ports(ports_)
            << "), last " << lines << " lines of " << log_path_ << " ----\n"
            << log_tail(lines) << "---- end of the " << spec_.name << " log ----\n";
}

BrokerProcess::Started BrokerProcess::spawn_and_wait() {
  // Only what this start writes decides whether it lost a port; the log keeps earlier runs.
  const std::streamoff log_start = file_size(log_path_);
  spawn();
  const auto deadline = Clock::now() + spec_.start_timeout;
  for (;;) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      if (!spec_.port_taken_marker.empty() &&
          read_from(log_path_, log_start).find(spec_.port_taken_marker) != std::string::npos) {
        return Started::PortTaken;
      }
      throw std::runtime_error(spec_.name + " exited during startup (" + describe_status(status) +
                               "); log tail:\n" + log_tail());
    }
    bool ready = false;
    try {
      ready = spec_.ready ? spec_.ready(*this) : accepts_tcp(port(), spec_.probe_interval);
    } catch (const std::exception&) {
      // Not serving yet: poll again.
    }
    if (ready) return Started::Ready;
    if (Clock::now() >= deadline) {
      kill();
      throw std::runtime_error(spec_.name + " was not ready on " + describe_ports(ports_) +
                               " within " + std::to_string(spec_.start_timeout.count()) +
                               " ms; log tail:\n" + log_tail());
    }
    std::this_thread::sleep_for(spec_.probe_interval);
  }
}

void BrokerProcess::spawn() {
  Launch launch = spec_.launch(*this);
  if (launch.argv.empty()) throw std::invalid_argument(spec_.name + ": Launch::argv is empty");
  // Everything the child needs is built here: after fork it may only make async-signal-safe calls.
  std::vector<char*> argv;
  for (std::string& arg : launch.argv) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (!launch.env.contains(std::string(entry.substr(0, entry.find('='))))) {
      env_strings.emplace_back(entry);
    }
  }
  for (const auto& [key, value] : launch.env) {
    env_strings.push_back(key + "=" + value);
  }
  std::vector<char*> envp;
  for (std::string& entry : env_strings) {
    envp.push_back(entry.data());
  }
  envp.push_back(nullptr);
  const std::string exec_failed = spec_.name + ": execve " + launch.argv[0] + " failed\n";

  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) throw std::system_error(errno, std::generic_category(), "fork " + spec_.name);
  if (child == 0) {
    // Only async-signal-safe calls until exec: other threads of the test process may have held
    // locks (malloc's included) at the moment of fork. The death signal is set before checking
    // the parent, so a parent that died in between is noticed.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(126);
    ::setpgid(0, 0);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // Test processes often ignore SIGPIPE; the broker starts with the default disposition.
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    ::sigaction(SIGPIPE, &default_action, nullptr);
    const int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    const int null = ::open("/dev/null", O_RDONLY);
    if (log < 0 || null < 0 || ::dup2(null, STDIN_FILENO) < 0 || ::dup2(log, STDOUT_FILENO) < 0 ||
        ::dup2(log, STDERR_FILENO) < 0 || ::chdir(dir_.c_str()) != 0) {
      ::_exit(126);
    }
    // Sockets of the test's clients must not stay open in the broker, or closing them in the test
    // would not close the connection.
    ::closefrom(3);
    ::execve(argv[0], argv.data(), envp.data());
    [[maybe_unused]] const ssize_t written =
        ::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    ::_exit(127);
  }
  ::setpgid(child, child);  // also here: a signal sent before the child ran setpgid finds the group
  pid_ = child;
}

void BrokerProcess::reap(int signal_number, bool escalate) {
  if (pid_ <= 0) return;
  signal_process(pid_, signal_number);
  bool reaped = false;
  if (escalate) {
    const auto deadline = Clock::now() + spec_.stop_grace;
    while (!reaped && Clock::now() < deadline) {
      const pid_t r = ::waitpid(pid_, nullptr, WNOHANG);
      reaped = r == pid_ || (r < 0 && errno != EINTR);
      if (!reaped) std::this_thread::sleep_for(kStopPoll);
    }
    if (!reaped) signal_process(pid_, SIGKILL);
  }
  while (!reaped && ::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  // Whatever the process left in its group (children of a wrapper script) goes too. The group
  // keeps its id reserved while it has members, so this never reaches a stranger.
  ::kill(-pid_, SIGKILL);
  pid_ = -1;
}

void BrokerFixture::start(BrokerProcess::Spec spec) {
  const auto started = Clock::now();
  node_.emplace(std::move(spec));
  started_in_ = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
}

void BrokerFixture::restart() {
  const auto started = Clock::now();
  node_->start();
  started_in_ = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
}

}  // namespace babelqueue::testing
