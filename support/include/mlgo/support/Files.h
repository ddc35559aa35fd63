// Whole-file reads and writes whose errors name the file.
#pragma once

#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace mlgo {

Expected<std::string> readFileBytes(const std::filesystem::path& file);

// FNV-1a 64 of some bytes: a stable fingerprint (run files record one per
// module's bitcode), not a cryptographic hash.
uint64_t hashBytes(std::string_view bytes);
Status writeFileBytes(const std::filesystem::path& file, std::string_view bytes);

// Writes beside the target and renames over it, so a reader (or a process
// killed mid-write) never sees half a file. Refuses a target that exists and
// is not a regular file (checkReplaceable).
Status writeFileAtomically(const std::filesystem::path& file, std::string_view bytes);

// An output path that write-then-rename may replace: absent, or a regular
// file (a symbolic link to one is followed by the check, replaced by the
// rename). Renaming over /dev/null or /dev/full would replace the device
// node with a plain file; the error names the path and what it is.
Status checkReplaceable(const std::filesystem::path& file);

// What a path is when it is not a regular file ("a directory", "a FIFO", …),
// for errors that must not call an existing directory "no such file".
std::string fileKind(const std::filesystem::file_status& status);

// A file to read: it exists and is a regular file (or a link to one). The
// error is "PATH: no such WHAT" or "PATH is a directory, not a WHAT".
Status checkRegularFile(const std::filesystem::path& file, std::string_view what);

// An exclusive advisory lock on `<file>.lock` (flock), held while the object
// lives: two trainers writing one run file would each replace the other's
// steps. The lock file holds the owner's pid and is removed with the lock (a
// killed owner's stays, unlocked, and is taken over by the next run).
class FileLock {
public:
  // Fails at once, naming the file and the process that holds it.
  static Expected<FileLock> tryAcquire(const std::filesystem::path& file);
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock();

private:
  FileLock(int fd, std::filesystem::path file) : fd_(fd), file_(std::move(file)) {}
  int fd_ = -1;
  std::filesystem::path file_;
};

} // namespace mlgo
