// Whole-file reads (bounded, regular files only) and atomic writes.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <functional>
#include <string>

#include "engine/core/file_io.hpp"

using namespace pathfinder;

namespace {
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("pathfinder-test-file-io-" + std::to_string(::getpid()) + "-" + name))
      .string();
}
}  // namespace

TEST_CASE("read_input_file reads a regular file whole", "[core][file_io]") {
  const std::string path = temp_path("ok");
  write_file_atomically(path, "a: 1\n");
  const InputFile f = read_input_file(path);
  REQUIRE(f.text);
  CHECK(*f.text == "a: 1\n");
  CHECK(read_text_file(path) == std::optional<std::string>("a: 1\n"));
  std::filesystem::remove(path);
}

// Issue 14 item 5: /dev/zero and a FIFO were read (or waited on) forever.
TEST_CASE("read_input_file refuses devices, FIFOs, directories and large files",
          "[core][file_io][issue14]") {
  CHECK(read_input_file("/dev/zero").error == "not a regular file (a device, FIFO or socket)");
  const std::string fifo = temp_path("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(read_input_file(fifo).error == "not a regular file (a device, FIFO or socket)");
  CHECK_FALSE(read_text_file(fifo));
  std::filesystem::remove(fifo);
  CHECK(read_input_file(std::filesystem::temp_directory_path().string()).error == "Is a directory");
  CHECK(read_input_file(temp_path("missing")).error == "No such file or directory");
  const std::string big = temp_path("big");
  write_file_atomically(big, std::string((std::size_t{2} << 20) + 1, ' '));
  CHECK(read_input_file(big, std::size_t{2} << 20).error ==
        "larger than 2 MiB, the limit for an input file");
  CHECK(read_input_file(big).text);
  std::filesystem::remove(big);
  CHECK(kMaxInputFileBytes == std::size_t{16} << 20);
}

namespace {
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}
}  // namespace

// Issue 14 item 8: a write that failed was "internal error", exit 1; it is the user's
// environment, reported at the path.
TEST_CASE("write_file_atomically reports an unwritable path at the path", "[core][file_io][issue14]") {
  const std::string file = temp_path("a-file");
  write_file_atomically(file, "x");
  // A parent that is a regular file: ENOTDIR, even for root.
  CHECK(message_of([&] { write_file_atomically(file + "/out/results.csv", "x"); }) ==
        file + "/out: error: cannot create folder: Not a directory");
  CHECK(message_of([&] { write_file_atomically(file + "/results.csv", "x"); }) ==
        file + ": error: cannot create folder: Not a directory");
  CHECK(message_of([&] { create_folder(file); }) == file + ": error: cannot create folder: Not a directory");
  // sysfs refuses new files, even for root.
  if (std::filesystem::is_directory("/sys")) {
    CHECK(message_of([&] { write_file_atomically("/sys/pathfinder-results.csv", "x"); }) ==
          "/sys/pathfinder-results.csv: error: cannot write file: Permission denied");
  }
  CHECK(read_text_file(file) == std::optional<std::string>("x"));
  std::filesystem::remove(file);
}

// A full disk, as far as one process can make it: a file-size limit (setrlimit(2), with
// SIGXFSZ ignored write(2) fails with EFBIG once the limit is reached). The old file stays and
// no temporary is left.
TEST_CASE("write_file_atomically reports a failed write and keeps the old file",
          "[core][file_io][issue14]") {
  const std::string dir = temp_path("full");
  std::filesystem::remove_all(dir);
  const std::string path = dir + "/results.csv";
  write_file_atomically(path, "old\n");
  struct rlimit old {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  const auto handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 4096;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  const std::string message = message_of([&] { write_file_atomically(path, std::string(8192, 'x')); });
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &old) == 0);
  std::signal(SIGXFSZ, handler);
  CHECK(message == path + ": error: cannot write file: File too large");
  CHECK(read_text_file(path) == std::optional<std::string>("old\n"));
  std::size_t files = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) files += f.is_regular_file() ? 1 : 0;
  CHECK(files == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a folder lock refuses a second holder and clears a killed run's temporaries",
          "[core][file_io][issue14]") {
  const std::string dir = temp_path("locked");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  write_file_atomically(dir + "/results.csv.tmp.12345.7", "torn");
  write_file_atomically(dir + "/summary.md.tmp.99.0", "torn");
  write_file_atomically(dir + "/notes.tmp.txt", "kept");
  write_file_atomically(dir + "/results.csv", "kept");
  {
    const FolderLock first(dir);
    CHECK_FALSE(std::filesystem::exists(dir + "/results.csv.tmp.12345.7"));
    CHECK_FALSE(std::filesystem::exists(dir + "/summary.md.tmp.99.0"));
    CHECK(std::filesystem::exists(dir + "/notes.tmp.txt"));
    CHECK(std::filesystem::exists(dir + "/results.csv"));
    CHECK(message_of([&] { const FolderLock second(dir); }) ==
          dir + ": error: another pathfinder run is writing to this folder (it holds "
                ".pathfinder.lock); wait for it to finish or choose another --out");
  }
  CHECK(message_of([&] { const FolderLock again(dir); }) == "<no error>");  // released
  // A new folder is made; a file is not a folder.
  CHECK(message_of([&] { const FolderLock made(dir + "/new/sub"); }) == "<no error>");
  CHECK(std::filesystem::is_directory(dir + "/new/sub"));
  CHECK(message_of([&] { const FolderLock file(dir + "/results.csv"); }) ==
        dir + "/results.csv: error: cannot create folder: Not a directory");
  std::filesystem::remove_all(dir);
}
