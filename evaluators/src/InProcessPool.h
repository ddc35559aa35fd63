// The trainer's side of the in-process backend: a pool of long-lived
// mlgo-inprocess-worker processes, each compiling one job at a time. A job
// takes an idle worker (starting one if none is idle), sends the policy if
// that worker has not seen it, then the job, and waits for the result with
// the job's deadline. A worker that dies or hangs is recorded against the job
// and replaced; the others go on.
#pragma once

#include "mlgo/evaluators/Backend.h"
#include "mlgo/evaluators/Process.h"
#include "mlgo/evaluators/WorkerProtocol.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace mlgo::evaluators {

struct WorkerOutcome {
  enum class Kind {
    Answered,      // `result` holds the worker's answer
    WorkerDied,    // killed by a signal while compiling (crash, abort)
    WorkerExited,  // exited without answering (report_fatal_error, exit(1))
    TimedOut,      // no answer by the deadline; the worker was killed
    ProtocolError, // the worker wrote something that is not the protocol
    SetupFailed,   // the worker could not be started
  };
  Kind kind = Kind::SetupFailed;
  protocol::ResultMessage result;
  std::string message;
  std::string logTail; // the end of the worker's stderr, for crashes
};

class InProcessPool {
public:
  // `llvmOptions`: process-global LLVM options every worker applies once at
  // start (CompilerTask::llvmOptions).
  InProcessPool(std::string workerProgram, std::filesystem::path scratchDirectory,
                size_t logTailBytes, size_t jobsPerWorker,
                std::vector<std::string> llvmOptions = {});
  ~InProcessPool();
  InProcessPool(const InProcessPool&) = delete;
  InProcessPool& operator=(const InProcessPool&) = delete;

  // Runs one job; `policy` null for plain compiles. `cacheKnown` answers the
  // worker's question at the inliner's end.
  WorkerOutcome run(const protocol::JobMessage& job, const SerializedPolicy* policy,
                    Clock::time_point deadline,
                    const std::function<bool(const protocol::CacheQueryMessage&)>& cacheKnown);

  // Workers started so far (restarts after crashes included).
  size_t workersStarted() const;

private:
  struct Worker;
  Expected<std::unique_ptr<Worker>> acquire();
  void release(std::unique_ptr<Worker> worker);

  std::string program_;
  std::vector<std::string> workerArguments_;
  std::filesystem::path scratch_;
  size_t logTailBytes_;
  size_t jobsPerWorker_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Worker>> idle_;
  size_t started_ = 0;
};

} // namespace mlgo::evaluators
