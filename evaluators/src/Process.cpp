#include "mlgo/evaluators/Process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace fs = std::filesystem;

namespace mlgo::evaluators {

namespace {

ExitStatus decode(int status) {
  ExitStatus result;
  if (WIFEXITED(status))
    result.exitCode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.signal = WTERMSIG(status);
  return result;
}

} // namespace

std::string ExitStatus::describe() const {
  if (exitCode)
    return "exit code " + std::to_string(*exitCode);
  if (signal)
    return "signal " + std::to_string(*signal) + " (" + strsignal(*signal) + ")";
  return "still running";
}

Expected<ChildProcess> ChildProcess::spawn(const std::string& program,
                                           const std::vector<std::string>& arguments,
                                           const fs::path& outputFile) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, outputFile.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);

  // The child must not inherit the trainer's blocked or ignored signals
  // (e.g. SIGPIPE ignored for the channel).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> argv;
  argv.reserve(arguments.size() + 2);
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& a : arguments)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawn(&pid, program.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0)
    return makeError("cannot start " + program + ": " + std::strerror(rc));
  return ChildProcess(pid);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), ended_(other.ended_) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0 && !ended_)
      kill();
    pid_ = std::exchange(other.pid_, -1);
    ended_ = other.ended_;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !ended_)
    kill();
}

std::optional<ExitStatus> ChildProcess::poll() {
  if (ended_ || pid_ <= 0)
    return ended_;
  int status = 0;
  pid_t r;
  do
    r = waitpid(pid_, &status, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == pid_)
    ended_ = decode(status);
  return ended_;
}

std::optional<ExitStatus> ChildProcess::waitUntil(Clock::time_point deadline) {
  // waitpid has no timeout; poll with a short, growing sleep. Compilations
  // take tens of milliseconds at least, so a 1–20 ms step costs nothing.
  auto sleep = std::chrono::milliseconds(1);
  while (true) {
    if (std::optional<ExitStatus> s = poll())
      return s;
    if (Clock::now() >= deadline)
      return std::nullopt;
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, std::chrono::milliseconds(20));
  }
}

ExitStatus ChildProcess::kill() {
  if (ended_ || pid_ <= 0)
    return ended_.value_or(ExitStatus{});
  ::kill(pid_, SIGKILL);
  int status = 0;
  pid_t r;
  do
    r = waitpid(pid_, &status, 0);
  while (r < 0 && errno == EINTR);
  ended_ = r == pid_ ? decode(status) : ExitStatus{std::nullopt, SIGKILL};
  return *ended_;
}

std::string readTail(const fs::path& file, size_t maxBytes) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    return {};
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff start = size > static_cast<std::streamoff>(maxBytes)
                             ? size - static_cast<std::streamoff>(maxBytes)
                             : 0;
  in.seekg(start);
  std::string tail(static_cast<size_t>(size - start), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  if (start > 0) {
    size_t newline = tail.find('\n');
    if (newline != std::string::npos && newline + 1 < tail.size())
      tail.erase(0, newline + 1);
  }
  // Records are text (HDF5 strings cannot hold NUL): binary garbage a
  // crashing compiler printed must not make the record unwritable.
  std::replace(tail.begin(), tail.end(), '\0', ' ');
  return tail;
}

Expected<ScratchDirectory> ScratchDirectory::create(const fs::path& parent,
                                                    const std::string& prefix) {
  std::string pattern = (parent / (prefix + "XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    return makeError("cannot create a scratch directory in " + parent.string() + ": " +
                     std::strerror(errno));
  return ScratchDirectory(fs::path(pattern));
}

ScratchDirectory::ScratchDirectory(ScratchDirectory&& other) noexcept
    : path_(std::exchange(other.path_, fs::path())) {}

ScratchDirectory& ScratchDirectory::operator=(ScratchDirectory&& other) noexcept {
  if (this != &other) {
    if (!path_.empty()) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
    path_ = std::exchange(other.path_, fs::path());
  }
  return *this;
}

ScratchDirectory::~ScratchDirectory() {
  if (!path_.empty()) {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
}

} // namespace mlgo::evaluators
