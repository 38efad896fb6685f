// A study's result store: a table of text cells (one row a point, one column an input or an
// output), its CSV form (RFC 4180 quoting), atomic file writes and the fingerprint that tells
// whether stored rows still belong to a study.
#pragma once

#include "engine/core/file_io.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pathfinder {

struct StudyTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // each as long as columns

  [[nodiscard]] std::optional<std::size_t> column(std::string_view name) const;
  // The cell as a number; nullopt when the column is missing or the cell empty or not a number.
  [[nodiscard]] std::optional<double> number(std::size_t row, std::string_view name) const;
  [[nodiscard]] const std::string& cell(std::size_t row, std::size_t column) const {
    return rows[row][column];
  }
};

// Header line then one record per row; cells with a comma, quote, line break or edge space are
// quoted, a line break kept inside the quotes (RFC 4180 §2.6), so every cell reads back as it
// was.
[[nodiscard]] std::string to_csv(const StudyTable& t);
// The inverse of to_csv; a leading UTF-8 byte order mark is skipped. Rows whose cell count differs from the header's are dropped and
// counted in *dropped.
[[nodiscard]] StudyTable parse_csv(std::string_view text, std::size_t* dropped = nullptr);


// 64-bit FNV-1a, for fingerprints (not for security).
[[nodiscard]] std::uint64_t fnv1a(std::string_view text, std::uint64_t seed = 14695981039346656037ULL);
// 16 lower-case hex digits.
[[nodiscard]] std::string hex64(std::uint64_t v);

}  // namespace pathfinder
