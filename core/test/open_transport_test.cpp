// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// open_transport and the transport registry (issue 8 item 4).

#include <babelqueue/errors.hpp>
#include <babelqueue/in_memory_transport.hpp>
#include <babelqueue/open.hpp>
#include <babelqueue/spi/registry.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using babelqueue::ConfigError;
using babelqueue::InMemoryTransport;
using babelqueue::LogLevel;
using babelqueue::open_transport;
using babelqueue::OpenOptions;
using babelqueue::Transport;
using babelqueue::spi::TransportFactory;

// The text of the ConfigError open_transport(url) throws; fails the test when it opens.
std::string open_error(std::string_view url) {
  try {
    open_transport(url);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "open_transport(\"" << url << "\") did not throw";
  return {};
}

bool has(const std::vector<std::string>& items, std::string_view item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// A factory whose every open returns `transport`, so a test can tell which factory opened.
TransportFactory fixed_factory(std::string component, std::vector<std::string> schemes,
                               std::shared_ptr<Transport> transport) {
  TransportFactory f;
  f.component = std::move(component);
  f.schemes = std::move(schemes);
  f.summary = "test transport";
  f.open = [transport = std::move(transport)](std::string_view, const OpenOptions&) {
    return transport;
  };
  return f;
}

TEST(OpenTransport, MemoryOpensAFreshInMemoryTransportEachTime) {
  const std::shared_ptr<Transport> a = open_transport("memory://");
  const std::shared_ptr<Transport> b = open_transport("MEMORY://");
  ASSERT_NE(dynamic_cast<InMemoryTransport*>(a.get()), nullptr);
  ASSERT_NE(dynamic_cast<InMemoryTransport*>(b.get()), nullptr);
  ASSERT_TRUE(a->publish("q", "body").ok());
  EXPECT_FALSE(b->pop("q", std::chrono::milliseconds::zero()).value().has_value());
  EXPECT_TRUE(a->pop("q", std::chrono::milliseconds::zero()).value().has_value());
  EXPECT_TRUE(has(babelqueue::available_schemes(), "memory"));
}

TEST(OpenTransport, MemoryRejectsQueryOptions) {
  const std::string error = open_error("memory://?prefetch=10");
  EXPECT_NE(error.find("unknown option \"prefetch\""), std::string::npos) << error;
  EXPECT_NE(error.find("takes no options"), std::string::npos) << error;
}

TEST(OpenTransport, UnknownSchemeNamesTheSchemesOfThisBuild) {
  const std::string error = open_error("nosuchbroker://host:1/");
  EXPECT_NE(error.find("no transport for scheme \"nosuchbroker\""), std::string::npos) << error;
  for (const std::string& scheme : babelqueue::available_schemes()) {
    EXPECT_NE(error.find(scheme + "://"), std::string::npos) << scheme << " in: " << error;
  }
}

// Every transport of the catalog (babelqueue_add_transport) that
// this program has not linked gets an error naming its component and how to get it.
TEST(OpenTransport, UnlinkedCatalogSchemeNamesComponentAndHowToGetIt) {
  const auto known = babelqueue::spi::known_transports();
  ASSERT_TRUE(std::any_of(known.begin(), known.end(),
                          [](const auto& k) { return k.component == "redis"; }));
  const std::vector<std::string> linked = babelqueue::available_schemes();
  int checked = 0;
  for (const auto& k : known) {
    ASSERT_FALSE(k.schemes.empty()) << k.component;
    if (has(linked, k.schemes.front())) continue;
    const std::string error = open_error(k.schemes.front() + "://host/");
    EXPECT_NE(error.find("The " + k.component + " component"), std::string::npos) << error;
    if (k.built) {
      EXPECT_NE(error.find("link babelqueue::" + k.component), std::string::npos) << error;
    } else {
      EXPECT_NE(
          error.find("install " + k.debian_packages + " and configure with " + k.cmake_option),
          std::string::npos)
          << error;
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);  // this binary links no transport component
}

TEST(OpenTransport, NoSchemeIsAConfigError) {
  for (const char* url :
       {"127.0.0.1:6379", "", "://host", "redis:/host", "1redis://host", "re dis://host"}) {
    EXPECT_NE(open_error(url).find("has no scheme"), std::string::npos) << url;
  }
}

TEST(OpenTransport, NoErrorTextContainsThePassword) {
  for (const char* url : {
           "nosuchbroker://user:s3cret@host/",
           "nosuchbroker://user:s3/cret@host/",  // unencoded '/' in the password
           "nosuchbroker://user:s3?cret@host/",
           "nosuchbroker://:s3cret@host/",
           "amqp://user:s3cret@host/",
           "memory://user:s3cret@/?bad=1",
           "memory://user:s3cret%zz@/",
           "memory://user:s3/cret@/",
           "user:s3cret@host:6379",
           "user:s3cret@host://x",
       }) {
    const std::string error = open_error(url);
    EXPECT_FALSE(error.empty()) << url;
    EXPECT_EQ(error.find("s3"), std::string::npos) << url << " -> " << error;
  }
}

TEST(OpenTransport, RegisteredFactoryOpensItsSchemesCaseInsensitively) {
  const auto first = std::make_shared<InMemoryTransport>();
  TransportFactory f = fixed_factory("first", {"TestOpen", "testopen2"}, first);
  f.open = [first](std::string_view url, const OpenOptions& options) {
    babelqueue::log_to(options.logger, LogLevel::Info, url);
    return first;
  };
  ASSERT_TRUE(babelqueue::spi::register_transport(std::move(f)));
  std::atomic<int> logged{0};
  const OpenOptions options{.logger = [&logged](LogLevel, std::string_view text) {
    if (text == "testOpen://host/") ++logged;
  }};
  EXPECT_EQ(open_transport("testOpen://host/", options), first);
  EXPECT_EQ(open_transport("testopen2://"), first);
  EXPECT_EQ(logged.load(), 1);  // the factory got the URL as given and the options
  EXPECT_TRUE(has(babelqueue::available_schemes(), "testopen"));
  const auto registered = babelqueue::spi::registered_transports();
  EXPECT_TRUE(std::any_of(registered.begin(), registered.end(),
                          [](const TransportFactory& r) { return r.component == "first"; }));
}

TEST(OpenTransport, DuplicateSchemeKeepsTheFirstFactoryAndWarns) {
  const auto one = std::make_shared<InMemoryTransport>();
  const auto two = std::make_shared<InMemoryTransport>();
  ASSERT_TRUE(babelqueue::spi::register_transport(fixed_factory("one", {"testdup"}, one)));
  testing::internal::CaptureStderr();
  babelqueue::spi::register_transport(fixed_factory("two", {"testdup", "testdup-two"}, two));
  babelqueue::spi::register_transport(fixed_factory("three", {"memory"}, two));
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_NE(warnings.find("\"two\" registers scheme \"testdup\" that component \"one\" has"),
            std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("\"three\" registers scheme \"memory\""), std::string::npos) << warnings;
  EXPECT_EQ(open_transport("testdup://"), one);
  EXPECT_EQ(open_transport("testdup-two://"), two);  // its other scheme still counts
  const std::shared_ptr<Transport> memory = open_transport("memory://");
  EXPECT_NE(memory, two);
  EXPECT_NE(dynamic_cast<InMemoryTransport*>(memory.get()), nullptr);
}

TEST(OpenTransport, FactoryReturningNothingIsAConfigError) {
  babelqueue::spi::register_transport(fixed_factory("empty", {"testnull"}, nullptr));
  const std::string error = open_error("testnull://u:s3cret@h/");
  EXPECT_NE(error.find("the empty transport returned nothing for testnull://u:***@h/"),
            std::string::npos)
      << error;
}

TEST(OpenTransport, OpensAndRegistersFromManyThreads) {
  std::vector<std::thread> threads;
  std::atomic<int> opened{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([i, &opened] {
      const std::string scheme = "testthread" + std::to_string(i);
      const auto mine = std::make_shared<InMemoryTransport>();
      babelqueue::spi::register_transport(fixed_factory(scheme, {scheme}, mine));
      for (int j = 0; j < 50; ++j) {
        if (open_transport("memory://") && open_transport(scheme + "://") == mine) ++opened;
      }
    });
  }
  for (std::thread& t : threads)
    t.join();
  EXPECT_EQ(opened.load(), 200);
}

}  // namespace
