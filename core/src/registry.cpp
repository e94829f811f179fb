// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The process-wide transport registry behind open_transport (transport kit). `memory://` is
// registered here, so it is there whatever else is linked.

#include <babelqueue/in_memory_transport.hpp>
#include <babelqueue/open.hpp>
#include <babelqueue/spi/registry.hpp>
#include <babelqueue/spi/uri.hpp>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace babelqueue {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

spi::TransportFactory memory_factory() {
  spi::TransportFactory f;
  f.component = "memory";
  f.schemes = {"memory"};
  f.summary = "in-process queues (a new, empty transport for every open)";
  f.open = [](std::string_view url, const OpenOptions&) -> std::shared_ptr<Transport> {
    const spi::Uri uri = spi::parse_uri(url);
    spi::QueryOptions query(uri, uri.redacted());
    query.finish();
    return std::make_shared<InMemoryTransport>();
  };
  return f;
}

class Registry {
 public:
  static Registry& instance() {
    static Registry registry;  // function-local: safe from other libraries' static initializers
    return registry;
  }

  void add(spi::TransportFactory factory) {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::string& scheme : factory.schemes)
      scheme = lower(scheme);
    for (const std::string& scheme : factory.schemes) {
      if (const spi::TransportFactory* other = find_locked(scheme); other != nullptr) {
        log_to({}, LogLevel::Warning,
               "transport component \"" + factory.component + "\" registers scheme \"" + scheme +
                   "\" that component \"" + other->component + "\" has; the first one is kept");
      }
    }
    factories_.push_back(std::move(factory));
  }

  std::vector<spi::TransportFactory> all() const {
    std::lock_guard<std::mutex> lock(mu_);
    return factories_;
  }

  std::optional<spi::TransportFactory> find(std::string_view scheme) const {
    std::lock_guard<std::mutex> lock(mu_);
    const spi::TransportFactory* f = find_locked(scheme);
    if (f == nullptr) return std::nullopt;
    return *f;
  }

 private:
  Registry() { factories_.push_back(memory_factory()); }

  const spi::TransportFactory* find_locked(std::string_view scheme) const {
    for (const auto& f : factories_) {
      if (std::find(f.schemes.begin(), f.schemes.end(), scheme) != f.schemes.end()) return &f;
    }
    return nullptr;
  }

  mutable std::mutex mu_;
  std::vector<spi::TransportFactory> factories_;
};

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

[[noreturn]] void throw_unknown_scheme(const std::string& scheme, std::string_view url) {
  std::vector<std::string> schemes;
  for (const auto& s : available_schemes())
    schemes.push_back(s + "://");
  std::string text = "no transport for scheme \"" + scheme + "\" in this build (URL " +
                     spi::redact_url(url) + "); this build has " + join(schemes, ", ");
  for (const spi::KnownTransport& known : spi::known_transports()) {
    if (std::find(known.schemes.begin(), known.schemes.end(), scheme) == known.schemes.end()) {
      continue;
    }
    const std::string target = "babelqueue::" + known.component;
    if (known.built) {
      text += ". The " + known.component + " component serves it: link " + target +
              " (find_package(babelqueue COMPONENTS " + known.component + "))";
    } else {
      text += ". The " + known.component + " component serves it: install " +
              known.debian_packages + " and configure with " + known.cmake_option + ", then link " +
              target;
    }
    break;
  }
  throw ConfigError(text);
}

}  // namespace

namespace spi {

bool register_transport(TransportFactory factory) {
  Registry::instance().add(std::move(factory));
  return true;
}

std::vector<TransportFactory> registered_transports() {
  return Registry::instance().all();
}

}  // namespace spi

std::shared_ptr<Transport> open_transport(std::string_view url, const OpenOptions& options) {
  const std::optional<std::string> scheme = spi::url_scheme(url);
  if (!scheme) {
    throw ConfigError("transport URL " + spi::redact_url(url) +
                      " has no scheme (want scheme://..., e.g. redis://127.0.0.1:6379)");
  }
  const std::optional<spi::TransportFactory> factory = Registry::instance().find(*scheme);
  if (!factory) throw_unknown_scheme(*scheme, url);
  std::shared_ptr<Transport> transport = factory->open(url, options);
  if (!transport) {
    throw ConfigError("the " + factory->component + " transport returned nothing for " +
                      spi::redact_url(url));
  }
  return transport;
}

std::vector<std::string> available_schemes() {
  std::vector<std::string> out;
  for (const auto& f : Registry::instance().all()) {
    for (const auto& s : f.schemes) {
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace babelqueue
