// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// babelqueue::Headers, the flat map of out-of-band headers (RT-50, OB-3, OB-4): the
// std::map<std::string, std::string> interface and rules it keeps (issue 10), checked against a
// std::map doing the same operations.

#include <babelqueue/headers.hpp>

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using babelqueue::Headers;
using Map = std::map<std::string, std::string>;
using Entries = std::vector<std::pair<std::string, std::string>>;

// The entries in iteration order.
Entries entries(const Headers& h) {
  Entries out;
  for (const auto& [key, value] : h)
    out.emplace_back(key, value);
  return out;
}

TEST(Headers, RT50_InitializerListSortsAndTheFirstOfEqualKeysWins) {
  const Headers h{{"b", "2"}, {"a", "1"}, {"b", "3"}, {"", "e"}};
  EXPECT_EQ(entries(h), (Entries{{"", "e"}, {"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(h.size(), 3U);
  EXPECT_FALSE(h.empty());
  EXPECT_TRUE(Headers{}.empty());
  Headers assigned{{"x", "1"}};
  assigned = {{"z", "9"}, {"y", "8"}};
  EXPECT_EQ(entries(assigned), (Entries{{"y", "8"}, {"z", "9"}}));
}

TEST(Headers, RT50_LookupsTakeStringsViewsAndLiterals) {
  Headers h{{"bq-job", "urn:a"}, {"bq-attempts", "2"}};
  const std::string key = "bq-job";
  const std::string_view view = "bq-attempts";
  EXPECT_EQ(h.at(key), "urn:a");
  EXPECT_EQ(h.at(view), "2");
  EXPECT_EQ(h.at("bq-job"), "urn:a");
  EXPECT_THROW((void)h.at("missing"), std::out_of_range);
  EXPECT_THROW((void)std::as_const(h).at(std::string_view("bq")), std::out_of_range);
  EXPECT_EQ(h.find(view)->second, "2");
  EXPECT_EQ(h.find("bq"), h.end());
  EXPECT_EQ(std::as_const(h).find(key)->first, "bq-job");
  EXPECT_TRUE(h.contains("bq-job"));
  EXPECT_FALSE(h.contains(std::string_view("bq-jo")));
  EXPECT_EQ(h.count(key), 1U);
  EXPECT_EQ(h.count("nope"), 0U);
  EXPECT_EQ(h.lower_bound("bq-b")->first, "bq-job");
  EXPECT_EQ(h.upper_bound("bq-attempts")->first, "bq-job");
  const auto [first, last] = h.equal_range("bq-job");
  EXPECT_EQ(std::distance(first, last), 1);
  const auto [none, none_end] = h.equal_range("zzz");
  EXPECT_EQ(none, none_end);
}

TEST(Headers, RT50_InsertionKeepsAPresentValueLikeStdMap) {
  Headers h;
  EXPECT_TRUE(h.emplace("k", "1").second);
  EXPECT_FALSE(h.emplace("k", "2").second);
  EXPECT_FALSE(h.try_emplace(std::string("k"), "3").second);
  EXPECT_FALSE(h.insert({"k", "4"}).second);
  EXPECT_FALSE(h.insert(std::pair<const char*, const char*>("k", "5")).second);
  EXPECT_EQ(h.at("k"), "1");
  const auto [it, inserted] = h.insert_or_assign("k", "6");
  EXPECT_FALSE(inserted);
  EXPECT_EQ(it->second, "6");
  EXPECT_TRUE(h.insert_or_assign(std::string_view("a"), std::string("0")).second);
  h["m"] = "7";
  h[std::string("m")] += "7";
  EXPECT_EQ(h["new"], "");
  EXPECT_EQ(h.emplace_hint(h.begin(), "b", "b")->second, "b");
  EXPECT_EQ(h.insert(h.end(), {"c", "c"})->second, "c");
  const Map more{{"d", "d"}, {"k", "ignored"}};
  h.insert(more.begin(), more.end());
  EXPECT_EQ(
      entries(h),
      (Entries{
          {"a", "0"}, {"b", "b"}, {"c", "c"}, {"d", "d"}, {"k", "6"}, {"m", "77"}, {"new", ""}}));
  for (auto& [key, value] : h)
    value += "!";
  EXPECT_EQ(h.at("a"), "0!");
}

TEST(Headers, RT50_EraseByKeyAndIterator) {
  Headers h{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}};
  EXPECT_EQ(h.erase("b"), 1U);
  EXPECT_EQ(h.erase(std::string("b")), 0U);
  EXPECT_EQ(h.erase(h.find("a"))->first, "c");
  const Headers& constant = h;
  const auto after = h.erase(constant.begin(), constant.end());
  EXPECT_EQ(after, h.end());
  EXPECT_TRUE(h.empty());
  h = {{"x", "1"}};
  h.clear();
  EXPECT_TRUE(h.empty());
}

TEST(Headers, RT50_ConvertsToAndFromStdMapAndCompares) {
  const Map map{{"b", "2"}, {"a", "1"}};
  const Headers h = map;
  EXPECT_EQ(h, (Headers{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(h, map);
  EXPECT_EQ(map, h);
  const Map back = h;
  EXPECT_EQ(back, map);
  EXPECT_NE(h, (Headers{{"a", "1"}}));
  EXPECT_LT((Headers{{"a", "1"}}), (Headers{{"a", "2"}}));
  EXPECT_LT((Headers{{"a", "1"}}), h);
  Headers other{{"z", "26"}};
  swap(other, const_cast<Headers&>(h));  // NOLINT: the test's own object
  EXPECT_EQ(other, map);
  const Headers ranged(map.begin(), map.end());
  EXPECT_EQ(ranged, map);
  EXPECT_EQ(entries(ranged), (Entries{{"a", "1"}, {"b", "2"}}));
}

TEST(Headers, RT50_RandomOperationsMatchStdMap) {
  std::mt19937 random(10);
  Headers h;
  Map map;
  for (int i = 0; i < 5000; ++i) {
    const std::string key = "key-" + std::to_string(random() % 40);
    const std::string value = std::to_string(i);
    switch (random() % 5) {
      case 0:
        EXPECT_EQ(h.emplace(key, value).second, map.emplace(key, value).second);
        break;
      case 1:
        EXPECT_EQ(h.insert_or_assign(key, value).second, map.insert_or_assign(key, value).second);
        break;
      case 2:
        EXPECT_EQ(h.erase(key), map.erase(key));
        break;
      case 3:
        h[key] += "x";
        map[key] += "x";
        break;
      default:
        EXPECT_EQ(h.contains(key), map.contains(key));
        break;
    }
    ASSERT_EQ(h, map) << "after operation " << i;
  }
}

}  // namespace
