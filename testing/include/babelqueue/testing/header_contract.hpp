// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/testing/contract.hpp>

/// @file
/// HeaderContract: HeaderPublisher (RT-3, RT-50), for every transport that is one; whether the
/// headers arrive is `Promises::carries_headers`. See contract.hpp for how to instantiate it.

namespace babelqueue::testing {

/// The fixture of HeaderContract.
///
/// Thread-safety: a GoogleTest fixture.
template <class Traits>
class HeaderContract : public ContractTest<Traits, HeaderPublisher> {};

TYPED_TEST_SUITE_P(HeaderContract);

TYPED_TEST_P(HeaderContract, RT50_HeadersTravelBesideTheBodyAndStayWithTheirMessage) {
  Transport& t = this->transport();
  const Headers headers{{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                        {"x-tenant", "acme"}};
  const std::string body = contract_body(1);
  ASSERT_TRUE(this->template cap<HeaderPublisher>()
                  .publish_with_headers(this->queue(), body, headers)
                  .ok());
  ASSERT_TRUE(t.publish(this->queue(), contract_body(2)).ok());

  const auto with = pop_message(t, this->queue(), kWithin);
  ASSERT_TRUE(with.has_value());
  EXPECT_EQ(with->body, body);  // never wrapped into the body
  const Headers got = published_headers(with->headers, TestFixture::promises);
  if (TestFixture::promises.carries_headers) {
    EXPECT_EQ(got, headers);
  } else {
    EXPECT_TRUE(got.empty());
  }
  const auto without = pop_message(t, this->queue(), kWithin);
  ASSERT_TRUE(without.has_value());
  EXPECT_EQ(body_number(without->body), 2);
  EXPECT_TRUE(published_headers(without->headers, TestFixture::promises).empty())
      << "headers leaked onto the next message";
  EXPECT_TRUE(ack_and_settle(t, *with).ok());
  EXPECT_TRUE(ack_and_settle(t, *without).ok());
}

TYPED_TEST_P(HeaderContract, RT3_EmptyHeadersPublishLikePublish) {
  const std::string body = contract_body(1);
  ASSERT_TRUE(
      this->template cap<HeaderPublisher>().publish_with_headers(this->queue(), body, {}).ok());
  const auto m = pop_message(this->transport(), this->queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->body, body);
  EXPECT_TRUE(published_headers(m->headers, TestFixture::promises).empty());
  EXPECT_TRUE(ack_and_settle(this->transport(), *m).ok());
}

TYPED_TEST_P(HeaderContract, RT2_PublishWithHeadersAfterCloseFailsWithClosed) {
  this->transport().close();
  EXPECT_TRUE(is_closed(this->template cap<HeaderPublisher>().publish_with_headers(
      this->queue(), contract_body(1), {{"k", "v"}})));
}

REGISTER_TYPED_TEST_SUITE_P(HeaderContract, RT50_HeadersTravelBesideTheBodyAndStayWithTheirMessage,
                            RT3_EmptyHeadersPublishLikePublish,
                            RT2_PublishWithHeadersAfterCloseFailsWithClosed);

}  // namespace babelqueue::testing
