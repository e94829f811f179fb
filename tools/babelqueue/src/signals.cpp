// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors

#include "signals.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace babelqueue::cli {
namespace {

int g_signal_pipe = -1;

extern "C" void forward_signal(int signal_number) {
  const int saved_errno = errno;
  const auto byte = static_cast<unsigned char>(signal_number);
  if (::write(g_signal_pipe, &byte, 1) < 0) {
    // Nothing to do: the pipe is non-blocking, and a full one already holds a signal.
  }
  errno = saved_errno;
}

}  // namespace

StopOnSignal::StopOnSignal(App& app) {
  if (::pipe2(fds_, O_CLOEXEC) != 0 || ::fcntl(fds_[1], F_SETFL, O_NONBLOCK) != 0) {
    throw std::system_error(errno, std::generic_category(), "cannot create the signal pipe");
  }
  g_signal_pipe = fds_[1];
  struct sigaction action = {};
  action.sa_handler = forward_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, &old_int_);
  ::sigaction(SIGTERM, &action, &old_term_);
  watcher_ = std::thread([this, &app] { watch(app); });
}

StopOnSignal::~StopOnSignal() {
  const unsigned char quit = 0;
  while (::write(fds_[1], &quit, 1) < 0 && errno == EINTR) {
  }
  watcher_.join();
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  g_signal_pipe = -1;
  ::close(fds_[0]);
  ::close(fds_[1]);
}

void StopOnSignal::watch(App& app) {
  for (;;) {
    unsigned char byte = 0;
    const ssize_t n = ::read(fds_[0], &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || byte == 0) return;
    int none = 0;
    if (signal_.compare_exchange_strong(none, byte)) {
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      app.stop();
    }
  }
}

}  // namespace babelqueue::cli
