// The parallel evaluator: compiles every (candidate policy, module) pair with
// real clang-22 in interactive mode, answers each decision with the
// candidate's policy, measures the object's size and scores it against the
// module's plain -Oz baseline. ES, PPO and BC all sit on it.
//
// Jobs run on a oneTBB task arena with `workers` threads, each driving one
// clang process; every job writes its result into its own preallocated slot,
// so results are identical whatever the scheduling. A failed compilation is
// a status, never an exception.
#pragma once

#include "mlgo/corpus/CommandLine.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/evaluators/Trajectory.h"
#include "mlgo/policies/Policy.h"
#include "mlgo/support/Expected.h"
#include "mlgo/support/Threads.h"

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
  std::optional<Trajectory> trajectory;

  bool ok() const { return status == JobStatus::Ok; }
};

struct BaselineResult {
  std::optional<uint64_t> sizeBytes;
  bool fromCache = false;
  std::string message; // why it failed
};

struct EvaluatorOptions {
  // clang-22 (from the LLVM install, never /usr/bin/clang which is 14).
  std::string clang = defaultClang();
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

  const JobResult& job(size_t candidate, size_t module) const {
    return jobs[candidate * moduleCount + module];
  }
  CandidateScore score(size_t candidate) const;
};

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

private:
  Evaluator(EvaluatorOptions options, CompilerTask task, std::string compilerIdentity);
  BaselineResult computeBaseline(const corpus::ModuleSpec& module) const;

  EvaluatorOptions options_;
  CompilerTask task_;
  std::string compilerIdentity_;
  std::mutex baselineMutex_;
  std::map<std::string, BaselineResult> baselineMemo_;
};

} // namespace mlgo::evaluators
