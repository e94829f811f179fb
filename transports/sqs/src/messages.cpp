// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Message bodies and attributes of the JSON protocol (SQS-6..SQS-11).

#include "messages.hpp"

#include <babelqueue/spi/text.hpp>

#include <openssl/evp.h>

#include <charconv>
#include <cstdio>

namespace babelqueue::sqs::detail {
namespace {

// The code point at `s[i]` and its length; nullopt for invalid UTF-8 (overlong forms,
// surrogates, beyond U+10FFFF, truncated).
struct CodePoint {
  char32_t value;
  std::size_t length;
};

std::optional<CodePoint> decode_utf8(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return CodePoint{b0, 1};
  std::size_t length = 0;
  char32_t value = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    length = 2, value = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    length = 3, value = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    length = 4, value = b0 & 0x07, min = 0x10000;
  } else {
    return std::nullopt;
  }
  if (i + length > s.size()) return std::nullopt;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return std::nullopt;
    value = (value << 6) | (byte(i + k) & 0x3F);
  }
  if (value < min || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return std::nullopt;
  return CodePoint{value, length};
}

bool xml_char(char32_t c) noexcept {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

std::optional<Error> check_text(std::string_view what, std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto cp = decode_utf8(text, i);
    if (!cp) {
      return EncodeError("sqs: " + std::string(what) + " is not valid UTF-8 at byte " +
                         std::to_string(i) +
                         " (SQS accepts only XML characters; nothing was sent)");
    }
    if (!xml_char(cp->value)) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(cp->value));
      return EncodeError("sqs: " + std::string(what) + " has the character " + hex +
                         ", which SQS does not accept (not an XML character), at byte " +
                         std::to_string(i) + "; nothing was sent");
    }
    i += cp->length;
  }
  return std::nullopt;
}

// The position an entry of a batch response names by its Id ("0".."count-1").
std::optional<std::size_t> entry_index(const Json& entry, std::size_t count) {
  const std::string* id = string_member(entry, "Id");
  if (id == nullptr) return std::nullopt;
  std::size_t index = 0;
  const auto [end, ec] = std::from_chars(id->data(), id->data() + id->size(), index);
  if (ec != std::errc() || end != id->data() + id->size() || index >= count) return std::nullopt;
  return index;
}

}  // namespace

const std::string* string_member(const Json& object, std::string_view name) {
  const Json* v = object.find(name);
  return v != nullptr && v->is_string() ? &v->as_string() : nullptr;
}

std::string string_array(std::initializer_list<std::string_view> items) {
  std::string out = "[";
  for (const std::string_view item : items) {
    if (out.size() > 1) out += ',';
    append_json_string(out, item);
  }
  out += ']';
  return out;
}

std::string batch_entries(const std::vector<std::string>& entries) {
  std::string out = "[";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) out += ',';
    out += R"({"Id":")";
    out += std::to_string(i);
    out += '"';
    if (entries[i].size() > 2) out += ',';
    out.append(entries[i], 1);
  }
  out += ']';
  return out;
}

BatchResult::BatchResult(const Json& response, std::size_t count)
    : entries_(count, EntryFailure{false, "", "not in the response"}) {
  if (const Json* ok = response.find("Successful"); ok != nullptr && ok->is_array()) {
    for (const Json& s : ok->as_array()) {
      if (const auto i = entry_index(s, count)) entries_[*i].reset();
    }
  }
  if (const Json* failed = response.find("Failed"); failed != nullptr && failed->is_array()) {
    for (const Json& f : failed->as_array()) {
      const auto i = entry_index(f, count);
      if (!i) continue;
      EntryFailure e;
      const Json* fault = f.find("SenderFault");
      e.sender_fault = fault == nullptr || !fault->is_bool() || fault->as_bool();
      if (const std::string* c = string_member(f, "Code")) e.code = *c;
      if (const std::string* m = string_member(f, "Message")) e.message = m->substr(0, 200);
      entries_[*i] = std::move(e);
    }
  }
}

const EntryFailure* BatchResult::failure(std::size_t i) const {
  return entries_[i] ? &*entries_[i] : nullptr;
}

void JsonBody::key(std::string_view name) {
  if (out_.size() > 1) out_ += ',';
  append_json_string(out_, name);
  out_ += ':';
}

JsonBody& JsonBody::str(std::string_view name, std::string_view value) {
  key(name);
  append_json_string(out_, value);
  return *this;
}

JsonBody& JsonBody::num(std::string_view name, std::int64_t value) {
  key(name);
  out_ += std::to_string(value);
  return *this;
}

JsonBody& JsonBody::raw(std::string_view name, std::string_view json) {
  key(name);
  out_ += json;
  return *this;
}

std::string JsonBody::done() {
  out_ += '}';
  return std::move(out_);
}

void add_message(JsonBody& body, std::string_view message,
                 const std::vector<binding::sqs::Attribute>& attributes,
                 const std::optional<FifoIds>& fifo, int delay_seconds) {
  body.str("MessageBody", message);
  if (!attributes.empty()) {
    JsonBody all;
    for (const auto& a : attributes) {
      all.raw(a.name,
              JsonBody().str("DataType", a.data_type).str("StringValue", a.string_value).done());
    }
    body.raw("MessageAttributes", all.done());
  }
  if (fifo) {
    body.str("MessageGroupId", fifo->group);
    if (!fifo->dedup.empty()) body.str("MessageDeduplicationId", fifo->dedup);
  }
  if (delay_seconds > 0) body.num("DelaySeconds", delay_seconds);
}

std::size_t message_size(std::string_view message,
                         const std::vector<binding::sqs::Attribute>& attributes) {
  std::size_t size = message.size();
  for (const auto& a : attributes)
    size += a.name.size() + a.data_type.size() + a.string_value.size();
  return size;
}

std::optional<Error> check_sendable(std::string_view message,
                                    const std::vector<binding::sqs::Attribute>& attributes) {
  if (auto e = check_text("the message body", message)) return e;
  for (const auto& a : attributes) {
    if (auto e = check_text("an attribute name", a.name)) return e;
    if (auto e = check_text("the value of attribute " + spi::quoted(a.name), a.string_value)) {
      return e;
    }
  }
  const std::size_t size = message_size(message, attributes);
  if (size > kMaxMessageBytes) {
    return EncodeError("sqs: the message is " + std::to_string(size) +
                       " bytes with its attributes, over SQS's limit of " +
                       std::to_string(kMaxMessageBytes) + " bytes (1 MiB); nothing was sent");
  }
  return std::nullopt;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  std::size_t size = static_cast<std::size_t>(n);
  // EVP_DecodeBlock counts the padding as zero bytes.
  if (text.ends_with("==")) {
    size -= 2;
  } else if (text.ends_with('=')) {
    size -= 1;
  }
  out.resize(size);
  return out;
}

std::vector<Incoming> parse_messages(const Json& response, std::size_t& skipped) {
  std::vector<Incoming> out;
  skipped = 0;
  const Json* messages = response.find("Messages");
  if (messages == nullptr || !messages->is_array()) return out;
  for (const Json& m : messages->as_array()) {
    const std::string* body = string_member(m, "Body");
    const std::string* receipt = string_member(m, "ReceiptHandle");
    if (body == nullptr || receipt == nullptr) {
      ++skipped;
      continue;
    }
    Incoming in;
    in.body = *body;
    in.receipt_handle = *receipt;
    if (const std::string* id = string_member(m, "MessageId")) in.message_id = *id;
    if (const Json* attrs = m.find("Attributes")) {
      if (const std::string* count = string_member(*attrs, "ApproximateReceiveCount")) {
        in.receive_count = *count;
      }
    }
    const Json* attrs = m.find("MessageAttributes");
    if (attrs != nullptr && attrs->is_object()) {
      for (const auto& [name, value] : attrs->as_object()) {
        if (const std::string* text = string_member(value, "StringValue")) {
          in.headers.emplace(name, *text);
          if (name == "bq-schema-version") in.schema_version = *text;
        } else if (const std::string* binary = string_member(value, "BinaryValue")) {
          if (name == "bq-schema-version") in.schema_version = base64_decode(*binary);
        }
      }
    }
    out.push_back(std::move(in));
  }
  return out;
}

}  // namespace babelqueue::sqs::detail
