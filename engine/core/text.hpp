// Small text helpers shared by config parsing and enum parsers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pathfinder {

// Levenshtein edit distance.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest candidate within a small edit distance, or "" when none is close.
[[nodiscard]] std::string closest_match(std::string_view word,
                                        const std::vector<std::string>& candidates);

// `; did you mean "x"?` or "".
[[nodiscard]] std::string did_you_mean(std::string_view word,
                                       const std::vector<std::string>& candidates);

// One CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote, a line
// break or leading/trailing spaces; as is otherwise.
[[nodiscard]] std::string csv_field(std::string_view s);

// "a, b or c"
[[nodiscard]] std::string join_alternatives(const std::vector<std::string>& items);

}  // namespace pathfinder
