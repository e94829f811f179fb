// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace babelqueue::kafka::detail {

/// The KFK-11 bookkeeping of one consumer: per assigned partition, the offsets handed out and not
/// settled yet, and the position that may be committed. Every hand-out carries an epoch, renewed
/// when the partition is (re)assigned or rewound, so that a settlement of a delivery the consumer
/// took back is recognised as stale.
///
/// Thread-safety: not thread-safe; the owner serialises every call.
class OffsetTracker {
 public:
  /// Starts tracking `partition` (a new assignment): nothing outstanding, nothing committed.
  void assign(std::int32_t partition) {
    Partition p;
    p.epoch = ++epochs_;
    partitions_[partition] = std::move(p);
  }
  /// Stops tracking `partition`: its outstanding deliveries become stale.
  void revoke(std::int32_t partition) { partitions_.erase(partition); }
  [[nodiscard]] bool assigned(std::int32_t partition) const {
    return partitions_.contains(partition);
  }

  /// Records that `offset` was handed out; its epoch, or nullopt when `partition` is not assigned.
  std::optional<std::uint64_t> hand_out(std::int32_t partition, std::int64_t offset) {
    const auto it = partitions_.find(partition);
    if (it == partitions_.end()) return std::nullopt;
    Partition& p = it->second;
    auto& out = p.outstanding;
    if (out.empty() || out.back().first < offset) {
      out.emplace_back(offset, p.epoch);  // the usual case: offsets come in order
    } else {
      const auto at = find(out, offset);
      if (at != out.end() && at->first == offset) {
        at->second = p.epoch;
      } else {
        out.emplace(at, offset, p.epoch);
      }
    }
    if (p.start < 0) p.start = offset;
    if (offset + 1 > p.next) p.next = offset + 1;
    return p.epoch;
  }

  /// Settles one hand-out; false when it is stale (partition revoked, offset rewound, or settled
  /// already).
  bool settle(std::int32_t partition, std::int64_t offset, std::uint64_t epoch) {
    const auto it = partitions_.find(partition);
    if (it == partitions_.end()) return false;
    auto& outstanding = it->second.outstanding;
    if (!outstanding.empty() && outstanding.front().first == offset) {
      // The usual case, settled in order: no search.
      if (outstanding.front().second != epoch) return false;
      outstanding.pop_front();
      return true;
    }
    const auto at = find(outstanding, offset);
    if (at == outstanding.end() || at->first != offset || at->second != epoch) return false;
    outstanding.erase(at);
    return true;
  }

  /// Takes back every hand-out at or after `offset` (KFK-12); false when not assigned.
  bool rewind(std::int32_t partition, std::int64_t offset) {
    const auto it = partitions_.find(partition);
    if (it == partitions_.end()) return false;
    Partition& p = it->second;
    p.outstanding.erase(find(p.outstanding, offset), p.outstanding.end());
    p.epoch = ++epochs_;
    if (p.next > offset) p.next = offset;
    return true;
  }

  /// Hand-outs of `partition` not settled yet.
  [[nodiscard]] std::size_t outstanding_total() const {
    std::size_t n = 0;
    for (const auto& [partition, p] : partitions_)
      n += p.outstanding.size();
    return n;
  }
  [[nodiscard]] std::size_t outstanding(std::int32_t partition) const {
    const auto it = partitions_.find(partition);
    return it == partitions_.end() ? 0 : it->second.outstanding.size();
  }

  /// The committable position of `partition`: its lowest unsettled offset, else the highest
  /// handed out + 1; nullopt when nothing was handed out or not assigned.
  [[nodiscard]] std::optional<std::int64_t> position(std::int32_t partition) const {
    const auto it = partitions_.find(partition);
    if (it == partitions_.end()) return std::nullopt;
    const Partition& p = it->second;
    if (!p.outstanding.empty()) return p.outstanding.front().first;
    if (p.next < 0) return std::nullopt;
    return p.next;
  }

  /// (partition, position) of every partition whose position moved past its last commit (or,
  /// before any commit, past the first offset handed out: committing that would say nothing).
  [[nodiscard]] std::vector<std::pair<std::int32_t, std::int64_t>> uncommitted() const {
    std::vector<std::pair<std::int32_t, std::int64_t>> out;
    for (const auto& [partition, p] : partitions_) {
      const auto pos = position(partition);
      if (!pos || *pos == p.committed || (p.committed < 0 && *pos == p.start)) continue;
      out.emplace_back(partition, *pos);
    }
    return out;
  }

  /// (partition, position) of every partition with a commit on record (sent or being sent).
  [[nodiscard]] std::vector<std::pair<std::int32_t, std::int64_t>> last_commits() const {
    std::vector<std::pair<std::int32_t, std::int64_t>> out;
    for (const auto& [partition, p] : partitions_) {
      if (p.committed >= 0) out.emplace_back(partition, p.committed);
    }
    return out;
  }

  /// Notes that `position` of `partition` was committed (or is being committed).
  void committed(std::int32_t partition, std::int64_t position) {
    const auto it = partitions_.find(partition);
    if (it != partitions_.end()) it->second.committed = position;
  }
  /// Forgets the last commit of `partition` (it failed), so the next commit sends it again.
  void uncommit(std::int32_t partition) { committed(partition, -1); }

 private:
  // (offset, epoch) of the hand-outs not settled yet, ascending by offset: a deque, not a map,
  // because offsets are handed out in order and settled mostly from the front (no allocation per
  // record).
  using Outstanding = std::deque<std::pair<std::int64_t, std::uint64_t>>;

  struct Partition {
    std::uint64_t epoch = 0;
    Outstanding outstanding;
    std::int64_t start = -1;
    std::int64_t next = -1;
    std::int64_t committed = -1;
  };
  // The first hand-out at or after `offset`.
  static Outstanding::iterator find(Outstanding& out, std::int64_t offset) {
    return std::lower_bound(out.begin(), out.end(), offset,
                            [](const auto& entry, std::int64_t o) { return entry.first < o; });
  }

  std::map<std::int32_t, Partition> partitions_;
  std::uint64_t epochs_ = 0;
};

}  // namespace babelqueue::kafka::detail
