// A made-up compiler behind the trainers' Scorer interface, so whole
// trainers run in unit tests without clang. Every module has a fixed set of
// call sites with features a, b, c (the rl tests' synthetic specs, plus
// inlining_default); inlining a site where a > b saves 3 bytes, elsewhere it
// costs 2. The "heuristic" (inlining_default) inlines only where
// a > b + 150, and the baseline is its size, so a policy can beat it by
// learning a > b. Decisions, sampling streams, trajectories and rewards work
// as the real evaluator's do; chosen jobs and baselines can be made to fail.
#pragma once

#include "RlTestSupport.h"
#include "TestSupport.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Scorer.h"
#include "mlgo/rl/Decisions.h"
#include "mlgo/support/Random.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace mlgo::testing {

// Writes a corpus of `names` whose bitcode and commands are placeholders: the
// fake compiler never reads them.
inline std::filesystem::path writeFakeCorpus(const std::filesystem::path& directory,
                                             const std::vector<std::string>& names) {
  corpus::CorpusDescription description;
  description.modules = names;
  for (const std::string& name : names)
    EXPECT_TRUE(corpus::writeModuleFiles(directory, name, mlgo::testing::kBitcodeSignature + name,
                                         corpus::joinCommandFile({"-cc1", "-Oz"})));
  EXPECT_TRUE(corpus::writeCorpusDescription(directory / corpus::kDescriptionFile, description));
  return directory;
}

class FakeCompiler final : public evaluators::Scorer {
public:
  // Which job of an evaluation fails: (request step, candidate, module name).
  using FailurePredicate = std::function<bool(uint64_t, size_t, const std::string&)>;

  size_t sitesPerModule = 12;
  std::set<std::string> brokenBaselines; // their -Oz compile "fails"
  // Modules that teach the opposite lesson: inlining where a > b costs 3
  // bytes and saves 2 elsewhere (what training learns makes them larger).
  std::set<std::string> invertedModules;
  FailurePredicate fails = [](uint64_t, size_t, const std::string&) { return false; };
  // Claims incremental trials, so the decision search sends several
  // decisions per module and round (Scorer::evaluateTrials compiles each).
  bool incremental = false;
  bool incrementalTrials() const override { return incremental; }
  // Replaces the size model when set: a module's size from the sites where
  // the decision is not the heuristic's, so a test can make flips interact
  // (two that pay only together).
  std::function<int64_t(const std::string&, const std::vector<size_t>&)> flippedSize;

  // The task the trainers are given (the inliner's), its reward included.
  evaluators::CompilerTask compilerTask = evaluators::CompilerTask::inliningForSize();

  const std::string& compilerIdentity() const override { return identity_; }
  const evaluators::CompilerTask& task() const override { return compilerTask; }

  std::vector<evaluators::BaselineResult>
  baselines(std::span<const corpus::ModuleSpec* const> modules) override {
    std::vector<evaluators::BaselineResult> results;
    for (const corpus::ModuleSpec* module : modules) {
      evaluators::BaselineResult baseline;
      if (brokenBaselines.count(module->name))
        baseline.message = "baseline (-Oz) compile failed: made up";
      else {
        baseline.sizeBytes = sizeOf(module->name, sites(module->name), defaults(module->name));
        baseline.measured = static_cast<double>(*baseline.sizeBytes); // it measures the size
      }
      results.push_back(baseline);
    }
    return results;
  }

  evaluators::EvaluationResult evaluate(const evaluators::EvaluationRequest& request) override {
    ++evaluations;
    evaluators::EvaluationResult result;
    result.candidateCount = request.candidates.size();
    result.moduleCount = request.modules.size();
    for (const evaluators::BaselineResult& b : baselines(request.modules)) {
      result.baselineBytes.push_back(b.sizeBytes);
      result.baselineMeasures.push_back(b.measured);
    }
    for (size_t c = 0; c < result.candidateCount; ++c)
      for (size_t m = 0; m < result.moduleCount; ++m)
        result.jobs.push_back(compile(request, c, m, result.baselineBytes[m]));
    return result;
  }

  size_t evaluations = 0;

private:
  // Rows of syntheticSpecs() (a, b, c, inlining_default) of a module's sites.
  std::vector<double> sites(const std::string& module) const {
    uint64_t key = 1469598103934665603ULL; // FNV-1a of the name
    for (char ch : module)
      key = (key ^ static_cast<unsigned char>(ch)) * 1099511628211ULL;
    RandomStream rng(key);
    std::vector<double> rows;
    for (size_t s = 0; s < sitesPerModule; ++s) {
      double a = static_cast<double>(rng.uniformBelow(1000));
      double b = static_cast<double>(rng.uniformBelow(1000));
      double c = static_cast<double>(rng.uniformBelow(20));
      rows.insert(rows.end(), {a, b, c, a > b + 150 ? 1.0 : 0.0});
    }
    return rows;
  }
  std::vector<int64_t> defaults(const std::string& module) const {
    std::vector<double> rows = sites(module);
    std::vector<int64_t> inline_;
    for (size_t s = 0; s < sitesPerModule; ++s)
      inline_.push_back(static_cast<int64_t>(rows[s * 4 + 3]));
    return inline_;
  }
  uint64_t sizeOf(const std::string& module, const std::vector<double>& rows,
                  const std::vector<int64_t>& actions) const {
    if (flippedSize) {
      std::vector<size_t> flipped;
      for (size_t s = 0; s < actions.size(); ++s)
        if (actions[s] != static_cast<int64_t>(rows[s * 4 + 3]))
          flipped.push_back(s);
      return static_cast<uint64_t>(flippedSize(module, flipped));
    }
    const int64_t sign = invertedModules.count(module) ? -1 : 1;
    int64_t size = 2000;
    for (size_t s = 0; s < actions.size(); ++s)
      if (actions[s] == 1)
        size -= sign * (rows[s * 4] > rows[s * 4 + 1] ? 3 : -2);
    return static_cast<uint64_t>(size);
  }

  evaluators::JobResult compile(const evaluators::EvaluationRequest& request, size_t c, size_t m,
                                std::optional<uint64_t> baseline) const {
    const corpus::ModuleSpec& module = *request.modules[m];
    evaluators::JobResult job;
    if (!baseline) {
      job.status = evaluators::JobStatus::BaselineUnavailable;
      job.message = "module \"" + module.name + "\": no baseline";
      return job;
    }
    if (fails(request.step, c, module.name)) {
      job.status = evaluators::JobStatus::CompilerCrashed;
      job.message = "module \"" + module.name + "\": made-up crash";
      job.stderrTail = "fake stack dump";
      return job;
    }
    const policies::Policy& policy = *request.candidates[c];
    Expected<rl::FeatureGather> gather =
        rl::FeatureGather::create(rl::testing::syntheticSpecs(), policy.inputs());
    EXPECT_TRUE(gather) << gather.error().message;
    std::vector<double> rows = sites(module.name);
    policies::Trajectory trajectory;
    trajectory.featureSpecs = rl::testing::syntheticSpecs();
    trajectory.width = 4;
    RandomStream rng(deriveKey({request.seed, request.step, c, m}));
    std::vector<double> inputs(gather->width());
    for (size_t s = 0; s < sitesPerModule; ++s) {
      gather->gather(rows.data() + s * 4, inputs.data());
      policies::Decision decision = policy.decide(inputs, request.mode, rng);
      trajectory.observations.insert(trajectory.observations.end(), rows.begin() + s * 4,
                                     rows.begin() + s * 4 + 4);
      trajectory.defaultDecisions.push_back(static_cast<int64_t>(rows[s * 4 + 3]));
      trajectory.actions.push_back(decision.advice);
      trajectory.logProbabilities.push_back(decision.logProbability);
    }
    job.status = evaluators::JobStatus::Ok;
    job.decisions = sitesPerModule;
    job.sizeBytes = sizeOf(module.name, rows, trajectory.actions);
    job.codeHash = job.sizeBytes;
    job.measured = static_cast<double>(job.sizeBytes);
    job.reward = evaluators::sizeReward(job.sizeBytes, *baseline);
    if (request.recordTrajectories)
      job.trajectory = std::move(trajectory);
    return job;
  }

  std::string identity_ = "fake compiler (tests/training/FakeCompiler.h)";
};

} // namespace mlgo::testing
