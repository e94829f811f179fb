// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The `babelqueue work --exec` handler: one /bin/sh -c per delivery.

#include "exec.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace babelqueue::cli {
namespace {

// Closes a file descriptor on every path out of run_command.
class Fd {
 public:
  explicit Fd(int fd) noexcept : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const noexcept { return fd_; }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

Status command_error(const std::string& what) {
  return Error(ErrorCode::Handler, what);
}

// "NAME=VALUE" strings: the inherited environment minus stale header variables, then the
// delivery's headers.
std::vector<std::string> command_environment(const Headers& headers) {
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (text.substr(0, kHeaderEnvPrefix.size()) != kHeaderEnvPrefix) env.emplace_back(text);
  }
  std::set<std::string, std::less<>> taken;
  for (const auto& [name, value] : headers) {
    std::string variable = header_variable(name);
    if (value.find('\0') != std::string::npos || !taken.insert(variable).second) continue;
    env.push_back(variable + "=" + value);
  }
  return env;
}

}  // namespace

std::string header_variable(std::string_view name) {
  std::string out(kHeaderEnvPrefix);
  for (const char ch : name) {
    if (ch >= 'a' && ch <= 'z') {
      out.push_back(static_cast<char>(ch - 'a' + 'A'));
    } else if ((ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) {
      out.push_back(ch);
    } else {
      out.push_back('_');
    }
  }
  return out;
}

Status run_command(const std::string& command, std::string_view input, const Headers& headers) {
  int fds[2];
  // O_CLOEXEC: a command started by another worker thread must not inherit this write end, or
  // our command would never see end-of-file.
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return command_error(std::string("--exec: cannot create a pipe: ") + std::strerror(errno));
  }
  Fd read_end(fds[0]);
  Fd write_end(fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, read_end.get(), STDIN_FILENO);
  // Broker connections need not be close-on-exec; the command has no business with them.
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);  // ignored here (open_transport_of); a shell expects the default
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> env_storage = command_environment(headers);
  std::vector<char*> env;
  env.reserve(env_storage.size() + 1);
  for (std::string& entry : env_storage)
    env.push_back(entry.data());
  env.push_back(nullptr);
  std::string sh = "sh";
  std::string dash_c = "-c";
  std::string script = command;
  char* argv[] = {sh.data(), dash_c.data(), script.data(), nullptr};
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  read_end.reset();
  if (spawned != 0) {
    return command_error(std::string("--exec: cannot start /bin/sh: ") + std::strerror(spawned));
  }

  // A command that exits without reading its input is judged by its exit status alone (EPIPE).
  while (!input.empty()) {
    const ssize_t n = ::write(write_end.get(), input.data(), input.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    input.remove_prefix(static_cast<std::size_t>(n));
  }
  write_end.reset();

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return command_error(std::string("--exec: waitpid failed: ") + std::strerror(errno));
    }
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  if (WIFEXITED(status)) {
    return command_error("--exec command exited with status " +
                         std::to_string(WEXITSTATUS(status)));
  }
  if (WIFSIGNALED(status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(status));
    return command_error("--exec command was killed by signal " + std::to_string(WTERMSIG(status)) +
                         (name != nullptr ? std::string(" (SIG") + name + ")" : std::string()));
  }
  return command_error("--exec command ended with wait status " + std::to_string(status));
}

}  // namespace babelqueue::cli
