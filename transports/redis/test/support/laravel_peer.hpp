// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include "raw_client.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::redis::test {

// Plays a stock Laravel 10-13 Redis queue (RedisQueue with its Lua scripts) on one connection,
// as spec/03-redis.md §3.1 describes it: the same keys, the same script steps, the same scores.
// It is the other side of the interop tests, so it does exactly what Laravel does, including
// its ungated release and the loss of a head its pop script cannot decode.
//
// Scores are time(nullptr) seconds plus a delay, like Laravel's availableAt(). Migration always
// moves every due member (migration_batch_size -1, the default).
class LaravelPeer {
 public:
  // A reservation as RedisJob holds it.
  struct Job {
    // The popped head, byte for byte (getRawBody()).
    std::string raw_body;
    // The cjson re-encoding with attempts + 1 stored in :reserved (getReservedJob()).
    std::string reserved;
    // attempts(): the head's attempts + 1, so 1 on the first delivery.
    long long attempts_1based = 0;
  };

  // The fields of a queued-job payload that differ between jobs. Empty strings are filled in the
  // way Laravel fills them.
  struct PayloadFields {
    // Class name of the job, e.g. "App\\Jobs\\ProcessOrder" (one backslash each in PHP).
    std::string display_name = "App\\Jobs\\ProcessOrder";
    // serialize() of the job object; empty = an object of display_name without properties.
    std::string command = {};
    // Str::uuid(); empty = a random version 4 UUID.
    std::string uuid = {};
    // getRandomId() = Str::random(32); empty = 32 random alphanumerics.
    std::string id = {};
  };

  // `prefix` is the full key prefix: Laravel's client prefix + "queues:", for example
  // "laravel_database_queues:". `retry_after` nullopt is a RedisQueue constructed with null:
  // it never migrates :reserved and scores its own reservations at now.
  LaravelPeer(RawClient& client, std::string prefix, std::optional<int> retry_after = 90);

  std::string ready_key(std::string_view queue) const;
  std::string delayed_key(std::string_view queue) const;
  std::string reserved_key(std::string_view queue) const;
  std::string notify_key(std::string_view queue) const;

  // The payload RedisQueue::createPayload writes for a queued job object: compact JSON as PHP's
  // json_encode(..., JSON_UNESCAPED_UNICODE) prints it ("\/" for slashes), attempts 0.
  static std::string make_payload(const PayloadFields& fields);
  // make_payload() with every field defaulted (a separate overload: GCC rejects `= {}` for a
  // nested struct with member initializers inside the enclosing class).
  static std::string make_payload();

  // pushRaw(): RPUSH ready payload and RPUSH notify "1" in one script. push() of a Laravel job
  // and the BabelQueue Laravel driver's publish (the bare envelope) both end here.
  void push(std::string_view queue, std::string_view payload);
  // later(): ZADD :delayed now + delay_seconds payload, no notify token.
  void later(std::string_view queue, int delay_seconds, std::string_view payload);
  // pop(): migrate :delayed, then :reserved (unless retry_after is null), then the pop script.
  // nullopt when the ready list is empty. A head the pop script cannot decode makes it raise
  // after the LPOP: this throws std::runtime_error and, as in Laravel, the head is gone.
  std::optional<Job> pop(std::string_view queue);
  // delete(): ZREM :reserved job.reserved.
  void remove(std::string_view queue, const Job& job);
  // release(): one script, ZREM :reserved job.reserved and ZADD :delayed now + delay_seconds
  // the same reserved bytes. Not gated, as in Laravel.
  void release(std::string_view queue, const Job& job, int delay_seconds);

 private:
  Reply eval(std::string_view script, std::vector<std::string> keys, std::vector<std::string> args);
  void migrate(const std::string& from, std::string_view queue);

  RawClient& client_;
  std::string prefix_;
  std::optional<int> retry_after_;
};

}  // namespace babelqueue::redis::test
