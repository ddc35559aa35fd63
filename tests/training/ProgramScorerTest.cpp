// The program scorer with a made-up measure: programs as jobs, the plain
// build measured once per program, candidates deployed as files named by
// their contents, rewards against the plain build's run cost, a program
// whose output changes a failed job. The real measure runs in
// tests/deploy/run-cost.sh (deploy::measureRunCost).
#include "mlgo/training/ProgramScorer.h"

#include "mlgo/policies/Policy.h"
#include "mlgo/support/Files.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

namespace mlgo::training {
namespace {

struct Calls {
  std::vector<std::string> programs, levels, policies; // one per measure
};

// Plain: cost 1000 per program; a policy file whose advice is 1 makes bzip2
// cheaper (900) and changes lz4's output; advice 2 fails to build.
ProgramRunCostScorer::MeasureProgram madeUp(Calls& calls) {
  return [&calls](const std::string& recipe, const std::string& level,
                  const deploy::DeployedPolicies& deployed) -> Expected<deploy::RunCost> {
    calls.programs.push_back(recipe);
    calls.levels.push_back(level);
    deploy::RunCost run;
    run.recipe = recipe;
    run.counts = deploy::CachegrindCounts{};
    run.cost = 1000;
    run.output = recipe + " ok";
    if (deployed.plain()) {
      calls.policies.push_back("plain");
      return run;
    }
    EXPECT_EQ(deployed.policies.size(), 1u);
    EXPECT_EQ(deployed.policies[0].first, "MLGO_EVICTION_POLICY");
    calls.policies.push_back(deployed.policies[0].second);
    Expected<std::string> text = readFileBytes(deployed.policies[0].second);
    EXPECT_TRUE(text);
    const bool one = text->find("\"advice\": 1") != std::string::npos;
    if (text->find("\"advice\": 2") != std::string::npos)
      return makeError(recipe + ": the build failed (see build.log)");
    if (one && recipe == "bzip2")
      run.cost = 900;
    if (one && recipe == "lz4")
      run.output = "lz4 wrong";
    return run;
  };
}

TEST(ProgramRunCostScorer, ProgramsAreJobsAgainstTheirPlainBuilds) {
  mlgo::testing::ScratchDirectory scratch;
  Calls calls;
  ProgramRunCostScorer scorer(evaluators::CompilerTask::regallocEviction(), scratch / "candidates",
                              "O2", madeUp(calls));
  EXPECT_EQ(scorer.task().measure, evaluators::Measure::RunCost);
  std::vector<corpus::ModuleSpec> programs = programModules({"bzip2", "lz4", "zlib-Oz"});
  std::vector<const corpus::ModuleSpec*> modules;
  for (const corpus::ModuleSpec& program : programs)
    modules.push_back(&program);
  auto same = policies::makeConstantPolicy(0), better = policies::makeConstantPolicy(1),
       broken = policies::makeConstantPolicy(2);
  evaluators::EvaluationRequest request;
  request.candidates = {same.get(), better.get(), broken.get()};
  request.modules = modules;
  evaluators::EvaluationResult result = scorer.evaluate(request);
  ASSERT_EQ(result.jobs.size(), 9u);
  EXPECT_EQ(result.measure, evaluators::Measure::RunCost);
  for (size_t m = 0; m < 3; ++m)
    EXPECT_EQ(result.baselineMeasure(m), 1000.0);
  // The plain builds first, once each; a level in the name wins.
  ASSERT_GE(calls.programs.size(), 3u);
  EXPECT_EQ(calls.policies[0], "plain");
  EXPECT_EQ(calls.levels[0], "O2");
  EXPECT_EQ(calls.programs[2], "zlib");
  EXPECT_EQ(calls.levels[2], "Oz");
  EXPECT_EQ(std::count(calls.policies.begin(), calls.policies.end(), "plain"), 3);

  for (size_t m = 0; m < 3; ++m) {
    ASSERT_TRUE(result.job(0, m).ok()) << result.job(0, m).message;
    EXPECT_EQ(result.job(0, m).reward, 0.0);
  }
  ASSERT_TRUE(result.job(1, 0).ok());
  EXPECT_EQ(result.measured(result.job(1, 0)), 900.0);
  EXPECT_GT(result.job(1, 0).reward, 0.0) << "cheaper is rewarded";
  EXPECT_FALSE(result.job(1, 1).ok());
  EXPECT_NE(result.job(1, 1).message.find("lz4: its output differs"), std::string::npos)
      << result.job(1, 1).message;
  EXPECT_FALSE(result.job(2, 0).ok());
  EXPECT_NE(result.job(2, 0).message.find("bzip2: the build failed"), std::string::npos);
  const evaluators::CandidateScore score = result.score(1);
  EXPECT_EQ(score.okModules, 2u);
  EXPECT_EQ(score.totalMeasure, 1900.0);
  EXPECT_EQ(score.totalBaselineMeasure, 2000.0);

  // The same candidate again is the same file, and the plain builds are not
  // measured again: only the three candidate runs.
  const size_t before = calls.programs.size();
  const std::string file = calls.policies[6]; // the plain builds, candidate 0, then 1
  request.candidates = {better.get()};
  evaluators::EvaluationResult again = scorer.evaluate(request);
  EXPECT_EQ(calls.programs.size(), before + 3);
  EXPECT_EQ(calls.policies[before], file);
  EXPECT_EQ(again.measured(again.job(0, 0)), 900.0);
}

TEST(ProgramRunCostScorer, AFailedPlainBuildFailsItsProgramsJobs) {
  mlgo::testing::ScratchDirectory scratch;
  ProgramRunCostScorer scorer(evaluators::CompilerTask::regallocEviction(), scratch / "candidates",
                              "O2",
                              [](const std::string& recipe, const std::string&,
                                 const deploy::DeployedPolicies&) -> Expected<deploy::RunCost> {
                                return makeError(recipe + ": no such recipe");
                              });
  std::vector<corpus::ModuleSpec> programs = programModules({"nonesuch"});
  const corpus::ModuleSpec* module = &programs[0];
  auto policy = policies::makeConstantPolicy(0);
  evaluators::EvaluationRequest request;
  request.candidates = {policy.get()};
  request.modules = {module};
  evaluators::EvaluationResult result = scorer.evaluate(request);
  EXPECT_FALSE(result.baselineMeasure(0));
  ASSERT_FALSE(result.job(0, 0).ok());
  EXPECT_EQ(result.job(0, 0).status, evaluators::JobStatus::BaselineUnavailable);
  EXPECT_NE(result.job(0, 0).message.find("nonesuch: no such recipe"), std::string::npos);
  deploy::RunCostOptions countless;
  countless.cachegrind = false;
  Expected<ProgramRunCostScorer> noCounts = ProgramRunCostScorer::deployed(
      evaluators::CompilerTask::regallocEviction(), countless, scratch.path());
  ASSERT_FALSE(noCounts);
  EXPECT_NE(noCounts.error().message.find("cachegrind"), std::string::npos);
}

} // namespace
} // namespace mlgo::training
