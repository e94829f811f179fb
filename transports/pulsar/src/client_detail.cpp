// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "client_detail.hpp"

#include <utility>

namespace babelqueue::pulsar::detail {

std::exception_ptr broker_error(pb::ServerError code, const std::string& context,
                                const std::string& message) {
  const std::string text = "pulsar: " + context + ": " + pb::ServerError_Name(code) +
                           (message.empty() ? std::string() : ": " + message);
  switch (code) {
    case pb::AuthenticationError:
    case pb::AuthorizationError:
    case pb::InvalidTopicName:
    case pb::TopicNotFound:
    case pb::UnsupportedVersionError:
    case pb::IncompatibleSchema:
    case pb::NotAllowedError:
      return std::make_exception_ptr(ConfigError(text));
    case pb::TopicTerminatedError:
    case pb::ProducerFenced:
      return std::make_exception_ptr(TransportError(text, false));
    default:
      return std::make_exception_ptr(TransportError(text, true));
  }
}

std::uint64_t PendingSends::add(Callback done) {
  const std::uint64_t sequence = next_++;
  pending_.emplace(sequence, std::move(done));
  return sequence;
}

bool PendingSends::receipt(std::uint64_t sequence, const pb::MessageIdData& id) {
  const auto found = pending_.find(sequence);
  if (found == pending_.end()) return false;
  Callback done = std::move(found->second);
  pending_.erase(found);
  done(&id, nullptr);
  return true;
}

bool PendingSends::fail(std::uint64_t sequence, std::exception_ptr error) {
  const auto found = pending_.find(sequence);
  if (found == pending_.end()) return false;
  Callback done = std::move(found->second);
  pending_.erase(found);
  done(nullptr, std::move(error));
  return true;
}

void PendingSends::fail_all(const std::exception_ptr& error) {
  std::map<std::uint64_t, Callback> failing;
  failing.swap(pending_);
  for (auto& [sequence, done] : failing)
    done(nullptr, error);
}

}  // namespace babelqueue::pulsar::detail
