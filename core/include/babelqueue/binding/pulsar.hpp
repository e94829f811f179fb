// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/binding/common.hpp>
#include <babelqueue/export.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

/// @file
/// Apache Pulsar binding rules (05 PLS-5, PLS-7): the string properties of a publish and the
/// delivery count. The schema-version gate on `bq-schema-version` is the string gate of
/// `common.hpp`. Pure code, no I/O.
///
/// Every function here is stateless and thread-safe.

namespace babelqueue::binding::pulsar {

/// The string properties of a Pulsar publish (PLS-5): `bq-job`, `bq-trace-id`, `bq-message-id`,
/// `bq-schema-version`, `bq-source-lang` per OB-2 and `bq-attempts` whenever the body decodes;
/// riders as extra properties, contract entries winning a collision. Undecodable: riders only.
BABELQUEUE_EXPORT std::map<std::string, std::string> properties(std::string_view body,
                                                                const Riders& riders = {});

/// `delivery_count` from the 0-based `redeliveryCount` (PLS-7): count + 1; an absent or negative
/// count counts as 0.
BABELQUEUE_EXPORT std::int64_t delivery_count(
    std::optional<std::int64_t> redelivery_count) noexcept;

}  // namespace babelqueue::binding::pulsar
