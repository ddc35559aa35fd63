// The program scorer for real: zlib's benchmark (tiny workload) built from
// source at -O2 with the shipped eviction policy through mlgo-cc and
// plainly, run under cachegrind. The job's measure is the policy build's
// run cost, the baseline the plain build's, and a second request gives the
// same numbers (the build is reused, the counts are deterministic).
#include "mlgo/training/ProgramScorer.h"

#include "mlgo/policies/PolicyFile.h"
#include "mlgo/policies/PolicyLocation.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

namespace mlgo::training {
namespace {

TEST(ProgramRunCost, ZlibWithTheShippedEvictionPolicy) {
  mlgo::testing::ScratchDirectory scratch;
  deploy::RunCostOptions options;
  options.repository = MLGO_SOURCE_DIR;
  options.workRoot = scratch / "work";
  options.launcher = MLGO_LAUNCHER;
  options.optLevel = "O2";
  options.workload = "tiny";
  options.wallRuns = 0;
  Expected<ProgramRunCostScorer> scorer = ProgramRunCostScorer::deployed(
      evaluators::CompilerTask::regallocEviction(), options, scratch / "candidates");
  ASSERT_TRUE(scorer) << scorer.error().message;
  Expected<std::filesystem::path> file = policies::policyFileFor("eviction-o2");
  ASSERT_TRUE(file) << file.error().message;
  Expected<std::unique_ptr<policies::Policy>> policy = policies::loadPolicy(*file);
  ASSERT_TRUE(policy) << policy.error().message;

  std::vector<corpus::ModuleSpec> programs = programModules({"zlib"});
  const corpus::ModuleSpec* zlib = &programs[0];
  evaluators::EvaluationRequest request;
  request.candidates = {policy->get()};
  request.modules = {zlib};
  evaluators::EvaluationResult first = scorer->evaluate(request);
  ASSERT_EQ(first.jobs.size(), 1u);
  ASSERT_TRUE(first.job(0, 0).ok()) << first.job(0, 0).message;
  ASSERT_TRUE(first.baselineMeasure(0));
  const double cost = first.measured(first.job(0, 0)), plain = *first.baselineMeasure(0);
  EXPECT_GT(cost, 0);
  EXPECT_NE(cost, plain) << "the policy's program runs exactly as the plain one";
  EXPECT_EQ(first.job(0, 0).reward, scorer->task().reward(cost, plain));
  EXPECT_EQ(scorer->measured(), 2u); // the plain build and the policy's

  evaluators::EvaluationResult second = scorer->evaluate(request);
  ASSERT_TRUE(second.job(0, 0).ok()) << second.job(0, 0).message;
  EXPECT_EQ(second.measured(second.job(0, 0)), cost);
  EXPECT_EQ(*second.baselineMeasure(0), plain);
}

} // namespace
} // namespace mlgo::training
