#include "engine/core/file_io.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>

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

namespace {

[[noreturn]] void cannot(const std::string& path, const std::string& what, int err) {
  throw ConfigError(Diagnostic{SourceLoc{path, 0, 0, ""}, "cannot " + what + ": " + std::strerror(err)});
}

}  // namespace

void create_folder(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) cannot(dir, "create folder", ec.value());
  if (!std::filesystem::is_directory(dir, ec)) cannot(dir, "create folder", ENOTDIR);
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) create_folder(target.parent_path().string());
  // Unique per process and call, so concurrent writers never share a temporary.
  static std::atomic<unsigned> counter{0};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) cannot(path, "write file", errno);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n == 0 ? ENOSPC : errno;
      ::close(fd);
      std::remove(tmp.c_str());
      cannot(path, "write file", err);
    }
    done += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  int err = synced ? 0 : errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    std::remove(tmp.c_str());
    cannot(path, "write file", err);
  }
}

FolderLock::FolderLock(const std::string& dir) {
  create_folder(dir);
  const std::string path = (std::filesystem::path(dir) / ".pathfinder.lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) cannot(path, "write lock file", errno);
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK) {
      throw ConfigError(Diagnostic{SourceLoc{dir, 0, 0, ""},
                                   "another pathfinder run is writing to this folder (it holds "
                                   ".pathfinder.lock); wait for it to finish or choose another --out"});
    }
    cannot(path, "lock", err);
  }
  // Holding the lock, no other writer is under way here: every temporary is a killed run's.
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::size_t at = name.rfind(".tmp.");
    if (at == std::string::npos || at == 0) continue;
    const std::string rest = name.substr(at + 5);  // <pid>.<n>
    const std::size_t dot = rest.find('.');
    const auto digits = [](std::string_view v) {
      return !v.empty() && v.find_first_not_of("0123456789") == std::string_view::npos;
    };
    if (dot == std::string::npos || !digits(std::string_view(rest).substr(0, dot)) ||
        !digits(std::string_view(rest).substr(dot + 1))) {
      continue;
    }
    std::error_code rm;
    if (it->is_regular_file(rm)) std::filesystem::remove(it->path(), rm);
  }
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace pathfinder
