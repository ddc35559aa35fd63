// Learning a module-level pipeline choice from a measured matrix: the
// greedy set, the labels, the leave-one-out estimate, and the noise guard.
#include "mlgo/training/PipelineChoice.h"

#include "mlgo/policies/ModuleFeatures.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace mlgo::training {
namespace {

using policies::PassPipeline;

PassPipeline skipping(const std::string& passClass) {
  PassPipeline pipeline;
  pipeline.skipped = {{passClass, std::nullopt}};
  return pipeline;
}

// Six modules in two clusters of features; A wins on the first by 10 a
// module, B on the second, C only on module 0 and by less than A.
struct Fixture {
  std::vector<ChoiceCandidate> pool{PassPipeline{}, skipping("LICMPass"), skipping("GVNPass"),
                                    skipping("SROAPass")};
  std::vector<std::vector<double>> measures{
      {100, 100, 100, 100, 100, 100}, // -Oz
      {90, 90, 90, 104, 104, 104},    // A
      {103, 103, 103, 90, 90, 90},    // B
      {95, 101, 101, 101, 101, 101},  // C
  };
  std::vector<std::vector<double>> features;
  Fixture() {
    const size_t width = policies::moduleFeatureNames().size();
    for (size_t m = 0; m < 6; ++m) {
      std::vector<double> row(width, 0.0);
      row[0] = m < 3 ? 1.0 + 0.01 * m : 5.0 + 0.01 * m;
      features.push_back(row);
    }
  }
};

TEST(PipelineChoice, TheSetCoversTheModulesAndNeighboursChooseWell) {
  Fixture f;
  PipelineChoiceOptions options;
  options.neighbours = 2;
  Expected<PipelineChoiceResult> result =
      choosePipelineSet(f.measures, f.features, f.pool, options);
  ASSERT_TRUE(result) << result.error().message;
  // C adds nothing once A is in: the set stops at three.
  ASSERT_EQ(result->setInPool.size(), 3u);
  EXPECT_EQ(result->setInPool[0], 0u);
  EXPECT_EQ(result->choice.pipelines.size(), 3u);
  EXPECT_EQ(result->fallbackTotal, 600);
  EXPECT_EQ(result->oracleTotal, 540);
  // Each module's neighbours are its cluster's: the estimate is the oracle.
  EXPECT_EQ(result->chosenTotal, 540);
  for (size_t m = 0; m < 6; ++m)
    EXPECT_EQ(result->choice.pipelines[result->leaveOneOut[m]],
              m < 3 ? f.pool[1].pipeline : f.pool[2].pipeline)
        << "module " << m;
  // The learned choice reads unscaled features as the compiler gives them.
  EXPECT_EQ(result->choice.pipelines[result->choice.choose(f.features[4])], f.pool[2].pipeline);
  EXPECT_TRUE(result->choice.heuristicInliner.empty()) << "no candidate runs an inliner policy";

  // Between the clusters the votes split: with an agreement of 0.9 the
  // fallback takes the module, without it the nearer side does.
  std::vector<double> between = f.features[0];
  between[0] = 3.2;
  policies::PipelineChoice choice = result->choice;
  choice.neighbours = 6;
  EXPECT_NE(choice.choose(between), 0u);
  choice.agreement = 0.9;
  EXPECT_EQ(choice.choose(between), 0u);
  EXPECT_NE(choice.choose(f.features[4]), 0u); // a module inside a cluster keeps its choice
}

TEST(PipelineChoice, SmallGainsAndFailuresStayWithTheFallback) {
  Fixture f;
  PipelineChoiceOptions options;
  options.minimumGain = 0.2; // 120 units: neither A's 30 nor B's 30
  Expected<PipelineChoiceResult> result =
      choosePipelineSet(f.measures, f.features, f.pool, options);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->setInPool, std::vector<size_t>{0});
  EXPECT_EQ(result->chosenTotal, 600);

  // A module whose fallback failed counts nowhere; one where A failed is
  // labelled among what compiled.
  f.measures[0][5] = std::numeric_limits<double>::quiet_NaN();
  f.measures[1][0] = std::numeric_limits<double>::quiet_NaN();
  result = choosePipelineSet(f.measures, f.features, f.pool, PipelineChoiceOptions{});
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->fallbackTotal, 500);
  EXPECT_EQ(result->choice.examples.size(), 5u);
  EXPECT_NE(result->choice.pipelines[result->labels[0]], f.pool[1].pipeline);

  options = PipelineChoiceOptions{};
  options.neighbours = 0;
  EXPECT_FALSE(choosePipelineSet(f.measures, f.features, f.pool, options));
  EXPECT_FALSE(choosePipelineSet(f.measures, {}, f.pool, PipelineChoiceOptions{}));
}

// Candidates that run the inliner policy: the set's others are listed as
// keeping LLVM's heuristic, so the written choice knows who inlines where.
TEST(PipelineChoice, TheSetSaysWhereTheInlinerPolicyRuns) {
  Fixture f;
  f.pool[1].withInliner = true; // A: with the inliner policy
  f.pool[3].withInliner = true;
  Expected<PipelineChoiceResult> result =
      choosePipelineSet(f.measures, f.features, f.pool, PipelineChoiceOptions{});
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(result->setInPool.size(), 3u); // -Oz, then A and B (either order)
  std::vector<size_t> heuristic;
  for (size_t s = 0; s < result->setInPool.size(); ++s)
    if (!f.pool[result->setInPool[s]].withInliner)
      heuristic.push_back(s);
  EXPECT_EQ(result->choice.heuristicInliner, heuristic);
  EXPECT_EQ(heuristic.size(), 2u); // -Oz and B
  for (size_t s = 0; s < result->setInPool.size(); ++s)
    EXPECT_EQ(result->choice.inlinerPolicyIn(s), f.pool[result->setInPool[s]].withInliner);
}

} // namespace
} // namespace mlgo::training
