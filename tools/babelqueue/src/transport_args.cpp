// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// --url and the transport flags (spi::TransportFactory::flags) of publish, work, queue, dlq and
// bench transport.

#include "transport_args.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/open.hpp>
#include <babelqueue/spi/registry.hpp>
#include <babelqueue/spi/uri.hpp>

#include <signal.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue::cli {
namespace {

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

std::string scheme_list() {
  std::vector<std::string> schemes = available_schemes();
  for (std::string& s : schemes)
    s += "://";
  return join(schemes, ", ");
}

std::string lower_scheme(std::string_view url) {
  const std::size_t end = url.find("://");
  std::string scheme(url.substr(0, end == std::string_view::npos ? 0 : end));
  for (char& c : scheme)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return scheme;
}

std::optional<spi::TransportFactory> factory_for(std::string_view scheme) {
  for (spi::TransportFactory& f : spi::registered_transports()) {
    if (std::find(f.schemes.begin(), f.schemes.end(), scheme) != f.schemes.end()) return f;
  }
  return std::nullopt;
}

const spi::TransportFlag* find_flag(const spi::TransportFactory& f, std::string_view name) {
  for (const spi::TransportFlag& flag : f.flags) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

// `url` with `key=value` added to its query (before a fragment, which the transport judges).
std::string with_query_option(const std::string& url, std::string_view key,
                              std::string_view value) {
  const std::size_t hash = std::min(url.find('#'), url.size());
  std::string out = url.substr(0, hash);
  if (out.find('?') == std::string::npos) {
    out.push_back('?');
  } else if (out.back() != '?' && out.back() != '&') {
    out.push_back('&');
  }
  out += spi::percent_encode(key) + "=" + spi::percent_encode(value) + url.substr(hash);
  return out;
}

// "--<flag> is an option of the <owner> transport, not of <component> (URL ...)".
[[noreturn]] void throw_foreign_flag(std::string_view name, const spi::TransportFactory& used,
                                     const std::string& url) {
  std::vector<std::string> owners;
  for (const spi::TransportFactory& f : spi::registered_transports()) {
    if (find_flag(f, name) != nullptr) owners.push_back(f.component);
  }
  throw UsageError("--" + std::string(name) + " is an option of the " + join(owners, ", ") +
                   " transport, not of " + used.component + " (URL " + spi::redact_url(url) + ")");
}

}  // namespace

void add_transport_options(CLI::App* cmd, TransportArgs& args) {
  cmd->add_option("--url", args.url, "Transport URL; this build opens " + scheme_list())
      ->envname(kUrlEnv);
  std::map<std::string, std::vector<std::string>, std::less<>> help;
  for (const spi::TransportFactory& f : spi::registered_transports()) {
    for (const spi::TransportFlag& flag : f.flags) {
      help[flag.name].push_back("(" + f.component + " URLs) " + flag.help);
    }
  }
  for (const auto& [name, lines] : help) {
    auto& [value, option] = args.flags[name];
    option = cmd->add_option("--" + name, value, join(lines, "\n"));
  }
}

OpenedTransport open_transport_of(const TransportArgs& args) {
  if (trim_w(args.url).empty()) {
    throw UsageError("give --url URL or set " + std::string(kUrlEnv) + "; this build opens " +
                     scheme_list());
  }
  const std::optional<spi::TransportFactory> factory = factory_for(lower_scheme(args.url));
  if (!factory) {
    // No linked component serves the scheme: open_transport throws the error that names the
    // schemes this build has and how to build the missing one.
    return OpenedTransport{babelqueue::open_transport(args.url), {}, spi::redact_url(args.url)};
  }
  std::string url = args.url;
  for (const auto& [name, given] : args.flags) {
    if (given.second->count() == 0) continue;
    const spi::TransportFlag* flag = find_flag(*factory, name);
    if (flag == nullptr) throw_foreign_flag(name, *factory, args.url);
    url = with_query_option(url, flag->query_key, given.first);
  }
  ::signal(SIGPIPE, SIG_IGN);
  return OpenedTransport{babelqueue::open_transport(url), factory->component, spi::redact_url(url)};
}

bool flush_pending(Transport& transport) {
  Flusher* flusher = capability<Flusher>(transport);
  if (flusher == nullptr) return true;
  const Status st = flusher->flush();
  if (st.ok()) return true;
  print_error(std::string("babelqueue: sending the last acknowledgements failed (the broker ") +
              "redelivers those messages): " + st.error().what());
  return false;
}

std::string checked_queue(const std::string& queue) {
  if (trim_w(queue).empty()) throw UsageError("--queue QUEUE is required");
  return queue;
}

std::string dead_letter_queue_of(Transport& transport, std::string_view queue) {
  if (const DeadLetterNaming* naming = capability<DeadLetterNaming>(transport)) {
    return naming->dead_letter_name(queue, std::nullopt);
  }
  return default_dead_letter_name(queue);
}

}  // namespace babelqueue::cli
