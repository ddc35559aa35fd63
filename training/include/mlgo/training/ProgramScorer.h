// Whole programs as the jobs a trainer scores: ES with a benchmark
// program's run cost as one job (docs/regalloc-results.md). Each "module" of
// a request names a benchmark program (ModuleSpec::name: a recipe that
// declares a benchmark, or NAME-O2 for another -O level); a candidate's job
// builds that program with the candidate deployed through mlgo-cc (the
// task's launcher variable, e.g. MLGO_EVICTION_POLICY) and runs its
// workload under cachegrind. The measure is the run cost (cachegrind's
// cycle estimate, Measure::RunCost), the baseline the plain build's, the
// reward the task's relative reward of the two, as for modules.
//
// A program whose output differs from the plain build's is a failed job
// naming the program: a policy may change how fast code runs, never what it
// prints. Jobs run one after another (each build runs make with its own
// jobs), and cachegrind's counts do not depend on scheduling, so a request
// gives the same numbers every time; builds are cached by the policy's
// contents (deploy::measureRunCost), so a candidate seen before costs a run.
#pragma once

#include "mlgo/deploy/RunCost.h"
#include "mlgo/evaluators/Scorer.h"

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mlgo::training {

class ProgramRunCostScorer final : public evaluators::Scorer {
public:
  // Measures one program at an -O level with these policies deployed (none:
  // the plain build): deploy::measureRunCost in use, a made-up one in tests.
  using MeasureProgram = std::function<Expected<deploy::RunCost>(
      const std::string& recipe, const std::string& level, const deploy::DeployedPolicies&)>;

  // `task`: how candidates deploy (launcherEnvironment) and are rewarded;
  // its measure becomes Measure::RunCost. `candidateDirectory`: where each
  // candidate is written as a policy file (named by its contents' hash).
  // `level`: the -O level of a program named without one ("O2").
  ProgramRunCostScorer(evaluators::CompilerTask task, std::filesystem::path candidateDirectory,
                       std::string level, MeasureProgram measure);
  // The real one: deploy::measureRunCost with `options` (its optLevel is
  // the programs' default level).
  static Expected<ProgramRunCostScorer> deployed(evaluators::CompilerTask task,
                                                 deploy::RunCostOptions options,
                                                 std::filesystem::path candidateDirectory);

  const std::string& compilerIdentity() const override { return identity_; }
  const evaluators::CompilerTask& task() const override { return task_; }
  std::vector<evaluators::BaselineResult>
  baselines(std::span<const corpus::ModuleSpec* const> modules) override;
  evaluators::EvaluationResult evaluate(const evaluators::EvaluationRequest& request) override;

  // Programs built and run so far (plain builds included; a cached build
  // still runs).
  size_t measured() const { return measured_; }

private:
  // The plain build's run of a program, measured once.
  const Expected<deploy::RunCost>& plain(const std::string& program);
  evaluators::JobResult job(const policies::Policy& candidate, const std::string& program);

  evaluators::CompilerTask task_;
  std::filesystem::path candidateDirectory_;
  std::string level_;
  MeasureProgram measure_;
  std::string identity_;
  std::map<std::string, Expected<deploy::RunCost>> plain_;
  size_t measured_ = 0;
};

// Benchmark programs as the modules of a request (name: the program;
// nothing else is read).
std::vector<corpus::ModuleSpec> programModules(const std::vector<std::string>& programs);

} // namespace mlgo::training
