#include "engine/study/study_table.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace pathfinder {
namespace {

bool needs_quotes(const std::string& s) {
  if (s.empty()) return false;
  return s.find_first_of(",\"\n\r") != std::string::npos || s.front() == ' ' || s.back() == ' ';
}

void append_cell(std::string& out, const std::string& s) {
  if (!needs_quotes(s)) {
    out += s;
    return;
  }
  out += '"';
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void append_line(std::string& out, const std::vector<std::string>& cells) {
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += ',';
    append_cell(out, cells[i]);
  }
  out += '\n';
}

// Splits CSV text into records of cells (quoted cells may hold commas and quotes).
std::vector<std::vector<std::string>> records(std::string_view text) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      row.push_back(std::move(cell));
      cell.clear();
      any = true;
    } else if (c == '\n') {
      row.push_back(std::move(cell));
      out.push_back(std::move(row));
      row.clear();
      cell.clear();
      any = false;
    } else if (c != '\r') {
      cell += c;
      any = true;
    }
  }
  if (any && !quoted) {  // a last line without its newline; an open quote is a torn record
    row.push_back(std::move(cell));
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

std::optional<std::size_t> StudyTable::column(std::string_view name) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return i;
  }
  return std::nullopt;
}

std::optional<double> StudyTable::number(std::size_t row, std::string_view name) const {
  const auto c = column(name);
  if (!c) return std::nullopt;
  const std::string& s = rows[row][*c];
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

std::string to_csv(const StudyTable& t) {
  std::string out;
  append_line(out, t.columns);
  for (const auto& r : t.rows) append_line(out, r);
  return out;
}

StudyTable parse_csv(std::string_view text, std::size_t* dropped) {
  StudyTable t;
  std::size_t bad = 0;
  // A UTF-8 byte order mark (as spreadsheet programs save CSV) is not part of the first name.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<std::vector<std::string>> all = records(text);
  if (!all.empty()) {
    t.columns = std::move(all.front());
    for (std::size_t i = 1; i < all.size(); ++i) {
      if (all[i].size() == t.columns.size()) t.rows.push_back(std::move(all[i]));
      else ++bad;
    }
  }
  if (dropped != nullptr) *dropped = bad;
  return t;
}

std::uint64_t fnv1a(std::string_view text, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace pathfinder
