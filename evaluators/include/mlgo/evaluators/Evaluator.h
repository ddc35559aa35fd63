// The parallel evaluator: compiles every (candidate policy, module) pair with
// real clang-22 in interactive mode, answers each decision with the
// candidate's policy, measures the object's size and scores it against the
// module's plain -Oz baseline. ES, PPO and BC all sit on it.
//
// Two backends compile the same thing (the module's own cc1 command line):
//  - inprocess (default): long-lived mlgo-inprocess-worker processes run
//    clang's cc1 through libclang-cpp with the policy as the ML inliner's
//    model: no process start and no pipe round trip per decision. The
//    compiler is deterministic, so a decision sequence already seen for a
//    module has a known size: the worker asks when the inliner is done and
//    skips the rest of the pipeline on a hit (the decision-sequence cache).
//  - clang: a clang-22 process per compilation in interactive mode, the
//    policy answering over FIFOs (what ml-compiler-opt does). Modules or
//    policies the in-process backend cannot take (a -mllvm option in the
//    command, a policy kind without a file form) go this way automatically.
//
// Jobs run on a oneTBB task arena with `workers` threads, each driving one
// compiler (process or worker); every job writes its result into its own
// preallocated slot, so results are identical whatever the scheduling. A
// failed compilation is a status, never an exception.
#pragma once

#include "mlgo/corpus/CommandLine.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/policies/Policy.h"
#include "mlgo/policies/Trajectory.h"
#include "mlgo/support/Expected.h"
#include "mlgo/support/Threads.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mlgo::evaluators {

enum class JobStatus {
  Ok,
  CompilerCrashed,     // killed by a signal
  CompilerFailed,      // exited with a non-zero code
  TimedOut,            // passed the per-compilation deadline; killed
  ProtocolError,       // the channel carried something the protocol does not allow
  BadObject,           // the object is missing or unreadable
  PolicyMismatch,      // the policy's inputs disagree with clang's header
  BaselineUnavailable, // the module's -Oz baseline failed, so it cannot be scored
  SetupFailed,         // scratch directory, FIFOs or spawn failed
};

std::string_view jobStatusName(JobStatus status);

enum class Backend { InProcess, Clang };
std::string_view backendName(Backend backend); // "inprocess", "clang"
Expected<Backend> parseBackend(std::string_view name);

// ml-compiler-opt's reward: 1 − (size + δ) / (baseline + δ), δ = 0.01.
double sizeReward(uint64_t sizeBytes, uint64_t baselineBytes);

struct JobResult {
  JobStatus status = JobStatus::SetupFailed;
  std::string message;    // what went wrong, naming the module
  std::string stderrTail; // the end of clang's output, for the record
  uint64_t sizeBytes = 0; // code size of the object (Ok only)
  // Hash (xxh3) of the code sections' bytes: equal hashes mean identical
  // code, e.g. a policy that reproduces -Oz exactly (Ok only).
  uint64_t codeHash = 0;
  double reward = 0;      // against the baseline (Ok only)
  uint64_t decisions = 0; // observations answered
  double seconds = 0;
  // The size came from the decision-sequence cache (in-process backend):
  // the inliner ran to its end, the rest of the pipeline was skipped.
  bool cacheHit = false;
  std::optional<policies::Trajectory> trajectory;

  bool ok() const { return status == JobStatus::Ok; }
};

struct BaselineResult {
  std::optional<uint64_t> sizeBytes;
  bool fromCache = false;
  std::string message; // why it failed
};

struct EvaluatorOptions {
  // How modules are compiled (see the top of this file).
  Backend backend = Backend::InProcess;
  // clang-22 (from the LLVM install, never /usr/bin/clang which is 14).
  std::string clang = defaultClang();
  // The in-process worker executable (built with the project; the
  // MLGO_INPROCESS_WORKER environment variable overrides the default).
  std::string inprocessWorker = defaultInProcessWorker();
  // Skip the pipeline after the inliner when this run has already compiled
  // the module with the same decision sequence (in-process backend only).
  bool decisionCache = true;
  // A worker is replaced after this many jobs (0: never), bounding whatever
  // a long-lived compiler leaks; a restart costs ~0.1 s.
  size_t jobsPerWorker = 2000;
  // Concurrent compilations; one clang process each.
  size_t workers = hardwareThreads();
  // Per-compilation deadline; a compile past it is killed and recorded as
  // TimedOut. Large modules (SQLite's amalgamation) take ~20 s at -Oz.
  std::chrono::duration<double> compileTimeout = std::chrono::seconds(300);
  // Where FIFOs, objects and logs of running jobs live (tmpfs when available).
  std::filesystem::path scratchDirectory = defaultScratchDirectory();
  // On-disk baseline cache; nullopt disables it.
  std::optional<std::filesystem::path> baselineCacheDirectory;
  // Applied to every module's command line (ml-compiler-opt's semantics).
  corpus::CommandLineFilters filters;
  // How much of clang's output a failed job keeps.
  size_t stderrTailBytes = 2048;

  Status validate() const;
  static std::string defaultClang();
  static std::string defaultInProcessWorker();
  static std::filesystem::path defaultScratchDirectory();
};

struct EvaluationRequest {
  std::vector<const policies::Policy*> candidates;
  std::vector<const corpus::ModuleSpec*> modules;
  policies::DecisionMode mode = policies::DecisionMode::Deterministic;
  // Sampling streams derive from (seed, step, candidate, module).
  uint64_t seed = 0;
  uint64_t step = 0;
  bool recordTrajectories = false;
  bool showProgress = false;
};

struct CandidateScore {
  size_t okModules = 0;
  size_t failedModules = 0;
  // Mean of per-module rewards over the Ok modules.
  double meanReward = 0;
  // Sum of sizes vs sum of baselines over the Ok modules.
  uint64_t totalBytes = 0;
  uint64_t totalBaselineBytes = 0;
  double totalReward = 0;
};

struct EvaluationResult {
  size_t candidateCount = 0;
  size_t moduleCount = 0;
  std::vector<JobResult> jobs; // candidate-major: jobs[c * moduleCount + m]
  std::vector<std::optional<uint64_t>> baselineBytes;
  double seconds = 0;
  // Decision-sequence cache, for this evaluation: jobs that asked, jobs
  // whose size was known, and the compile time that saved (each hit's
  // module's mean full-compile time minus the hit's own time).
  size_t cacheLookups = 0;
  size_t cacheHits = 0;
  double cacheSecondsSaved = 0;

  const JobResult& job(size_t candidate, size_t module) const {
    return jobs[candidate * moduleCount + module];
  }
  CandidateScore score(size_t candidate) const;
};

// Totals over an evaluator's life (all evaluate/compile calls).
struct EvaluatorStatistics {
  size_t inprocessJobs = 0; // compiled by a worker
  size_t clangJobs = 0;     // compiled by a clang process (backend or fallback)
  size_t fallbackJobs = 0;  // of those, sent to clang because a worker could not take them
  size_t cacheLookups = 0;
  size_t cacheHits = 0;
  double cacheSecondsSaved = 0;
  size_t workersStarted = 0;
};

class InProcessPool;
struct SerializedPolicy;
struct InProcessState;

class Evaluator {
public:
  static Expected<std::unique_ptr<Evaluator>> create(EvaluatorOptions options, CompilerTask task);

  const EvaluatorOptions& options() const { return options_; }
  const CompilerTask& task() const { return task_; }
  const std::string& compilerIdentity() const { return compilerIdentity_; }

  // Plain -Oz sizes of the modules, compiled in parallel where not cached
  // (in memory for this evaluator, on disk across runs).
  std::vector<BaselineResult> baselines(std::span<const corpus::ModuleSpec* const> modules);

  EvaluationResult evaluate(const EvaluationRequest& request);

  // One compilation, on the calling thread. `policy` null: a plain compile.
  JobResult compile(const corpus::ModuleSpec& module, const policies::Policy* policy,
                    policies::DecisionMode mode, uint64_t rngKey, bool recordTrajectory) const;

  EvaluatorStatistics statistics() const;

  ~Evaluator();

private:
  Evaluator(EvaluatorOptions options, CompilerTask task, std::string compilerIdentity);
  BaselineResult computeBaseline(const corpus::ModuleSpec& module) const;
  // The policy in the form workers take; nullopt if it has none (then the
  // clang backend compiles its jobs).
  std::optional<SerializedPolicy> serialize(const policies::Policy& policy,
                                            uint64_t generation) const;
  JobResult compileJob(const corpus::ModuleSpec& module, const policies::Policy* policy,
                       const SerializedPolicy* serialized, policies::DecisionMode mode,
                       uint64_t rngKey, bool recordTrajectory) const;
  JobResult compileWithClang(const corpus::ModuleSpec& module, const policies::Policy* policy,
                             policies::DecisionMode mode, uint64_t rngKey,
                             bool recordTrajectory) const;
  // nullopt: a worker cannot take this module; use clang.
  std::optional<JobResult> compileInProcess(const corpus::ModuleSpec& module,
                                            const SerializedPolicy* policy,
                                            policies::DecisionMode mode, uint64_t rngKey,
                                            bool recordTrajectory) const;

  EvaluatorOptions options_;
  CompilerTask task_;
  std::string compilerIdentity_;
  std::mutex baselineMutex_;
  std::map<std::string, BaselineResult> baselineMemo_;
  std::unique_ptr<InProcessPool> pool_;
  std::unique_ptr<InProcessState> inprocess_; // cache, statistics, unsupported modules
  mutable std::atomic<uint64_t> nextPolicyId_{1};
  mutable std::atomic<uint64_t> nextGeneration_{1};
};

} // namespace mlgo::evaluators
