// Child processes for compilations: started with fork + exec (the child dies with its parent:
// PR_SET_PDEATHSIG), stdout and stderr captured to a file (its tail is kept for the record), waited
// for with a deadline, killed and reaped on every path so no zombie is left.
#pragma once

#include "mlgo/support/Expected.h"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace mlgo::evaluators {

using Clock = std::chrono::steady_clock;

struct ExitStatus {
  // Exactly one of the two is set once the process has ended.
  std::optional<int> exitCode;
  std::optional<int> signal;

  bool succeeded() const { return exitCode && *exitCode == 0; }
  std::string describe() const; // "exit code 1", "signal 11 (Segmentation fault)"
};

class ChildProcess {
public:
  // Starts `program` with `arguments` (argv[1…]); stdout and stderr both go
  // to `outputFile`, stdin is /dev/null. `passedFds` become the child's
  // descriptors 3, 4, … (pipes to a worker); nothing else is inherited.
  static Expected<ChildProcess> spawn(const std::string& program,
                                      const std::vector<std::string>& arguments,
                                      const std::filesystem::path& outputFile,
                                      const std::vector<int>& passedFds = {});

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // Kills and reaps a child that is still running.
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // Non-blocking: the status if the child has ended (reaping it).
  std::optional<ExitStatus> poll();
  // Waits until the child ends or the deadline passes (nullopt then; the
  // child keeps running).
  std::optional<ExitStatus> waitUntil(Clock::time_point deadline);
  // SIGKILL and reap.
  ExitStatus kill();

private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
  std::optional<ExitStatus> ended_;
};

// The last `maxBytes` of a file (whole lines where possible), for records.
std::string readTail(const std::filesystem::path& file, size_t maxBytes = 2048);

// A private directory (mode 0700) that is removed with everything in it when
// the object dies: FIFOs, objects and logs of one compilation. Its name,
// <prefix><pid>-XXXXXX, says which process owns it, so that what a killed
// process left behind can be found (removeAbandonedScratch).
class ScratchDirectory {
public:
  static Expected<ScratchDirectory> create(const std::filesystem::path& parent,
                                           const std::string& prefix);
  ScratchDirectory(ScratchDirectory&& other) noexcept;
  ScratchDirectory& operator=(ScratchDirectory&& other) noexcept;
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory();
  const std::filesystem::path& path() const { return path_; }

private:
  explicit ScratchDirectory(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

// Removes the scratch directories in `parent` whose names start with
// "mlgo-" and whose owning process no longer exists (a trainer killed by
// SIGKILL or a second Ctrl-C cannot clean up after itself). Returns how many.
size_t removeAbandonedScratch(const std::filesystem::path& parent);

} // namespace mlgo::evaluators
