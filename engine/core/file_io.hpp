// Whole-file reads, atomic writes (a reader, or a rerun after a kill, never sees part of a
// file) and a lock that keeps a second run out of an output folder.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "engine/core/error.hpp"

namespace pathfinder {

// The largest input file (YAML, CSV) read: 16 MiB, far above any real template, workload or
// study, and a bound on what a wrong path (a log, a disk image) can cost.
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{16} << 20;

// A whole input file, or why it was not read.
struct InputFile {
  std::optional<std::string> text;
  std::string error;  // when !text: "No such file or directory", "not a regular file (...)", ...
};
// Reads a regular file of at most max_bytes with bounded reads. A device (/dev/zero), FIFO or
// socket is refused without reading (it may never end, and a FIFO's open never blocks here:
// O_NONBLOCK), and so is a directory; the size is checked as the bytes arrive, not taken from
// st_size alone (a file that grows while read is still bounded).
[[nodiscard]] InputFile read_input_file(const std::string& path,
                                        std::size_t max_bytes = kMaxInputFileBytes);

// The whole regular file, or nullopt when it does not exist, cannot be read, is not a regular
// file or is larger than max_bytes.
[[nodiscard]] std::optional<std::string> read_text_file(
    const std::string& path, std::size_t max_bytes = std::size_t{1} << 30);
// Writes a uniquely named temporary file beside `path` (`path`.tmp.<pid>.<n>), flushes it to
// disk and renames it over `path`: a reader (or a rerun after a kill) sees the old file or the
// new one, never a part. Creates the folder. An environment problem (a parent that is a file,
// a read-only or full file system) is a ConfigError at the path:
//   "out/results.csv: error: cannot write file: Not a directory"
// and leaves no temporary behind.
void write_file_atomically(const std::string& path, const std::string& text);

// Creates `dir` (and its parents); ConfigError "dir: error: cannot create folder: <strerror>".
void create_folder(const std::string& dir);

// An exclusive lock on an output folder, held while the object lives: flock(2) on
// `dir`/.pathfinder.lock, released by the kernel when the process ends however it ends. Taking
// it creates the folder, refuses (ConfigError at the folder) when another process holds it,
// and then removes the temporaries (*.tmp.<pid>.<n>) a killed writer left in the folder.
class FolderLock {
 public:
  explicit FolderLock(const std::string& dir);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace pathfinder
