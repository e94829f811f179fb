// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// The `babelqueue` binary as a child process of a test: stdin /dev/null, stdout and stderr in
// temporary files, its exit status; and the queue commands every transport's CLI test runs.
// The including test defines BABELQUEUE_CLI (the binary's path, from
// $<TARGET_FILE:babelqueue>).

#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/json.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <ostream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#ifndef BABELQUEUE_CLI
#error "BABELQUEUE_CLI must be the path of the babelqueue binary"
#endif

namespace babelqueue::cli::test {

// Long enough for a loaded shared machine; a command that takes this long is hung.
inline constexpr std::chrono::seconds kCommandLimit{120};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

// A temporary file that the child writes to and the test reads; removed at the end.
class TempFile {
 public:
  TempFile() : path_(::testing::TempDir() + "babelqueue-cli-XXXXXX") {
    fd_ = ::mkostemp(path_.data(), O_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error("mkostemp failed for " + path_);
  }
  ~TempFile() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string contents() const { return read_file(path_); }

 private:
  std::string path_;
  int fd_ = -1;
};

// The babelqueue binary running with `args`. With `own_group` it leads a process group of its
// own (pgid = pid), so that kill_group() also ends the commands it runs (`work --exec`).
// A child still running at destruction is SIGKILLed by its PID (with `own_group`, its group)
// and reaped.
class CliProcess {
 public:
  explicit CliProcess(const std::vector<std::string>& args, bool own_group = false)
      : own_group_(own_group) {
    std::vector<std::string> argv_storage = {BABELQUEUE_CLI};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_storage)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_.fd(), STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err_.fd(), STDERR_FILENO);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    if (own_group_) {
      posix_spawnattr_setpgroup(&attributes, 0);
      posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    }
    const int rc = ::posix_spawn(&pid_, argv[0], &actions, &attributes, argv.data(), environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error(std::string("cannot start ") + BABELQUEUE_CLI);
  }
  ~CliProcess() {
    if (pid_ > 0) {
      ::kill(own_group_ ? -pid_ : pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] std::string out() const { return out_.contents(); }
  [[nodiscard]] std::string err() const { return err_.contents(); }

  // SIGKILL to the process group it leads (the CLI and what it runs), then reaps the CLI.
  // Needs `own_group`.
  void kill_group() {
    if (!own_group_) throw std::logic_error("kill_group() of a CliProcess without its own group");
    if (pid_ <= 0) return;
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  // The exit status (128 + N when killed by signal N); nullopt, after a SIGKILL, when the
  // child did not end within `limit`.
  std::optional<int> wait(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    for (;;) {
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) break;
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;  // dtor kills it
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  TempFile out_;
  TempFile err_;
  bool own_group_ = false;
  pid_t pid_ = -1;
};

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::ostream& operator<<(std::ostream& os, const CliRun& r) {
  return os << "exit " << r.exit_code << "\n--- stdout ---\n"
            << r.out << "--- stderr ---\n"
            << r.err;
}

// Runs the binary with `args` to its end (a failure after kCommandLimit).
inline CliRun run_cli(const std::vector<std::string>& args) {
  CliProcess p(args);
  const std::optional<int> code = p.wait(kCommandLimit);
  if (!code) ADD_FAILURE() << "babelqueue did not end within " << kCommandLimit.count() << " s";
  return CliRun{code.value_or(-1), p.out(), p.err()};
}

inline constexpr const char* kCliUrn = "urn:babel:orders:created";

// `publish --url URL --queue QUEUE [extra...] kCliUrn DATA`, which must exit 0 and print a UUID
// v4; the printed meta.id.
inline std::string publish_via_cli(const std::string& url, const std::string& queue,
                                   const std::vector<std::string>& extra = {},
                                   const std::string& data = R"({"order_id":1042})") {
  std::vector<std::string> args = {"publish", "--url", url, "--queue", queue};
  args.insert(args.end(), extra.begin(), extra.end());
  args.emplace_back(kCliUrn);
  args.push_back(data);
  const CliRun r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r;
  static const std::regex uuid(
      "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\n");
  EXPECT_TRUE(std::regex_match(r.out, uuid)) << r;
  return r.out.substr(0, r.out.empty() ? 0 : r.out.size() - 1);
}

// `queue stats --url URL --queue QUEUE --json [extra...]`, parsed (null after a failure).
inline Json stats_via_cli(const std::string& url, const std::string& queue,
                          const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"queue", "stats", "--url", url, "--queue", queue, "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const CliRun r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r;
  auto parsed = Json::try_parse(r.out);
  if (!parsed) {
    ADD_FAILURE() << "queue stats --json printed no JSON: " << r;
    return Json();
  }
  return std::move(parsed).value();
}

// The count `name` of a `queue stats --json` object; -1 when absent or not an integer.
inline long long count_of(const Json& stats, std::string_view name) {
  const Json* v = stats.find(name);
  return v != nullptr && v->as_int64() ? *v->as_int64() : -1;
}

// Publishes one message to `queue` and lets `work --exec 'exit 3'` fail it twice (max attempts
// 2), so that it is dead-lettered to the transport's default dead-letter queue `dlq` (empty:
// QUEUE.dlq); its meta.id.
inline std::string dead_lettered_via_cli(const std::string& url, const std::string& queue,
                                         const std::string& dlq = {}) {
  const std::string id = publish_via_cli(url, queue);
  const CliRun r = run_cli({"work", "--url", url, "--queue", queue, "--drain", "--exec", "exit 3",
                            "--max-attempts", "2", "--dead-letter"});
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(
      r.err.find("0 handled, 2 failed, 1 dead-lettered to " + (dlq.empty() ? queue + ".dlq" : dlq)),
      std::string::npos)
      << r;
  return id;
}

// Runs `dlq list` (by --queue, and by --dlq with --json) after dead_lettered_via_cli() left the
// one record `id` in QUEUE.dlq, and expects both to show it (reason `failed`, original queue).
inline void expect_dlq_lists_the_record(const std::string& url, const std::string& queue,
                                        const std::string& id) {
  const CliRun list = run_cli({"dlq", "list", "--url", url, "--queue", queue});
  EXPECT_EQ(list.exit_code, 0) << list;
  EXPECT_EQ(list.out, id + "\tfailed\t--exec command exited with status 3\n");
  const CliRun json = run_cli({"dlq", "list", "--url", url, "--dlq", queue + ".dlq", "--json"});
  EXPECT_EQ(json.exit_code, 0) << json;
  const std::vector<std::string> lines = lines_of(json.out);
  ASSERT_EQ(lines.size(), 1U) << json;
  const Envelope record = decode(lines[0]);
  ASSERT_TRUE(record.dead_letter().has_value());
  EXPECT_EQ(record.dead_letter()->original_queue, queue);
}

// Runs `dlq redrive --url URL --queue QUEUE` after dead_lettered_via_cli() left the one record
// `id` in QUEUE.dlq, and expects it to say it moved that record back.
inline void redrive_one_via_cli(const std::string& url, const std::string& queue,
                                const std::string& id) {
  const CliRun r = run_cli({"dlq", "redrive", "--url", url, "--queue", queue});
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "redriven " + id + " " + kCliUrn + " " + queue + ".dlq -> " + queue + "\n" +
                       "1 redriven, 0 kept in " + queue + ".dlq\n");
}

// Expects `body` to be the redriven copy of the record `id`: its envelope again, without the
// dead_letter block and with attempts 0.
inline void expect_redriven_copy(const std::string& body, const std::string& id) {
  const Envelope env = decode(body);
  EXPECT_EQ(env.meta().id, id);
  EXPECT_FALSE(env.dead_letter().has_value());
  EXPECT_EQ(env.attempts(), 0);
}

}  // namespace babelqueue::cli::test
