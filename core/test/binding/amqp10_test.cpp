// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// AMQP 1.0 values (Azure Service Bus, Artemis): the OB-4 header text.

#include <babelqueue/binding/amqp10.hpp>

#include <gtest/gtest.h>

#include "fixtures.hpp"

#include <cstdint>
#include <limits>
#include <string>

namespace {

using namespace binding_test;  // NOLINT(google-build-using-namespace)

// ---------------------------------------------------------------------------------------------
// OB-4 header text of AMQP 1.0 values
// ---------------------------------------------------------------------------------------------

TEST(AmqpHeaderText, OB4_ValuesRenderedAsText) {
  EXPECT_EQ(bb::amqp10::header_text(av<std::string>("abc")), "abc");
  EXPECT_EQ(bb::amqp10::header_text(av<std::string>("")), "");
  EXPECT_EQ(bb::amqp10::header_text(av<std::int64_t>(kCreatedAt)), "1749132727000");
  EXPECT_EQ(bb::amqp10::header_text(av<std::int8_t>(-3)), "-3");
  EXPECT_EQ(bb::amqp10::header_text(av<std::uint8_t>(200)), "200");
  EXPECT_EQ(bb::amqp10::header_text(av<std::uint64_t>(std::numeric_limits<std::uint64_t>::max())),
            "18446744073709551615");
  EXPECT_EQ(bb::amqp10::header_text(av<bool>(true)), "true");
  EXPECT_EQ(bb::amqp10::header_text(av<bool>(false)), "false");
  EXPECT_EQ(bb::amqp10::header_text(av<double>(1.5)), "1.5");
  EXPECT_EQ(bb::amqp10::header_text(av<double>(0.1)), "0.1");
  EXPECT_EQ(bb::amqp10::header_text(av<float>(0.1F)), "0.1");
  EXPECT_EQ(bb::amqp10::header_text(AmqpValue{}), std::nullopt);
  EXPECT_EQ(bb::amqp10::header_text(av<bb::amqp10::Binary>(bb::amqp10::Binary{"x"})), std::nullopt);
  EXPECT_EQ(bb::amqp10::header_text(av<bb::amqp10::Other>(bb::amqp10::Other{"list"})),
            std::nullopt);
}

}  // namespace
