// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/testing/command.hpp>

#include <babelqueue/testing/broker_process.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <exception>
#include <stdexcept>
#include <system_error>
#include <utility>

extern char** environ;  // NOLINT: POSIX

namespace babelqueue::testing {
namespace {

// Closes a pipe end on every path out of run_command.
class Fd {
 public:
  Fd() = default;
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int* out() { return &fd_; }
  [[nodiscard]] int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

void make_pipe(Fd& read_end, Fd& write_end) {
  int fds[2];
  // Close-on-exec: a command another thread starts must not hold our ends open.
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  *read_end.out() = fds[0];
  *write_end.out() = fds[1];
}

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& env) {
  std::vector<std::string> out;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (!env.contains(std::string(text.substr(0, text.find('='))))) out.emplace_back(text);
  }
  for (const auto& [key, value] : env)
    out.push_back(key + "=" + value);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env, std::string_view input) {
  // A command that exits without reading its input makes the write fail with EPIPE instead.
  [[maybe_unused]] static const auto previous = std::signal(SIGPIPE, SIG_IGN);
  Fd stdin_read, stdin_write, out_read, out_write;
  make_pipe(stdin_read, stdin_write);
  make_pipe(out_read, out_write);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, stdin_read.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), STDERR_FILENO);
  // Sockets of the test's clients must not live on in the command.
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> args = argv;
  std::vector<std::string> env_strings = merged_environment(env);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, args.at(0).c_str(), &actions, &attributes,
                                    pointers(args).data(), pointers(env_strings).data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  stdin_read.reset();
  out_write.reset();
  if (spawned != 0) throw std::system_error(spawned, std::generic_category(), "spawn " + argv[0]);

  while (!input.empty()) {
    const ssize_t n = ::write(stdin_write.get(), input.data(), input.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    input.remove_prefix(static_cast<std::size_t>(n));
  }
  stdin_write.reset();

  CommandResult result;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(out_read.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buffer, static_cast<std::size_t>(n));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "waitpid");
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

Distribution fetch_distribution(std::string_view script, std::string_view dir) {
  Distribution d;
  CommandResult r;
  try {
    r = run_command({"/bin/bash", std::string(script), std::string(dir)});
  } catch (const std::exception& e) {
    d.reason = "cannot run " + std::string(script) + ": " + e.what();
    return d;
  }
  std::string output = std::move(r.output);
  while (!output.empty() && output.back() == '\n')
    output.pop_back();
  if (r.exit_code != 0) {
    d.reason = std::move(output);
    return d;
  }
  d.dir = output.substr(output.rfind('\n') + 1);
  return d;
}

JvmDistribution::JvmDistribution(std::string_view what, std::string_view configured_java,
                                 std::string_view script, std::string_view dist_dir)
    : java_(find_executable("java", configured_java)), dist_(fetch_distribution(script, dist_dir)) {
  if (!java_) {
    unavailable_ = std::string(what) +
                   " unavailable: java not found (configured at build time or on PATH); install "
                   "it (Debian: apt-get install default-jre-headless, see scripts/install-deps)";
  } else if (!dist_.dir) {
    unavailable_ = std::string(what) + " unavailable: it could not be fetched into " +
                   std::string(dist_dir) + ": " + dist_.reason;
  }
}

void JvmDistribution::require() const {
  if (unavailable_) throw std::runtime_error(*unavailable_);
}

const std::string& JvmDistribution::java() const {
  require();
  return *java_;
}

const std::string& JvmDistribution::dir() const {
  require();
  return *dist_.dir;
}

}  // namespace babelqueue::testing
