// Name tables for enums: to_string, the parser and the list of spellings
// that error messages print all read one constexpr array of (value, name) pairs.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pathfinder::enum_table {

template <class E, std::size_t N>
using Table = std::array<std::pair<E, std::string_view>, N>;

template <class E, std::size_t N>
[[nodiscard]] std::optional<E> parse(const Table<E, N>& table, std::string_view s) {
  for (const auto& [e, name] : table) {
    if (name == s) return e;
  }
  return std::nullopt;
}
template <class E, std::size_t N>
[[nodiscard]] std::string_view name(const Table<E, N>& table, E e) {
  for (const auto& [v, n] : table) {
    if (v == e) return n;
  }
  return "?";
}
template <class E, std::size_t N>
[[nodiscard]] std::vector<std::string> names(const Table<E, N>& table) {
  std::vector<std::string> out;
  for (const auto& p : table) out.emplace_back(p.second);
  return out;
}

}  // namespace pathfinder::enum_table
