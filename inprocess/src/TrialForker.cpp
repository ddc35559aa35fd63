#include "TrialForker.h"
#include "TestHooks.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <poll.h>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mlgo::inprocess {

namespace {

namespace protocol = evaluators::protocol;

protocol::ResultMessage failed(protocol::WorkerStatus status, std::string message) {
  protocol::ResultMessage result;
  result.status = status;
  result.message = std::move(message);
  return result;
}

// Reads the child's whole answer (until it closes the pipe) or until the
// deadline; false when the deadline passed first.
bool readUntilClosed(int fd, std::string& bytes,
                     std::optional<std::chrono::steady_clock::time_point> deadline) {
  char buffer[65536];
  while (true) {
    int wait = -1;
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          *deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        return false;
      wait = static_cast<int>(std::min<long long>(left.count(), 1 << 30));
    }
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, wait);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0)
      return false;
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return true;
    bytes.append(buffer, static_cast<size_t>(n));
  }
}

// fork() copies only the calling thread: with another thread alive (holding
// a lock, say) the child could hang. Checked, not assumed.
bool singleThreaded() {
  std::error_code error;
  size_t threads = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error))
    ++threads;
  return !error && threads == 1;
}

} // namespace

TrialForker::TrialForker(const protocol::JobMessage& job, const policies::FlipSetPolicy& flips,
                         std::function<void(std::string_view)> absorb)
    : trials_(job.trials), flips_(flips), childDeadline_(job.trialSeconds),
      results_(job.trials.size()), absorb_(std::move(absorb)) {}

bool TrialForker::beforeDecision(uint64_t decision, const std::vector<double>& inputs) {
  const uint64_t state = flips_.stateHash(inputs);
  if (isTrial()) // a trial's compile: its state stays toggled to the end
    return state == toggled_;
  // Positions the decisions never reached (a shorter trajectory) stay empty.
  while (next_ < trials_.size() && trials_[next_].position < decision)
    ++next_;
  if (next_ < trials_.size() && trials_[next_].position == decision) {
    const size_t index = next_++;
    if (state != trials_[index].state) {
      results_[index] =
          failed(protocol::WorkerStatus::NotIncremental, "state differs from the trainer's");
    } else if (seen_.count(state)) {
      results_[index] =
          failed(protocol::WorkerStatus::NotIncremental, "state met before its position");
    } else if (next_ == trials_.size()) {
      own_ = index; // the last trial: this process becomes it
      toggled_ = state;
      decisionAt_ = std::chrono::steady_clock::now();
      return true;
    } else {
      results_[index] = fork(index, state);
      if (isChild())
        return true;
    }
  }
  seen_.insert(state);
  return false;
}

protocol::ResultMessage TrialForker::fork(size_t index, uint64_t state) {
  const auto forkedAt = std::chrono::steady_clock::now();
  protocol::ResultMessage answer = runChild(index, state);
  if (isChild())
    return answer;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - forkedAt).count();
  waited_ += seconds;
  if (answer.status == protocol::WorkerStatus::Ok)
    answer.times.handover = std::max(0.0, seconds - answer.times.paid());
  return answer;
}

protocol::ResultMessage TrialForker::runChild(size_t index, uint64_t state) {
  if (!singleThreaded())
    return failed(protocol::WorkerStatus::NotIncremental, "worker not single-threaded");
  int fds[2];
  if (::pipe(fds) != 0)
    return failed(protocol::WorkerStatus::NotIncremental, "fork failed");
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return failed(protocol::WorkerStatus::NotIncremental, "fork failed");
  }
  if (pid == 0) {
    // The child: dies with the worker (a killed worker must leave nothing
    // compiling), and compiles trial `index` to its end.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(3);
    ::close(fds[0]);
    childPipe_ = fds[1];
    own_ = index;
    toggled_ = state;
    decisionAt_ = std::chrono::steady_clock::now();
    return {};
  }
  ::close(fds[1]);
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (childDeadline_.count() > 0)
    deadline = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(childDeadline_);
  std::string bytes;
  const bool closed = readUntilClosed(fds[0], bytes, deadline);
  ::close(fds[0]);
  if (!closed)
    ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!closed)
    return failed(protocol::WorkerStatus::TimedOut, "child timed out");
  if (WIFSIGNALED(status))
    return failed(protocol::WorkerStatus::Crashed, "child crashed");
  // The child's answer: its result's length, the result, then the code it
  // generated.
  uint64_t resultBytes = 0;
  if (bytes.size() >= sizeof resultBytes)
    std::memcpy(&resultBytes, bytes.data(), sizeof resultBytes);
  if (bytes.size() < sizeof resultBytes || bytes.size() - sizeof resultBytes < resultBytes)
    return failed(protocol::WorkerStatus::Crashed, "child crashed");
  std::string_view answer = std::string_view(bytes).substr(sizeof resultBytes);
  Expected<protocol::ResultMessage> decoded = protocol::decodeResult(answer.substr(0, resultBytes));
  if (decoded && absorb_ && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    absorb_(answer.substr(resultBytes));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !decoded)
    return failed(protocol::WorkerStatus::Crashed, "child crashed");
  return decoded.take();
}

void TrialForker::finishChild(const protocol::ResultMessage& answer) {
  protocol::ResultMessage result = answer;
  // A test hook: MLGO_WORKER_FAULT=wrong-trial makes every forked trial one
  // byte larger than it is, which --verify-incremental must catch.
  if (workerFault("wrong-trial"))
    result.sizeBytes += 1;
  const std::string encoded = protocol::encode(result);
  const uint64_t resultBytes = encoded.size();
  std::string bytes(reinterpret_cast<const char*>(&resultBytes), sizeof resultBytes);
  bytes += encoded;
  bytes += learned_;
  const char* data = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(childPipe_, data, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      ::_exit(2);
    data += n;
    left -= static_cast<size_t>(n);
  }
  // No destructors, no atexit handlers, no stdio flush: they belong to the
  // worker this process was copied from.
  ::_exit(0);
}

std::vector<protocol::ResultMessage>
TrialForker::results(std::optional<protocol::ResultMessage> own) {
  if (own_ && own)
    results_[*own_] = std::move(*own);
  std::vector<protocol::ResultMessage> all;
  for (size_t i = 0; i < results_.size(); ++i)
    all.push_back(results_[i]
                      ? std::move(*results_[i])
                      : failed(protocol::WorkerStatus::NotIncremental, "decision not reached"));
  return all;
}

} // namespace mlgo::inprocess
