// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// The SQS message on the wire: request bodies (written with append_json_string), the SQS-8
// checks before a send, and the messages of a ReceiveMessage response (SQS-10, SQS-11).

#include <babelqueue/binding/sqs.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/transport.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::sqs::detail {

/// SQS's limit on a message (body + attribute names, types and values), and on the sum of the
/// messages of one SendMessageBatch: 1 MiB.
inline constexpr std::size_t kMaxMessageBytes = 1'048'576;

/// A JSON object written member by member.
///
/// Thread-safety: a local value.
class JsonBody {
 public:
  JsonBody& str(std::string_view name, std::string_view value);
  JsonBody& num(std::string_view name, std::int64_t value);
  /// `json` must already be valid JSON.
  JsonBody& raw(std::string_view name, std::string_view json);
  [[nodiscard]] std::string done();

 private:
  void key(std::string_view name);
  std::string out_ = "{";
};

/// SQS-7 ids of a FIFO send.
struct FifoIds {
  std::string group;
  /// Empty: none (the queue's content-based deduplication).
  std::string dedup;
};

/// The SendMessage members of one message (MessageBody, MessageAttributes, the FIFO ids and
/// DelaySeconds when > 0), appended to `body`.
void add_message(JsonBody& body, std::string_view message,
                 const std::vector<binding::sqs::Attribute>& attributes,
                 const std::optional<FifoIds>& fifo, int delay_seconds);

/// Bytes SQS counts for a message (body + every attribute's name, type and value).
[[nodiscard]] std::size_t message_size(std::string_view message,
                                       const std::vector<binding::sqs::Attribute>& attributes);

/// SQS-8: nullopt when `message` and its attributes are valid UTF-8 of XML characters (#x9,
/// #xA, #xD, #x20-#xD7FF, #xE000-#xFFFD, #x10000-#x10FFFF) and at most 1 MiB together; else an
/// EncodeError naming the problem and its byte offset.
[[nodiscard]] std::optional<Error> check_sendable(
    std::string_view message, const std::vector<binding::sqs::Attribute>& attributes);

/// Standard base64 (RFC 4648, padded); nullopt when `text` is not.
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view text);

/// One message of a ReceiveMessage response.
struct Incoming {
  std::string message_id;
  std::string receipt_handle;
  std::string body;
  /// Every attribute with a StringValue (OB-4; Binary attributes are skipped).
  Headers headers;
  /// The ApproximateReceiveCount system attribute.
  std::optional<std::string> receive_count;
  /// `bq-schema-version`: its StringValue whatever the DataType, or a Binary value's bytes
  /// (SQS-11).
  std::optional<std::string> schema_version;
};

/// The messages of `response`; an entry without a Body or ReceiptHandle is counted in
/// `skipped` and left out.
[[nodiscard]] std::vector<Incoming> parse_messages(const Json& response, std::size_t& skipped);

/// The string member `name` of `object`, or nullptr.
[[nodiscard]] const std::string* string_member(const Json& object, std::string_view name);

/// A JSON array of the strings `items`.
[[nodiscard]] std::string string_array(std::initializer_list<std::string_view> items);

/// `entries` (JSON objects) with the member "Id" = their position ("0".."9") put first: the
/// Entries of a batch request.
[[nodiscard]] std::string batch_entries(const std::vector<std::string>& entries);

/// A failed entry of a batch response.
struct EntryFailure {
  bool sender_fault = false;
  std::string code;
  std::string message;
};

/// What a batch response (`Successful`, `Failed`) says of each of the `count` entries of its
/// request (ids "0".."count-1").
///
/// Thread-safety: a value type.
class BatchResult {
 public:
  BatchResult(const Json& response, std::size_t count);
  /// nullptr when entry `i` succeeded. An entry named in neither list failed, not by the
  /// sender's fault (it is worth resending).
  [[nodiscard]] const EntryFailure* failure(std::size_t i) const;

 private:
  std::vector<std::optional<EntryFailure>> entries_;
};

}  // namespace babelqueue::sqs::detail
