#include "mlgo/support/Files.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace fs = std::filesystem;

namespace mlgo {

Expected<std::string> readFileBytes(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec))
    return makeError(file.string() + ": no such file");
  if (!fs::is_regular_file(file, ec))
    return makeError(file.string() + ": not a regular file");
  // One read into a string of the file's size: a stream buffer copied a
  // file of megabytes (a corpus's bitcode, a policy file) several times
  // while it grew.
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return makeError(file.string() + ": cannot open for reading: " + std::strerror(errno));
  struct stat info {};
  std::string bytes;
  if (::fstat(fd, &info) == 0 && info.st_size > 0)
    bytes.resize(static_cast<size_t>(info.st_size));
  size_t done = 0;
  char probe[4096]; // past the expected end: the file grew, or had no size
  for (;;) {
    const bool atEnd = done == bytes.size();
    const ssize_t got = atEnd ? ::read(fd, probe, sizeof probe)
                              : ::read(fd, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      return makeError(file.string() + ": read error: " + std::strerror(error));
    }
    if (got == 0)
      break;
    if (atEnd)
      bytes.append(probe, static_cast<size_t>(got));
    done += static_cast<size_t>(got);
  }
  ::close(fd);
  bytes.resize(done);
  return bytes;
}

uint64_t hashBytes(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

Status writeFileBytes(const fs::path& file, std::string_view bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out)
    return makeError(file.string() + ": cannot open for writing");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    return makeError(file.string() + ": write error: " + std::strerror(errno));
  return Status::ok();
}

std::string fileKind(const fs::file_status& status) {
  return fs::is_regular_file(status)     ? "a regular file"
         : fs::is_directory(status)      ? "a directory"
         : fs::is_character_file(status) ? "a character device"
         : fs::is_block_file(status)     ? "a block device"
         : fs::is_fifo(status)           ? "a FIFO"
         : fs::is_socket(status)         ? "a socket"
         : !fs::exists(status)           ? "missing"
                                         : "not a regular file";
}

Status checkRegularFile(const fs::path& file, std::string_view what) {
  std::error_code ec;
  fs::file_status status = fs::status(file, ec);
  if (!ec && fs::is_regular_file(status))
    return Status::ok();
  if (ec || !fs::exists(status))
    return makeError(file.string() + ": no such " + std::string(what));
  return makeError(file.string() + " is " + fileKind(status) + ", not a " + std::string(what));
}

Status checkReplaceable(const fs::path& file) {
  std::error_code ec;
  fs::file_status status = fs::status(file, ec);
  if (ec || !fs::exists(status) || fs::is_regular_file(status))
    return Status::ok();
  return makeError(file.string() + " is " + fileKind(status) +
                   "; the output must be a regular file (it is written aside and renamed into "
                   "place)");
}

Status writeFileAtomically(const fs::path& file, std::string_view bytes) {
  if (Status replaceable = checkReplaceable(file); !replaceable)
    return replaceable;
  static std::atomic<uint64_t> counter{0};
  fs::path temporary = file;
  temporary += ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  std::error_code ignored;
  if (Status written = writeFileBytes(temporary, bytes); !written) {
    fs::remove(temporary, ignored);
    return written;
  }
  std::error_code ec;
  fs::rename(temporary, file, ec);
  if (ec) {
    fs::remove(temporary, ignored);
    return makeError(file.string() + ": cannot replace: " + ec.message());
  }
  return Status::ok();
}

Expected<FileLock> FileLock::tryAcquire(const fs::path& file) {
  fs::path lockFile = file;
  lockFile += ".lock";
  // The owner removes the lock file when done; a process that opened it just
  // before may lock the removed file, so a lock counts only while the path
  // still names the file locked (else try again on the new one).
  int fd = -1;
  for (int attempt = 0;; ++attempt) {
    fd = ::open(lockFile.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      return makeError(lockFile.string() + ": cannot open the lock file: " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0)
      break;
    struct stat locked {
    }, named{};
    if (::fstat(fd, &locked) == 0 && ::stat(lockFile.c_str(), &named) == 0 &&
        locked.st_ino == named.st_ino && locked.st_dev == named.st_dev)
      break;
    ::close(fd);
    if (attempt == 8)
      return makeError(lockFile.string() + ": the lock file keeps being replaced");
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char owner[32] = {0};
    ssize_t n = ::pread(fd, owner, sizeof owner - 1, 0);
    ::close(fd);
    std::string pid = n > 0 ? std::string(owner, static_cast<size_t>(n)) : std::string("?");
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' '))
      pid.pop_back();
    return makeError(file.string() + " is being written by another process (pid " + pid +
                     ", lock " + lockFile.string() + "); wait for it or choose another file");
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0)
    (void)!::pwrite(fd, pid.data(), pid.size(), 0);
  return FileLock(fd, lockFile);
}

FileLock::FileLock(FileLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), file_(std::move(other.file_)) {}

FileLock::~FileLock() {
  if (fd_ < 0)
    return;
  // Removed while still held, so no other process can lock this file after
  // the removal and believe it owns the path (tryAcquire checks the inode).
  ::unlink(file_.c_str());
  ::close(fd_); // releases the lock
}

} // namespace mlgo
