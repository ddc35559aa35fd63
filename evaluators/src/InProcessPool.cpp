#include "InProcessPool.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <set>
#include <unistd.h>

namespace fs = std::filesystem;

namespace mlgo::evaluators {

struct InProcessPool::Worker {
  std::optional<ChildProcess> process;
  int toWorker = -1;
  int fromWorker = -1;
  std::optional<ScratchDirectory> directory;
  fs::path log;
  // Mirrors what the worker keeps (WorkerProtocol.h): the policies of the
  // newest generation it was sent, plus any older ones sent since.
  std::set<uint64_t> policies;
  uint64_t generation = 0;
  size_t jobs = 0;

  ~Worker() {
    if (toWorker >= 0)
      ::close(toWorker); // end of input: the worker exits on its own
    if (fromWorker >= 0)
      ::close(fromWorker);
    if (process && !process->poll())
      process->waitUntil(Clock::now() + std::chrono::milliseconds(200));
    // ChildProcess's destructor kills and reaps one that is still there.
  }
};

namespace {

// Waits until `fd` has data (or its writer is gone) or the deadline passes.
bool waitReadable(int fd, Clock::time_point deadline) {
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() < 0)
      return false;
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count() + 1, 1000)));
    if (r > 0)
      return true;
    if (r < 0 && errno != EINTR)
      return true; // let the read report the error
  }
}

} // namespace

InProcessPool::InProcessPool(std::string workerProgram, fs::path scratchDirectory,
                             size_t logTailBytes, size_t jobsPerWorker,
                             std::vector<std::string> llvmOptions)
    : program_(std::move(workerProgram)), scratch_(std::move(scratchDirectory)),
      logTailBytes_(logTailBytes), jobsPerWorker_(jobsPerWorker) {
  for (std::string& option : llvmOptions)
    workerArguments_.push_back("--llvm-option=" + std::move(option));
}

InProcessPool::~InProcessPool() = default;

size_t InProcessPool::workersStarted() const {
  std::lock_guard lock(mutex_);
  return started_;
}

Expected<std::unique_ptr<InProcessPool::Worker>> InProcessPool::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<Worker> worker = std::move(idle_.back());
      idle_.pop_back();
      return worker;
    }
  }
  auto worker = std::make_unique<Worker>();
  Expected<ScratchDirectory> directory = ScratchDirectory::create(scratch_, "mlgo-worker-");
  if (!directory)
    return directory.error();
  worker->directory.emplace(std::move(*directory));
  worker->log = worker->directory->path() / "worker.log";
  int jobs[2], results[2];
  if (::pipe2(jobs, O_CLOEXEC) != 0)
    return makeError(std::string("cannot create a worker pipe: ") + std::strerror(errno));
  if (::pipe2(results, O_CLOEXEC) != 0) {
    ::close(jobs[0]);
    ::close(jobs[1]);
    return makeError(std::string("cannot create a worker pipe: ") + std::strerror(errno));
  }
  Expected<ChildProcess> child =
      ChildProcess::spawn(program_, workerArguments_, worker->log, {jobs[0], results[1]});
  ::close(jobs[0]);
  ::close(results[1]);
  worker->toWorker = jobs[1];
  worker->fromWorker = results[0];
  if (!child)
    return makeError("cannot start the in-process worker " + program_ + ": " +
                     child.error().message);
  worker->process.emplace(std::move(*child));
  std::lock_guard lock(mutex_);
  ++started_;
  return worker;
}

void InProcessPool::release(std::unique_ptr<Worker> worker) {
  // Recycling bounds whatever a long-lived LLVM leaks or fragments.
  if (jobsPerWorker_ > 0 && worker->jobs >= jobsPerWorker_)
    return;
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(worker));
}

WorkerOutcome
InProcessPool::run(const protocol::JobMessage& job, const SerializedPolicy* policy,
                   Clock::time_point deadline,
                   const std::function<bool(const protocol::CacheQueryMessage&)>& cacheKnown) {
  WorkerOutcome outcome;
  Expected<std::unique_ptr<Worker>> acquired = acquire();
  if (!acquired) {
    outcome.kind = WorkerOutcome::Kind::SetupFailed;
    outcome.message = acquired.error().message;
    return outcome;
  }
  std::unique_ptr<Worker> worker = acquired.take();
  ++worker->jobs;

  // The worker is gone or unusable: find out how it ended, keep its log.
  auto lost = [&](WorkerOutcome::Kind kind, std::string message) {
    std::optional<ExitStatus> ended = worker->process->waitUntil(
        Clock::now() + std::chrono::milliseconds(kind == WorkerOutcome::Kind::TimedOut ? 0 : 2000));
    // Our own SIGKILL (a worker that would not end) is not a cause; any
    // signal that ended it before (the OOM killer's SIGKILL too) is.
    const bool killedHere = !ended;
    if (!ended)
      ended = worker->process->kill();
    outcome.logTail = readTail(worker->log, logTailBytes_);
    if (kind != WorkerOutcome::Kind::TimedOut) {
      if (ended->signal && !killedHere) {
        kind = WorkerOutcome::Kind::WorkerDied;
        message = "in-process worker died: " + ended->describe();
      } else if (ended->exitCode && *ended->exitCode != 0) {
        kind = WorkerOutcome::Kind::WorkerExited;
        message = "in-process worker exited without an answer: " + ended->describe();
      }
    }
    outcome.kind = kind;
    outcome.message = std::move(message);
    return std::move(outcome); // the worker is dropped, not returned to the pool
  };

  if (policy && !worker->policies.count(policy->id)) {
    if (policy->generation > worker->generation) {
      worker->policies.clear();
      worker->generation = policy->generation;
    }
    protocol::PolicyMessage message{policy->id, policy->generation, policy->json};
    if (!protocol::writeFrame(worker->toWorker, protocol::MessageKind::Policy,
                              protocol::encode(message)))
      return lost(WorkerOutcome::Kind::WorkerExited, "the worker stopped reading");
    worker->policies.insert(policy->id);
  }
  protocol::JobMessage sent = job;
  sent.policyId = policy ? policy->id : 0;
  if (!protocol::writeFrame(worker->toWorker, protocol::MessageKind::Job, protocol::encode(sent)))
    return lost(WorkerOutcome::Kind::WorkerExited, "the worker stopped reading");

  while (true) {
    if (!waitReadable(worker->fromWorker, deadline))
      return lost(WorkerOutcome::Kind::TimedOut,
                  "timed out: no answer from the in-process worker by the deadline");
    Expected<std::optional<protocol::Frame>> frame = protocol::readFrame(worker->fromWorker);
    if (!frame)
      return lost(WorkerOutcome::Kind::ProtocolError, frame.error().message);
    if (!*frame)
      return lost(WorkerOutcome::Kind::WorkerExited, "the worker closed its result pipe");
    if ((*frame)->kind == protocol::MessageKind::CacheQuery) {
      Expected<protocol::CacheQueryMessage> query = protocol::decodeCacheQuery((*frame)->payload);
      if (!query)
        return lost(WorkerOutcome::Kind::ProtocolError, query.error().message);
      protocol::CacheAnswerMessage answer{cacheKnown ? cacheKnown(*query) : false};
      if (!protocol::writeFrame(worker->toWorker, protocol::MessageKind::CacheAnswer,
                                protocol::encode(answer)))
        return lost(WorkerOutcome::Kind::WorkerExited, "the worker stopped reading");
      continue;
    }
    if ((*frame)->kind != protocol::MessageKind::Result)
      return lost(WorkerOutcome::Kind::ProtocolError,
                  "unexpected message kind " +
                      std::to_string(static_cast<uint32_t>((*frame)->kind)) + " from the worker");
    Expected<protocol::ResultMessage> result = protocol::decodeResult((*frame)->payload);
    if (!result)
      return lost(WorkerOutcome::Kind::ProtocolError, result.error().message);
    outcome.kind = WorkerOutcome::Kind::Answered;
    outcome.result = result.take();
    release(std::move(worker));
    return outcome;
  }
}

} // namespace mlgo::evaluators
