// Whole-file reads and atomic writes (a reader, or a rerun after a kill, never sees part of a
// file).
#pragma once

#include <optional>
#include <string>

namespace pathfinder {

// The whole file, or nullopt when it does not exist or cannot be read.
[[nodiscard]] std::optional<std::string> read_text_file(const std::string& path);
// Writes a uniquely named temporary file beside `path`, flushes it to disk and renames it over
// `path`: a reader (or a rerun after a kill) sees the old file or the new one, never a part.
// Creates the folder. Throws std::runtime_error when the file cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace pathfinder
