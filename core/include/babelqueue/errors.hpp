// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/export.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace babelqueue {

/// Stable error codes; `Error::code()` returns one of these. Values never change meaning.
enum class ErrorCode {
  Decode = 1,              ///< bytes are not a decodable envelope (poison)
  Encode = 2,              ///< an envelope could not be encoded (invalid UTF-8, non-finite number)
  EmptyUrn = 3,            ///< make()/publish() with a blank URN
  Config = 4,              ///< bad configuration (URL, option values); never transient
  Transport = 5,           ///< broker I/O failed
  Timeout = 6,             ///< a broker operation timed out (transient)
  Closed = 7,              ///< the object was closed
  ReleaseUnsupported = 8,  ///< a Releaser cannot release this message in place
  DelayUnsupported = 9,    ///< the transport has no delayed publish
  Randomness = 10,         ///< the CSPRNG failed
  InvalidPayload = 11,     ///< payload schema validation failed (HLP-13)
  Usage = 12,              ///< an API was called in a way it does not allow
  Cancelled = 13,          ///< not returned by App::consume/drain: stop() makes them return ok
  UnknownUrn = 14,         ///< no handler for the URN (the cause of an unknown_urn dead letter)
  Handler = 15,            ///< a handler reported failure through its Status
  StaleDelivery = 16,      ///< a settlement of a delivery the broker already took back (its
                           ///< channel or connection is gone); it will be redelivered
};

/// Root of the babelqueue exception hierarchy.
///
/// Thread-safety: immutable after construction; safe to share.
class BABELQUEUE_EXPORT Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& what, bool transient = false)
      : std::runtime_error(what), code_(code), transient_(transient) {}

  /// The stable code of this error.
  [[nodiscard]] ErrorCode code() const noexcept { return code_; }
  /// True when retrying the same operation later may succeed (connection refused, timeout, ...).
  [[nodiscard]] bool is_transient() const noexcept { return transient_; }

 private:
  ErrorCode code_;
  bool transient_;
};

/// Bad configuration: a URL, an option value, an unknown strategy. Never transient.
class BABELQUEUE_EXPORT ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& what) : Error(ErrorCode::Config, what) {}
};

/// The bytes are not a decodable envelope (ENV-16..22). `offset()` is the byte position of a
/// syntax error, or 0 when the error is about a member's type.
class BABELQUEUE_EXPORT DecodeError : public Error {
 public:
  explicit DecodeError(const std::string& what, std::size_t offset = 0)
      : Error(ErrorCode::Decode, what), offset_(offset) {}
  [[nodiscard]] std::size_t offset() const noexcept { return offset_; }

 private:
  std::size_t offset_;
};

/// An envelope or JSON value could not be encoded (ENV-14).
class BABELQUEUE_EXPORT EncodeError : public Error {
 public:
  explicit EncodeError(const std::string& what) : Error(ErrorCode::Encode, what) {}
};

/// Broker I/O failure. `is_transient()` tells whether the consumer should reconnect and retry.
class BABELQUEUE_EXPORT TransportError : public Error {
 public:
  explicit TransportError(const std::string& what, bool transient = true)
      : Error(ErrorCode::Transport, what, transient) {}

 protected:
  TransportError(ErrorCode code, const std::string& what, bool transient)
      : Error(code, what, transient) {}
};

/// A broker operation timed out. Always transient.
class BABELQUEUE_EXPORT TimeoutError : public TransportError {
 public:
  explicit TimeoutError(const std::string& what) : TransportError(ErrorCode::Timeout, what, true) {}
};

/// A settlement (ack, release, reject) of a delivery the broker already took back: its channel,
/// link, connection or consumer is gone, and the broker redelivers the message. Not transient:
/// settling it again cannot succeed.
class BABELQUEUE_EXPORT StaleDeliveryError : public TransportError {
 public:
  explicit StaleDeliveryError(const std::string& what)
      : TransportError(ErrorCode::StaleDelivery, what, false) {}
};

/// The object was closed; every call after `close()` fails with this.
class BABELQUEUE_EXPORT ClosedError : public Error {
 public:
  explicit ClosedError(const std::string& what = "closed") : Error(ErrorCode::Closed, what) {}
};

/// Throws `e` as the class its code stands for (`TransportError` for ErrorCode::Transport,
/// `TimeoutError`, `StaleDeliveryError`, `ConfigError`, `ClosedError`, `DecodeError`,
/// `EncodeError`), so that a caller's
/// `catch (const TransportError&)` matches an error that travelled in a `Status` or `Result`,
/// which hold it as a plain `Error`. Other codes are thrown as `Error`.
[[noreturn]] inline void throw_error(const Error& e) {
  switch (e.code()) {
    case ErrorCode::Transport:
      throw TransportError(e.what(), e.is_transient());
    case ErrorCode::Timeout:
      throw TimeoutError(e.what());
    case ErrorCode::StaleDelivery:
      throw StaleDeliveryError(e.what());
    case ErrorCode::Config:
      throw ConfigError(e.what());
    case ErrorCode::Closed:
      throw ClosedError(e.what());
    case ErrorCode::Decode:
      if (const auto* d = dynamic_cast<const DecodeError*>(&e)) throw *d;
      throw DecodeError(e.what());
    case ErrorCode::Encode:
      throw EncodeError(e.what());
    default:
      throw e;
  }
}

/// A minimal `std::expected`-shaped result: either a value or an error object.
///
/// Thread-safety: a value type; as thread-safe as `T` and `E`.
template <class T, class E = Error>
class Result {
 public:
  Result(T&& value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit
  Result(const T& value) : v_(std::in_place_index<0>, value) {}        // NOLINT: implicit
  Result(E&& error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit
  Result(const E& error) : v_(std::in_place_index<1>, error) {}        // NOLINT: implicit

  [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  /// The value; throws the held error when there is none.
  [[nodiscard]] T& value() & {
    if (!has_value()) raise();
    return std::get<0>(v_);
  }
  [[nodiscard]] const T& value() const& {
    if (!has_value()) raise();
    return std::get<0>(v_);
  }
  [[nodiscard]] T&& value() && {
    if (!has_value()) raise();
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  /// The error; only valid when `!has_value()`.
  [[nodiscard]] const E& error() const { return std::get<1>(v_); }

 private:
  [[noreturn]] void raise() const {
    if constexpr (std::is_same_v<E, Error>) {
      throw_error(std::get<1>(v_));
    } else {
      throw std::get<1>(v_);
    }
  }

  std::variant<T, E> v_;
};

}  // namespace babelqueue
