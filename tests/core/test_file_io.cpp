// Whole-file reads (bounded, regular files only) and atomic writes.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
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
