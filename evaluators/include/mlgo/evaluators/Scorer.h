// The narrow interface the trainers compile through: a set of candidate
// policies × a set of modules in, sizes, rewards and (if asked) trajectories
// out, plus the modules' baselines. The Evaluator implements it with real
// clang; unit tests implement it with made-up sizes, so a whole trainer runs
// without a compiler.
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/evaluators/Job.h"
#include "mlgo/policies/FlipSet.h"
#include "mlgo/policies/Policy.h"
#include "mlgo/support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mlgo::evaluators {

struct CandidateFamily; // Cluster.h

struct EvaluationRequest {
  std::vector<const policies::Policy*> candidates;
  // The candidates as one family (ES), so that MPI ranks get one description
  // instead of every candidate; null: each candidate travels on its own.
  const CandidateFamily* family = nullptr;
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
  // The same in the task's measure (bytes again for code size); totalReward
  // is the relative reward of these.
  double totalMeasure = 0;
  double totalBaselineMeasure = 0;
  double totalReward = 0;
};

struct EvaluationResult {
  size_t candidateCount = 0;
  size_t moduleCount = 0;
  std::vector<JobResult> jobs; // candidate-major: jobs[c * moduleCount + m]
  std::vector<std::optional<uint64_t>> baselineBytes;
  // Each module's baseline in the task's measure (nullopt if it failed).
  std::vector<std::optional<double>> baselineMeasures;
  // Each module's baseline COMDAT groups (EvaluatorOptions::comdat; nullopt
  // when not kept or failed).
  std::vector<std::optional<std::vector<ComdatCode>>> baselineComdat;
  // How the jobs were measured and rewarded; totals are rewarded the same way.
  Measure measure = Measure::TextSize;
  RelativeReward reward;
  // The task's measure of an Ok job, and of module m's baseline (nullopt if
  // the baseline failed).
  double measured(const JobResult& job) const { return job.measured.value_or(0); }
  std::optional<double> baselineMeasure(size_t module) const {
    return module < baselineMeasures.size() ? baselineMeasures[module] : std::nullopt;
  }
  double seconds = 0;
  // Decision-sequence cache, for this evaluation: jobs that asked, jobs
  // whose size was known, and the compile time that saved (each hit's
  // module's mean full-compile time minus the hit's own time).
  size_t cacheLookups = 0;
  size_t cacheHits = 0;
  double cacheSecondsSaved = 0;
  // Trajectory replay, for this evaluation: jobs answered without a
  // compiler, the compile time that saved (each replay's module's mean
  // full-compile time minus the replay's own time), and with verification
  // on, replayed jobs compiled anyway and found identical.
  size_t replays = 0;
  double replaySecondsSaved = 0;
  size_t replaysVerified = 0;
  // Set when the evaluation must not be trusted (a replay that verification
  // found different from the compile): the caller ends its run with it.
  std::optional<Error> problem;

  const JobResult& job(size_t candidate, size_t module) const {
    return jobs[candidate * moduleCount + module];
  }
  CandidateScore score(size_t candidate) const;
};

// Single-decision trials, grouped by module (the decision search's rounds).
struct TrialBatch {
  const corpus::ModuleSpec* module = nullptr;
  const policies::FlipSetPolicy* base = nullptr;
  std::vector<DecisionTrial> trials; // in any order
};

struct TrialRequest {
  std::vector<TrialBatch> batches;
  bool showProgress = false;
};

// The policy a trial compiles with in full: its base, the state toggled.
policies::FlipSetPolicy trialPolicy(const TrialBatch& batch, const DecisionTrial& trial);

struct TrialResults {
  // Per batch, per trial, with trajectories (the trial's measure in
  // `measured`). The same whether answered incrementally or compiled in
  // full (timings aside).
  std::vector<std::vector<JobResult>> jobs;
  size_t trials = 0;
  size_t incremental = 0; // answered from one compile of their base
  size_t verified = 0;    // of those, compiled in full as well and found identical
  // Trials compiled in full, by why (incremental evaluation off, a state met
  // before its position, ...).
  std::map<std::string, size_t> fullCompiles;
  // Set when verification found an incremental answer unlike its compile.
  std::optional<Error> problem;
  double seconds = 0;
};

class Scorer {
public:
  virtual ~Scorer() = default;

  // What compiles: the compiler's identity (version, path, build stamp),
  // written into run files and part of the baseline cache's key.
  virtual const std::string& compilerIdentity() const = 0;
  // What the compiler decides (the Evaluator's task; inlining for size
  // unless a scorer says otherwise).
  virtual const CompilerTask& task() const;
  // The baseline measure (the task's plain compile) of each module.
  virtual std::vector<BaselineResult>
  baselines(std::span<const corpus::ModuleSpec* const> modules) = 0;
  // Every candidate on every module. Results do not depend on scheduling:
  // the same request gives the same numbers (timings aside).
  virtual EvaluationResult evaluate(const EvaluationRequest& request) = 0;
  // Every trial of every batch. This default compiles each in full (its
  // base with the state toggled) through evaluate(); the Evaluator answers
  // them incrementally where it can, with the same results.
  virtual TrialResults evaluateTrials(const TrialRequest& request);
  // Whether evaluateTrials answers a batch for about the price of one
  // compile (then the search sends several trials per module at once).
  virtual bool incrementalTrials() const { return false; }
};

} // namespace mlgo::evaluators
