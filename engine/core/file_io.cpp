#include "engine/core/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace pathfinder {

InputFile read_input_file(const std::string& path, std::size_t max_bytes) {
  InputFile out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    out.error = std::strerror(errno);
    return out;
  }
  const auto fail = [&](std::string why) {
    ::close(fd);
    out.error = std::move(why);
    return out;
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return fail(std::strerror(EISDIR));
  if (!S_ISREG(st.st_mode)) return fail("not a regular file (a device, FIFO or socket)");
  const std::string limit = std::to_string(max_bytes >> 20) + " MiB";
  const auto too_large = [&] {
    return fail("larger than " + limit + ", the limit for an input file");
  };
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) return too_large();
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return fail(std::strerror(errno));
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) return too_large();
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  out.text = std::move(text);
  return out;
}

std::optional<std::string> read_text_file(const std::string& path, std::size_t max_bytes) {
  return read_input_file(path, max_bytes).text;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  // Unique per process and call, so concurrent writers never share a temporary.
  static std::atomic<unsigned> counter{0};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      std::remove(tmp.c_str());
      throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  if (::close(fd) != 0 || !synced || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(err));
  }
}

}  // namespace pathfinder
