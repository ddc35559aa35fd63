// The parallel evaluator: compiles every (candidate policy, module) pair with
// real clang-22, answers each decision with the candidate's policy, measures
// the object and scores it against the module's plain -Oz baseline. ES, PPO
// and BC all sit on it, through the Scorer interface.
//
// The compiling itself is a Backend's (Backend.h): in-process workers by
// default, clang processes on request; jobs the in-process backend cannot
// take (a -mllvm option in the command, a policy kind without a file form)
// go to clang processes automatically. What is compiled and how it is
// rewarded is the CompilerTask the evaluator is created with.
//
// Jobs run on a oneTBB task arena with `workers` threads, each driving one
// compiler (process or worker); every job writes its result into its own
// preallocated slot, so results are identical whatever the scheduling. A
// failed compilation is a status, never an exception.
#pragma once

#include "mlgo/corpus/CommandLine.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Backend.h"
#include "mlgo/evaluators/Cluster.h"
#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/evaluators/Job.h"
#include "mlgo/evaluators/ReplayStore.h"
#include "mlgo/evaluators/Scorer.h"
#include "mlgo/policies/Policy.h"
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

struct EvaluatorOptions {
  // How modules are compiled (Backend.h).
  BackendKind backend = BackendKind::InProcess;
  // clang-22 (from the LLVM install, never /usr/bin/clang which is 14).
  std::string clang = defaultClang();
  // What identifies the compiler in baseline-cache keys and run files; empty:
  // asked of `clang --version` (~40 ms; a build-time search per translation
  // unit, which keeps no baseline cache, says what it is instead).
  std::string compilerIdentity;
  // The in-process worker executable (built with the project; the
  // MLGO_INPROCESS_WORKER environment variable overrides the default).
  std::string inprocessWorker = defaultInProcessWorker();
  // Skip the pipeline after the inliner when this run has already compiled
  // the module with the same decision sequence (in-process backend only).
  bool decisionCache = true;
  // Trajectory replay (ReplayStore.h): a job whose policy follows a known
  // trajectory of its module to the end is answered without compiling. The
  // store keeps at most replayMemoryBytes (least recently used modules are
  // forgotten first). replayVerify compiles every replayed job anyway and
  // makes the evaluation's `problem` name any difference.
  bool replay = true;
  size_t replayMemoryBytes = size_t{1} << 30;
  bool replayVerify = false;
  // Incremental evaluation (in-process backend, inlining task): a worker
  // generates code only for the functions it has not generated before for
  // the module (inprocess/src/CodeReuse.h), and the decision search's
  // trials are forked from one compile of their module at their decision
  // (Scorer::evaluateTrials, inprocess/src/TrialForker.h). incrementalVerify
  // compiles every such job in full as well and makes the evaluation's
  // `problem` name the first difference. Off by default: on this machine a forked trial costs about
  // what a full compile does (the inliner's decisions end at ~45 % of a
  // compile; code generation, ~46 %, is redone in every child).
  bool incremental = false;
  bool incrementalVerify = false;
  // What each worker's code cache may hold (least recently used modules are
  // forgotten first).
  size_t incrementalMemoryBytes = size_t{256} << 20;
  // A worker is replaced after this many jobs (0: never), bounding whatever
  // a long-lived compiler leaks; a restart costs ~0.1 s.
  size_t jobsPerWorker = 2000;
  // Concurrent compilations; one clang process each.
  size_t workers = hardwareThreads();
  // Per-compilation deadline; a compile past it is killed and recorded as
  // TimedOut. Large modules (SQLite's amalgamation) take ~20 s at -Oz.
  std::chrono::duration<double> compileTimeout = std::chrono::seconds(300);
  // Rank 0 of an MPI job ends it when another rank has sent nothing for this
  // long (serving ranks send a heartbeat every second): stopped (SIGSTOP),
  // hung or cut off by the network. Long enough for a loaded node's
  // scheduler and a network hiccup; short enough that a stall is noticed.
  std::chrono::duration<double> rankDeadline = std::chrono::seconds(30);
  // Where FIFOs, objects and logs of running jobs live (tmpfs when available).
  std::filesystem::path scratchDirectory = defaultScratchDirectory();
  // Keep every object's COMDAT groups (JobResult::comdat, and the
  // baselines' in EvaluationResult::baselineComdat), to count each group once
  // across a code base as a linker does (mlgo-eval report --linked). Replay,
  // the decision cache and incremental evaluation answer with sizes only, so
  // they must be off; a cached baseline without its groups is compiled again.
  bool comdat = false;
  // On-disk baseline cache; nullopt disables it.
  std::optional<std::filesystem::path> baselineCacheDirectory;
  // Applied to every module's command line (ml-compiler-opt's semantics).
  corpus::CommandLineFilters filters;
  // How much of clang's output a failed job keeps.
  size_t stderrTailBytes = 2048;
  // Rank 0 of an MPI job (Cluster.h): jobs spread over every rank's workers,
  // `workers` being rank 0's own; rankWorkers the other ranks' (0: each
  // rank's hardware threads shared by the ranks on its node).
  std::shared_ptr<Cluster> cluster;
  size_t rankWorkers = 0;

  Status validate() const;
  static std::string defaultClang();
  static std::string defaultInProcessWorker();
  static std::filesystem::path defaultScratchDirectory();
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
  CodeReuseCounts reuse;          // incremental evaluation's code reuse (Job.h)
  size_t incrementalVerified = 0; // jobs compiled in full as well and found identical
  // The in-process workers' time by phase (BackendStatistics).
  CompileTimes compileTimes, trialTimes;
  size_t timedCompiles = 0, timedTrials = 0;
  size_t replays = 0; // jobs answered by trajectory replay
  double replaySecondsSaved = 0;
  size_t replaysVerified = 0;
  ReplayStatistics replayStore;
};

class Evaluator final : public Scorer {
public:
  static Expected<std::unique_ptr<Evaluator>> create(EvaluatorOptions options, CompilerTask task);

  const EvaluatorOptions& options() const { return options_; }
  const CompilerTask& task() const override { return task_; }
  const std::string& compilerIdentity() const override { return compilerIdentity_; }

  // Plain -Oz sizes of the modules, compiled in parallel where not cached
  // (in memory for this evaluator, on disk across runs).
  std::vector<BaselineResult>
  baselines(std::span<const corpus::ModuleSpec* const> modules) override;

  // A module's baseline known from elsewhere (mlgo-cc --mlgo-search has just
  // compiled the unit at -Oz through clang itself): not compiled again. The
  // caller vouches for it; a code-size task's only.
  void knowBaseline(const corpus::ModuleSpec& module, uint64_t sizeBytes);

  EvaluationResult evaluate(const EvaluationRequest& request) override;
  TrialResults evaluateTrials(const TrialRequest& request) override;
  bool incrementalTrials() const override;

  // One compilation, on the calling thread (not rewarded: no baseline).
  JobResult compile(const JobSpec& job);
  // The same with the policy's file form given (an MPI rank has it already).
  JobResult compile(const JobSpec& job, const SerializedPolicy* serialized);

  EvaluatorStatistics statistics() const;

  ~Evaluator() override;

private:
  Evaluator(EvaluatorOptions options, CompilerTask task, std::string compilerIdentity);
  BaselineResult computeBaseline(const corpus::ModuleSpec& module);
  // The baselines as compiled (or cached); baselines() adds a code-base
  // measure's values.
  std::vector<BaselineResult> plainBaselines(std::span<const corpus::ModuleSpec* const> modules);
  // The text-linked measure of `module`'s object (`bytes`, `comdat`) against
  // its code base's baselines (computed once per code base).
  Expected<double> linkedMeasure(const corpus::ModuleSpec& module, uint64_t bytes,
                                 const std::optional<std::vector<ComdatCode>>& comdat);
  struct CodeBaseCensus; // a code base's baselines' COMDAT groups (LinkedCode.h)
  Expected<std::shared_ptr<const CodeBaseCensus>>
  censusOf(const std::filesystem::path& corpusDirectory);
  // A job of a task measured by the RegAllocScore that came back without one
  // (it ran in a clang process, e.g. a fallback) is a failed job.
  void requireMeasure(JobResult& job, const corpus::ModuleSpec& module) const;
  // A code-base measure's value (TextLinked) from the job's object, once its
  // compile is done (a baseline compile keeps its size: baselines() adds it).
  void measureOnCodeBase(JobResult& job, const corpus::ModuleSpec& module);
  // The policy in the form the primary backend takes; nullopt if the backend
  // does not need one or the policy has none (then clang compiles its jobs).
  std::optional<SerializedPolicy> serialize(const policies::Policy& policy, uint64_t generation);
  // The primary backend, or clang processes for what it cannot take.
  JobResult dispatch(const JobSpec& job, const SerializedPolicy* serialized);
  // Runs body(i) for i < count, `concurrency_` at a time: on a oneTBB arena,
  // or with a remote backend on plain threads that mostly wait for ranks.
  void forEachJob(size_t count, const std::function<void(size_t)>& body);
  // One job of an evaluation: replayed if it can be, else compiled (and its
  // trajectory learned); `result` collects the evaluation's counts.
  JobResult runJob(JobSpec job, const SerializedPolicy* serialized, EvaluationResult& result);
  // With incrementalVerify: `compiled` must equal the job compiled in full.
  void verifyIncremental(const JobResult& compiled, const JobSpec& job,
                         const SerializedPolicy* serialized, EvaluationResult& result);
  // With replayVerify: the compile of a replayed job must equal the replay.
  void verifyReplay(const JobResult& replayed, const JobResult& compiled, const JobSpec& job,
                    EvaluationResult& result);
  // The evaluation's replays and the compile time they saved, into `result`
  // and the evaluator's totals.
  void countReplays(const EvaluationRequest& request, EvaluationResult& result);
  // The trials of `request` the in-process workers answer from one compile
  // of each batch's base (the rest are marked for a full compile, with why).
  void answerIncrementally(const TrialRequest& request, TrialResults& results,
                           std::vector<std::vector<std::optional<std::string>>>& fullCompile);

  EvaluatorOptions options_;
  CompilerTask task_;
  std::string compilerIdentity_;
  std::mutex baselineMutex_;
  std::map<std::string, BaselineResult> baselineMemo_;
  std::mutex censusMutex_;
  std::map<std::filesystem::path, std::shared_ptr<const CodeBaseCensus>> census_;
  std::unique_ptr<Backend> clang_;   // takes every job
  std::unique_ptr<Backend> primary_; // options_.backend; null when that is clang
  size_t concurrency_ = 1;           // jobs at once (all ranks' slots with a cluster)
  bool remote_ = false;
  class JobThreads;
  std::mutex batchMutex_;
  std::unique_ptr<JobThreads> jobThreads_; // the remote backend's, made on first use
  std::atomic<size_t> fallbackJobs_{0};
  std::unique_ptr<ReplayStore> replay_; // null when replay is off
  mutable std::mutex countsMutex_;      // replay counts and an evaluation's problem
  size_t replays_ = 0;
  double replaySecondsSaved_ = 0;
  size_t replaysVerified_ = 0;
  size_t incrementalVerified_ = 0;
  std::atomic<uint64_t> nextPolicyId_{1};
  std::atomic<uint64_t> nextGeneration_{1};
};

} // namespace mlgo::evaluators
