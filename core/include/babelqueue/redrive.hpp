// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/envelope.hpp>
#include <babelqueue/errors.hpp>
#include <babelqueue/export.hpp>
#include <babelqueue/transport.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// Operator tooling that moves dead-lettered messages back for reprocessing, optionally marked
/// as replays (ADR-0026, ADR-0027; 02-runtime HLP-20..HLP-25). The consumer side of a replay,
/// `Context::is_replay()` and `bypass_external_effects()`, lives in app.hpp.

namespace babelqueue {

/// The value `redrive` stamps into the `bq-replay-bypass` header (`REPLAY_BYPASS_HEADER`).
inline constexpr std::string_view REPLAY_BYPASS_VALUE = "1";

/// Options of `redrive` (HLP-20).
struct RedriveOptions {
  /// Where to re-publish. Blank (empty or only whitespace): each message's
  /// `dead_letter.original_queue`, else its `meta.queue`. Set it to a sandbox queue to replay
  /// safely.
  std::string to_queue = {};
  /// How many messages to take off the dead-letter queue; 0 = all currently available.
  std::size_t max = 0;
  /// Report the plan without re-publishing: every message is restored unchanged and its item
  /// carries the planned `to`.
  bool dry_run = false;
  /// When set, only messages for which it returns true are redriven; the others are restored.
  /// Called on the decoded envelope (its `dead_letter` block included), never for poison
  /// records or identity-less entries. A throwing `select` stops the run like a failed publish.
  std::function<bool(const Envelope&)> select = {};
  /// Stamp `bq-replay-bypass: 1` on the re-published message so that handlers skip external
  /// effects (HLP-25). Effective only on a HeaderPublisher transport; elsewhere a no-op
  /// (`RedriveItem::bypassed` stays false, RT-51).
  bool bypass = false;
  /// Timeout of each `pop`. Negative: the default 1 s; zero: do not wait.
  std::chrono::milliseconds timeout{1000};
  /// Observes a failed acknowledgement of a dead-letter delivery after it was redriven or
  /// restored. The run goes on: the delivery stays reserved and the broker redelivers it to the
  /// dead-letter queue later, so a later redrive may re-publish it once more (handlers are
  /// idempotent, HLP-1). Exceptions thrown by the callback are ignored.
  std::function<void(const ReceivedMessage&, const Error&)> on_ack_error = {};
};

/// What happened to one dead-letter delivery.
struct RedriveItem {
  /// `meta.id` (empty when absent or the body is undecodable).
  std::string message_id;
  std::string trace_id;
  /// The resolved URN (empty when identity-less or undecodable).
  std::string urn;
  /// `dead_letter.reason` (empty when the block is absent).
  std::string reason;
  /// The dead-letter queue it was read from.
  std::string from;
  /// The target queue: where it went, or on a dry run where it would go. Empty when the
  /// message was restored before a target was chosen (undecodable, poison record,
  /// identity-less, not selected, no target).
  std::string to;
  /// True only when it was re-published to `to`.
  bool redriven = false;
  /// True when it was re-published with the replay-bypass header.
  bool bypassed = false;

  friend bool operator==(const RedriveItem&, const RedriveItem&) = default;
};

/// The outcome of a `redrive` run: counts, one item per settled delivery, and how it ended.
///
/// Invariant: `redriven + skipped == items.size()`; items are in the order the deliveries were
/// popped. A delivery that was popped but neither redriven nor restored (see `redrive`, restore
/// failure) has no item.
struct RedriveResult {
  /// Deliveries re-published and acknowledged.
  std::size_t redriven = 0;
  /// Deliveries written back to the dead-letter queue unchanged (restored).
  std::size_t skipped = 0;
  std::vector<RedriveItem> items;
  /// Ok, or the error that stopped the run (the counts and items are still valid then).
  Status status;

  [[nodiscard]] bool ok() const noexcept { return status.ok(); }
};

/// Moves dead-lettered messages from `dead_letter_queue` back for reprocessing (HLP-20).
///
/// First drains: pops (with `options.timeout`) until nothing arrives or `options.max` messages
/// were taken, decoding each. Then settles each delivery in pop order:
/// - undecodable -> restored, skipped, item with only `from`;
/// - a poison record (`dead_letter.reason == "poison"`) or an identity-less envelope (URN "")
///   -> restored, skipped (C++ decision: such a record is never replayed as an envelope);
/// - `select` returns false -> restored, skipped;
/// - `dry_run` -> restored, skipped; the item carries the planned `to`;
/// - no target (blank `to_queue`, no `dead_letter.original_queue`, no `meta.queue`) -> restored,
///   skipped (C++ decision);
/// - otherwise reset (the `dead_letter` block dropped, `attempts` = 0; job, trace_id, data,
///   meta and unknown members kept; forbidden members are dropped by decode) and re-published
///   to the target, then acknowledged -> redriven. With `bypass` on a HeaderPublisher the
///   publish carries `bq-replay-bypass: 1` (item `bypassed`); otherwise a KeyedRepublisher
///   re-publishes it with the delivery's record key; otherwise plain `publish`.
///
/// Restore = write the ORIGINAL bytes back to `dead_letter_queue`, then acknowledge the delivery
/// (not when `Restorer::restores_in_place`: the restore itself put the delivery back).
/// The write uses, in order of preference: `Restorer::restore` (bytes, headers and key);
/// `KeyedRepublisher::republish` (bytes and key; headers only if that transport copies them
/// from the source); `HeaderPublisher::publish_with_headers` when the delivery had headers;
/// `publish`. Because the batch is drained first, restored messages are not met again in the
/// same run.
///
/// Failures (C++ decisions) never throw; they end up in `RedriveResult::status`:
/// - a failed re-publish (or re-encode, or a throwing `select`) restores that delivery and every
///   not-yet-settled delivery of the batch, then the run stops with that error;
/// - a failed `pop` while draining stops the drain, restores everything popped so far, then the
///   run stops with the pop error;
/// - a failed restore write is not acknowledged: the delivery is rewound when the transport is
///   a Rewinder (Kafka seeks back so a later commit cannot skip it) and the run stops at once
///   with the write error. The deliveries not settled yet are left unacknowledged: the broker's
///   reservation rules redeliver them (on the in-memory transport an unacknowledged message is
///   gone, RT-5);
/// - a failed acknowledgement is reported to `options.on_ack_error` and the run goes on;
/// - a blank `dead_letter_queue` is ErrorCode::Usage, before anything is popped.
///
/// Thread-safety: uses `transport` from the calling thread only (as one consumer of
/// `dead_letter_queue`); do not consume that queue elsewhere during the run.
[[nodiscard]] BABELQUEUE_EXPORT RedriveResult redrive(Transport& transport,
                                                      std::string_view dead_letter_queue,
                                                      const RedriveOptions& options = {});

}  // namespace babelqueue
