// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors

#include "scripts.hpp"

#include <string>

namespace babelqueue::redis::detail {
namespace {

bool is_noscript(const redisReply* r) {
  return r->type == REDIS_REPLY_ERROR && str(r).substr(0, 8) == "NOSCRIPT";
}

}  // namespace

Status Scripts::load(Connection& c) {
  std::lock_guard lock(mu_);
  if (loaded_.load(std::memory_order_acquire)) return {};
  for (std::string_view source : sources_)
    c.append({"SCRIPT", "LOAD", source});
  std::vector<std::string> sha(sources_.size());
  for (std::size_t i = 0; i < sources_.size(); ++i) {
    auto r = c.read();
    if (!r) return r.error();
    if ((*r)->type != REDIS_REPLY_STRING) return server_error("SCRIPT LOAD", r->get());
    sha[i] = std::string(str(r->get()));
  }
  sha_ = std::move(sha);
  loaded_.store(true, std::memory_order_release);
  return {};
}

Result<std::vector<ReplyPtr>> Scripts::run(Connection& c, const std::vector<Call>& calls) {
  if (!loaded_.load(std::memory_order_acquire)) {
    const Status st = load(c);
    if (!st) return st.error();
  }
  std::vector<std::string> numkeys(calls.size());
  Argv argv;
  auto append = [&](std::size_t i, bool by_source) {
    const Call& call = calls[i];
    argv.clear();
    if (call.script == kPlainCommand) {
      argv = call.args;
    } else {
      numkeys[i] = std::to_string(call.keys.size());
      argv.push_back(by_source ? "EVAL" : "EVALSHA");
      argv.push_back(by_source ? sources_[call.script] : std::string_view(sha_[call.script]));
      argv.push_back(numkeys[i]);
      argv.insert(argv.end(), call.keys.begin(), call.keys.end());
      argv.insert(argv.end(), call.args.begin(), call.args.end());
    }
    c.append(argv);
  };
  for (std::size_t i = 0; i < calls.size(); ++i)
    append(i, false);
  std::vector<ReplyPtr> replies;
  replies.reserve(calls.size());
  std::vector<std::size_t> missing;  // answered NOSCRIPT: the server lost its script cache
  for (std::size_t i = 0; i < calls.size(); ++i) {
    auto r = c.read();
    if (!r) return r.error();
    if (is_noscript(r->get())) missing.push_back(i);
    replies.push_back(std::move(*r));
  }
  // NOSCRIPT means the script did not run, so re-sending with EVAL, in order, keeps the order
  // of effects. EVAL also caches the script again for the next EVALSHA.
  for (std::size_t i : missing)
    append(i, true);
  for (std::size_t i : missing) {
    auto r = c.read();
    if (!r) return r.error();
    replies[i] = std::move(*r);
  }
  return replies;
}

}  // namespace babelqueue::redis::detail
