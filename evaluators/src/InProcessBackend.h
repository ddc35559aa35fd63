// The in-process backend: a pool of long-lived mlgo-inprocess-worker
// processes (InProcessPool.h) running clang's cc1 through libclang-cpp, the
// policy as the ML inliner's model. A job goes to an idle worker with the
// candidate's policy (sent once per worker and evaluation) and comes back as
// the worker's result message.
//
// The decision-sequence cache lives here: the compiler is deterministic, so
// a module compiled with a decision sequence already seen has a known size.
// At the inliner's end the worker asks with a hash of its decisions; on a
// hit it skips the rest of the pipeline and the job takes the cached size
// and code hash.
#pragma once

#include "InProcessPool.h"
#include "JobRun.h"
#include "mlgo/evaluators/Backend.h"
#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/evaluators/Evaluator.h"

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

namespace mlgo::evaluators {

class InProcessBackend final : public Backend {
public:
  InProcessBackend(EvaluatorOptions options, CompilerTask task);

  BackendKind kind() const override { return BackendKind::InProcess; }
  bool needsSerializedPolicy() const override { return true; }
  // nullopt for a module whose command a worker cannot run (it is then
  // remembered and never sent to a worker again) and for a policy without a
  // file form.
  std::optional<JobResult> compile(const JobSpec& job, const SerializedPolicy* serialized) override;
  BackendStatistics statistics() const override;
  // One worker job: the base compiled once, each trial forked at its
  // decision (the worker's TrialForker). A trial the worker could not
  // answer exactly comes back with the reason to compile it in full.
  std::vector<TrialOutcome> compileTrials(const JobSpec& base, const SerializedPolicy* serialized,
                                          std::span<const DecisionTrial> trials) override;

private:
  // The worker's job message for `spec` (command, task, policy options).
  Expected<protocol::JobMessage> jobMessage(const JobSpec& spec, bool withPolicy,
                                            const std::filesystem::path& object) const;

  struct CachedObject {
    uint64_t sizeBytes = 0;
    uint64_t codeHash = 0;
  };
  // (128-bit sequence hash, decision count) -> the object it gave.
  using SequenceKey = std::array<uint64_t, 3>;
  struct ModuleEntries {
    std::map<SequenceKey, CachedObject> objects;
    double fullCompileSeconds = 0; // summed over compiles that ran to the end
    size_t fullCompiles = 0;
  };

  // The worker's answer (or its death) as the job's result.
  std::optional<JobResult> resultOf(JobRun& run, WorkerOutcome& outcome,
                                    const std::string& moduleKey,
                                    const std::optional<CachedObject>& known);
  // Files the finished job's object under the sequence it asked about.
  void learn(const std::string& moduleKey, const JobResult& done, bool decisionsAfterQuery,
             const std::optional<SequenceKey>& asked);

  EvaluatorOptions options_;
  CompilerTask task_;
  InProcessPool pool_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, ModuleEntries> modules_; // by bitcode path
  std::set<std::string> unsupportedModules_;               // compiled with clang instead
  // Modules whose pipeline asks the policy again after the first inliner run:
  // a prefix of their decisions does not determine the object; never cached.
  std::set<std::string> uncacheableModules_;
  BackendStatistics statistics_;
};

} // namespace mlgo::evaluators
