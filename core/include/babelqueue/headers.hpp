// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <algorithm>
#include <compare>
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

/// @file
/// `Headers`: the out-of-band text headers beside an envelope (RT-50), and the riders of a publish
/// (OB-3).

namespace babelqueue {

/// A header key given to a lookup: anything a std::string_view is made from.
template <class K>
concept HeaderKey = std::convertible_to<const K&, std::string_view>;
/// A forwarded header key.
template <class K>
concept HeaderKeyArg = HeaderKey<std::remove_cvref_t<K>>;
/// What a header entry (a pair of strings) is made from.
template <class P>
concept HeaderEntry = std::constructible_from<std::pair<std::string, std::string>, P &&>;

/// Out-of-band headers carried beside the envelope (RT-50), never inside it: unique keys in
/// ascending byte order, each with one text value.
///
/// A flat map: the entries live in one sorted vector (a received message's few headers take one
/// allocation for the entries instead of one per entry). The interface is `std::map<std::string,
/// std::string>`'s (construction from pairs and initializer lists, `operator[]`, `at`, `find`,
/// `contains`, `count`, `lower_bound`, `upper_bound`, `emplace`, `try_emplace`, `insert`,
/// `insert_or_assign`, `erase`, iteration over `.first`/`.second` in key order, `==` and `<=>`),
/// with the same rules (an insert of a present key keeps the present value; the first of equal
/// keys in a list wins), and lookups take any string-like key without building a `std::string`.
/// It converts implicitly from and to `std::map<std::string, std::string>`.
///
/// Differences from std::map: an insertion or erasure invalidates iterators and references to
/// entries after it (to every entry when the storage grows); the key of an entry must not be
/// changed through an iterator (`first` is not const, as the entries are stored in a vector);
/// `reserve` and `capacity` exist.
///
/// Thread-safety: a value type.
class Headers {
 public:
  using key_type = std::string;
  using mapped_type = std::string;
  using value_type = std::pair<std::string, std::string>;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using key_compare = std::less<>;
  using reference = value_type&;
  using const_reference = const value_type&;
  using pointer = value_type*;
  using const_pointer = const value_type*;
  using iterator = std::vector<value_type>::iterator;
  using const_iterator = std::vector<value_type>::const_iterator;
  using reverse_iterator = std::vector<value_type>::reverse_iterator;
  using const_reverse_iterator = std::vector<value_type>::const_reverse_iterator;

  Headers() = default;
  Headers(std::initializer_list<value_type> entries) { insert(entries); }
  template <std::input_iterator It>
  Headers(It first, It last) {
    insert(first, last);
  }
  /// The entries of `map` (already sorted and unique).
  Headers(const std::map<std::string, std::string>& map)  // NOLINT: implicit, as std::map was
      : entries_(map.begin(), map.end()) {}
  /// A `std::map` of the entries.
  operator std::map<std::string, std::string>() const {  // NOLINT: implicit, as std::map was
    return {entries_.begin(), entries_.end()};
  }

  Headers& operator=(std::initializer_list<value_type> entries) {
    clear();
    insert(entries);
    return *this;
  }

  // Iteration, in ascending key order.
  [[nodiscard]] iterator begin() noexcept { return entries_.begin(); }
  [[nodiscard]] const_iterator begin() const noexcept { return entries_.begin(); }
  [[nodiscard]] const_iterator cbegin() const noexcept { return entries_.cbegin(); }
  [[nodiscard]] iterator end() noexcept { return entries_.end(); }
  [[nodiscard]] const_iterator end() const noexcept { return entries_.end(); }
  [[nodiscard]] const_iterator cend() const noexcept { return entries_.cend(); }
  [[nodiscard]] reverse_iterator rbegin() noexcept { return entries_.rbegin(); }
  [[nodiscard]] const_reverse_iterator rbegin() const noexcept { return entries_.rbegin(); }
  [[nodiscard]] reverse_iterator rend() noexcept { return entries_.rend(); }
  [[nodiscard]] const_reverse_iterator rend() const noexcept { return entries_.rend(); }

  // Capacity.
  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }
  [[nodiscard]] size_type size() const noexcept { return entries_.size(); }
  [[nodiscard]] size_type max_size() const noexcept { return entries_.max_size(); }
  /// Room for `n` entries without another allocation.
  void reserve(size_type n) { entries_.reserve(n); }
  [[nodiscard]] size_type capacity() const noexcept { return entries_.capacity(); }

  // Lookup: `key` is anything a std::string_view is made from.
  template <HeaderKey K>
  [[nodiscard]] iterator lower_bound(const K& key) {
    return std::lower_bound(entries_.begin(), entries_.end(), view(key), Less{});
  }
  template <HeaderKey K>
  [[nodiscard]] const_iterator lower_bound(const K& key) const {
    return std::lower_bound(entries_.begin(), entries_.end(), view(key), Less{});
  }
  template <HeaderKey K>
  [[nodiscard]] iterator upper_bound(const K& key) {
    return std::upper_bound(entries_.begin(), entries_.end(), view(key), Less{});
  }
  template <HeaderKey K>
  [[nodiscard]] const_iterator upper_bound(const K& key) const {
    return std::upper_bound(entries_.begin(), entries_.end(), view(key), Less{});
  }
  template <HeaderKey K>
  [[nodiscard]] iterator find(const K& key) {
    const auto it = lower_bound(key);
    return it != entries_.end() && it->first == view(key) ? it : entries_.end();
  }
  template <HeaderKey K>
  [[nodiscard]] const_iterator find(const K& key) const {
    const auto it = lower_bound(key);
    return it != entries_.end() && it->first == view(key) ? it : entries_.end();
  }
  template <HeaderKey K>
  [[nodiscard]] std::pair<iterator, iterator> equal_range(const K& key) {
    const auto it = find(key);
    return {it, it == entries_.end() ? it : std::next(it)};
  }
  template <HeaderKey K>
  [[nodiscard]] std::pair<const_iterator, const_iterator> equal_range(const K& key) const {
    const auto it = find(key);
    return {it, it == entries_.end() ? it : std::next(it)};
  }
  template <HeaderKey K>
  [[nodiscard]] bool contains(const K& key) const {
    return find(key) != entries_.end();
  }
  template <HeaderKey K>
  [[nodiscard]] size_type count(const K& key) const {
    return contains(key) ? 1 : 0;
  }
  /// The value of `key`. @throws std::out_of_range when absent.
  template <HeaderKey K>
  [[nodiscard]] std::string& at(const K& key) {
    const auto it = find(key);
    if (it == entries_.end()) throw std::out_of_range("Headers::at: no such key");
    return it->second;
  }
  template <HeaderKey K>
  [[nodiscard]] const std::string& at(const K& key) const {
    const auto it = find(key);
    if (it == entries_.end()) throw std::out_of_range("Headers::at: no such key");
    return it->second;
  }
  /// The value of `key`, inserted empty when absent.
  template <HeaderKeyArg K>
  std::string& operator[](K&& key) {
    return try_emplace(std::forward<K>(key)).first->second;
  }

  // Insertion: a present key keeps its value (except insert_or_assign).
  /// Inserts `key` with a value made of `args` when absent.
  template <HeaderKeyArg K, class... Args>
  std::pair<iterator, bool> try_emplace(K&& key, Args&&... args) {
    if (entries_.empty() || std::string_view(entries_.back().first) < view(key)) {
      // Keys given in ascending order are appended: nothing moves.
      entries_.emplace_back(std::piecewise_construct, std::forward_as_tuple(std::forward<K>(key)),
                            std::forward_as_tuple(std::forward<Args>(args)...));
      return {std::prev(entries_.end()), true};
    }
    const auto it = lower_bound(key);
    if (it != entries_.end() && it->first == view(key)) return {it, false};
    return {
        entries_.emplace(it, std::piecewise_construct, std::forward_as_tuple(std::forward<K>(key)),
                         std::forward_as_tuple(std::forward<Args>(args)...)),
        true};
  }
  /// Inserts the entry made of `args` when its key is absent.
  template <class... Args>
  std::pair<iterator, bool> emplace(Args&&... args) {
    value_type entry(std::forward<Args>(args)...);
    return try_emplace(std::move(entry.first), std::move(entry.second));
  }
  template <class... Args>
  iterator emplace_hint(const_iterator /*hint*/, Args&&... args) {
    return emplace(std::forward<Args>(args)...).first;
  }
  std::pair<iterator, bool> insert(const value_type& entry) {
    return try_emplace(entry.first, entry.second);
  }
  std::pair<iterator, bool> insert(value_type&& entry) {
    return try_emplace(std::move(entry.first), std::move(entry.second));
  }
  template <HeaderEntry P>
  std::pair<iterator, bool> insert(P&& entry) {
    return emplace(std::forward<P>(entry));
  }
  iterator insert(const_iterator /*hint*/, const value_type& entry) { return insert(entry).first; }
  iterator insert(const_iterator /*hint*/, value_type&& entry) {
    return insert(std::move(entry)).first;
  }
  template <std::input_iterator It>
  void insert(It first, It last) {
    for (; first != last; ++first)
      emplace(*first);
  }
  void insert(std::initializer_list<value_type> entries) {
    reserve(size() + entries.size());
    insert(entries.begin(), entries.end());
  }
  /// Sets `key` to `value`, inserting it when absent.
  template <HeaderKeyArg K, class M>
  std::pair<iterator, bool> insert_or_assign(K&& key, M&& value) {
    auto [it, inserted] = try_emplace(std::forward<K>(key), std::forward<M>(value));
    if (!inserted) it->second = std::forward<M>(value);
    return {it, inserted};
  }

  // Removal.
  iterator erase(iterator pos) { return entries_.erase(pos); }
  iterator erase(const_iterator pos) { return entries_.erase(pos); }
  iterator erase(const_iterator first, const_iterator last) { return entries_.erase(first, last); }
  /// Removes `key`; the number of entries removed (0 or 1).
  template <HeaderKey K>
  size_type erase(const K& key) {
    const auto it = find(key);
    if (it == entries_.end()) return 0;
    entries_.erase(it);
    return 1;
  }
  void clear() noexcept { entries_.clear(); }
  void swap(Headers& other) noexcept { entries_.swap(other.entries_); }
  friend void swap(Headers& a, Headers& b) noexcept { a.swap(b); }

  friend bool operator==(const Headers& a, const Headers& b) { return a.entries_ == b.entries_; }
  friend std::strong_ordering operator<=>(const Headers& a, const Headers& b) {
    return std::lexicographical_compare_three_way(a.entries_.begin(), a.entries_.end(),
                                                  b.entries_.begin(), b.entries_.end());
  }

 private:
  struct Less {
    bool operator()(const value_type& entry, std::string_view key) const noexcept {
      return std::string_view(entry.first) < key;
    }
    bool operator()(std::string_view key, const value_type& entry) const noexcept {
      return key < std::string_view(entry.first);
    }
  };
  template <class K>
  static std::string_view view(const K& key) noexcept {
    return std::string_view(key);
  }

  std::vector<value_type> entries_;
};

}  // namespace babelqueue
