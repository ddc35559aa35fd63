#include "mlgo/evaluators/Process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <regex>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

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
                                           const fs::path& outputFile,
                                           const std::vector<int>& passedFds) {
  // Everything the child needs is prepared before fork: between fork and
  // exec only async-signal-safe calls are allowed (other threads may hold
  // the allocator's locks).
  std::vector<char*> argv;
  argv.reserve(arguments.size() + 2);
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& a : arguments)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string output = outputFile.string();
  const pid_t parent = getpid();

  // fork + exec rather than posix_spawn, for PR_SET_PDEATHSIG: a trainer
  // that is killed (SIGKILL runs no cleanup) must not leave compilers
  // behind, and a clang whose channel peer vanished would otherwise spin.
  pid_t pid = fork();
  if (pid < 0)
    return makeError("cannot start " + program + ": fork: " + std::strerror(errno));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) // the parent died before prctl took effect
      _exit(127);
    int in = open("/dev/null", O_RDONLY);
    int out = open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0)
      _exit(127);
    dup2(in, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    // Move the passed descriptors out of the way first (a source may sit on
    // a target number), then into place; dup2 clears close-on-exec.
    int moved[8];
    const size_t passed = passedFds.size() < 8 ? passedFds.size() : 8;
    for (size_t i = 0; i < passed; ++i)
      if ((moved[i] = fcntl(passedFds[i], F_DUPFD_CLOEXEC, 16)) < 0)
        _exit(127);
    for (size_t i = 0; i < passed; ++i)
      if (dup2(moved[i], static_cast<int>(3 + i)) < 0)
        _exit(127);
    // The trainer ignores SIGPIPE (for the channel) and SIGXFSZ (to report a
    // file-size limit as a write error) and may block signals in
    // its threads; the compiler gets the defaults.
    struct sigaction defaultAction {};
    defaultAction.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &defaultAction, nullptr);
    sigaction(SIGXFSZ, &defaultAction, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(program.c_str(), argv.data());
    _exit(127); // exec failed: reported as exit code 127
  }
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
  std::string pattern = (parent / (prefix + std::to_string(getpid()) + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    return makeError("cannot create a scratch directory in " + parent.string() + ": " +
                     std::strerror(errno));
  return ScratchDirectory(fs::path(pattern));
}

namespace {

// Whether `pid` still runs: it exists and is not a zombie (a process killed
// when its MPI job ended stays one until its parent reaps it, and what it
// left is as abandoned as a dead process's).
bool processRuns(pid_t pid) {
  // ESRCH: no such process. (EPERM: alive, someone else's.)
  if (::kill(pid, 0) != 0 && errno == ESRCH)
    return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line))
    return true;
  size_t end = line.rfind(')'); // the command may hold spaces and parentheses
  return end == std::string::npos || end + 2 >= line.size() || line[end + 2] != 'Z';
}

} // namespace

size_t removeAbandonedScratch(const fs::path& parent) {
  static const std::regex owned(R"(mlgo-[a-z]+-([0-9]+)-[A-Za-z0-9]{6})");
  // An eviction worker's channel FIFOs (inprocess/src/EvictionCompiler.cpp).
  static const std::regex channel(R"(mlgo-evict-channel-([0-9]+)\.(in|out))");
  size_t removed = 0;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(parent, ec)) {
    std::smatch match;
    std::string name = entry.path().filename().string();
    bool ours = entry.is_directory(ec) ? std::regex_match(name, match, owned)
                                       : std::regex_match(name, match, channel);
    if (!ours)
      continue;
    if (processRuns(static_cast<pid_t>(std::stol(match[1].str()))))
      continue;
    std::error_code removing;
    if (fs::remove_all(entry.path(), removing) > 0 && !removing)
      ++removed;
  }
  return removed;
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
