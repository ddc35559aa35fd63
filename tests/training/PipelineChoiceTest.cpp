// Learning a module-level pipeline choice from a measured matrix: the
// greedy set, the labels, the leave-one-out estimate, and the noise guard.
#include "mlgo/training/PipelineChoice.h"

#include "mlgo/policies/ModuleFeatures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

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
  EXPECT_FALSE(result->codeBaseOutTotal) << "no code bases given";
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

// The cost vote: a neighbour where a pipeline lost much outweighs several
// where it won a little, which the label vote cannot see; the learned
// examples carry each set pipeline's relative change against the fallback.
TEST(PipelineChoice, TheCostVoteWeighsWhatEachNeighbourWouldLose) {
  Fixture f;
  // Module 3 of B's cluster: B now wins by 1 there, module 4 by 1, and
  // module 5 loses 30 with B.
  f.measures[2] = {103, 103, 103, 99, 99, 130};
  PipelineChoiceOptions options;
  options.neighbours = 3;
  options.setSize = 3;
  Expected<PipelineChoiceResult> labels =
      choosePipelineSet(f.measures, f.features, f.pool, options);
  ASSERT_TRUE(labels) << labels.error().message;
  options.vote = PipelineChoiceOptions::Vote::Cost;
  Expected<PipelineChoiceResult> costs = choosePipelineSet(f.measures, f.features, f.pool, options);
  ASSERT_TRUE(costs) << costs.error().message;
  ASSERT_EQ(costs->setInPool, labels->setInPool);
  const std::vector<size_t>& set = costs->setInPool;
  const size_t b = static_cast<size_t>(std::find(set.begin(), set.end(), 2u) - set.begin());
  ASSERT_LT(b, set.size()) << "B is in the set";
  for (size_t m = 0; m < 6; ++m) {
    const std::vector<double>& example = costs->choice.examples[m].costs;
    ASSERT_EQ(example.size(), set.size());
    EXPECT_EQ(example[0], 0);
    EXPECT_DOUBLE_EQ(example[b], (f.measures[2][m] - 100) / 100) << "module " << m;
  }
  // A new module amid B's cluster: two of its three neighbours vote B by
  // label; by cost B loses on average (−1 %, −1 %, +30 %), so the fallback
  // keeps it.
  std::vector<double> amid = f.features[4];
  amid[0] += 0.001;
  EXPECT_EQ(labels->choice.choose(amid), b);
  EXPECT_EQ(costs->choice.choose(amid), 0u);

  // The margin: A's cluster gains 10 % a module; a margin above that keeps
  // the fallback.
  EXPECT_NE(costs->choice.choose(f.features[1]), 0u);
  policies::PipelineChoice cautious = costs->choice;
  cautious.margin = 0.11;
  EXPECT_EQ(cautious.choose(f.features[1]), 0u);
  cautious.margin = 0.09;
  EXPECT_NE(cautious.choose(f.features[1]), 0u);

  PipelineChoiceOptions mixed = PipelineChoiceOptions{};
  mixed.margin = 0.01;
  EXPECT_FALSE(mixed.validate()) << "a margin needs the cost vote";
  policies::PipelineChoice partly = costs->choice;
  partly.examples[2].costs.clear();
  EXPECT_FALSE(partly.validate()) << "costs in some examples only";
}

// The two guards on the cost vote. Agreement: B's mean gain in its cluster
// comes from one module (−30 %) while it loses 1 % on the other two, so
// a module equally near all three is B's by the mean and the fallback's
// when B must gain on 0.6 of the neighbours' weight. Novelty: a module
// farther from every example than the examples are from each other keeps
// the fallback, a module at an example does not.
TEST(PipelineChoice, GuardsKeepTheFallbackWhereTheVoteIsThinOrTheModuleNovel) {
  Fixture f;
  f.measures[2] = {103, 103, 103, 70, 101, 101};
  PipelineChoiceOptions options;
  options.neighbours = 3;
  options.setSize = 3;
  options.vote = PipelineChoiceOptions::Vote::Cost;
  Expected<PipelineChoiceResult> plain = choosePipelineSet(f.measures, f.features, f.pool, options);
  ASSERT_TRUE(plain) << plain.error().message;
  const std::vector<size_t>& set = plain->setInPool;
  const size_t a = static_cast<size_t>(std::find(set.begin(), set.end(), 1u) - set.begin());
  const size_t b = static_cast<size_t>(std::find(set.begin(), set.end(), 2u) - set.begin());
  ASSERT_LT(a, set.size());
  ASSERT_LT(b, set.size());
  EXPECT_TRUE(std::isinf(plain->choice.maxDistance)) << "the novelty guard is off by default";
  std::vector<double> equidistant = f.features[4];
  equidistant[1] = 10; // far along another feature: the three weigh alike
  EXPECT_EQ(plain->choice.choose(equidistant), b);

  options.agreement = 0.6;
  ASSERT_TRUE(options.validate()) << "an agreement with the cost vote";
  Expected<PipelineChoiceResult> agreeing =
      choosePipelineSet(f.measures, f.features, f.pool, options);
  ASSERT_TRUE(agreeing) << agreeing.error().message;
  EXPECT_EQ(agreeing->choice.agreement, 0.6);
  EXPECT_EQ(agreeing->choice.choose(equidistant), 0u) << "B gains on a third of the weight";
  EXPECT_EQ(agreeing->choice.choose(f.features[1]), a) << "A gains on all of its cluster";
  policies::PipelineChoice lenient = agreeing->choice;
  lenient.agreement = 0.3;
  EXPECT_EQ(lenient.choose(equidistant), b);

  // The median vote (round 21): B's median cost among the three is +1 %,
  // so the fallback keeps the module without an agreement share.
  options.agreement = 0;
  options.vote = PipelineChoiceOptions::Vote::CostMedian;
  Expected<PipelineChoiceResult> median =
      choosePipelineSet(f.measures, f.features, f.pool, options);
  ASSERT_TRUE(median) << median.error().message;
  EXPECT_EQ(median->choice.vote, policies::PipelineChoice::CostVote::Median);
  ASSERT_EQ(median->choice.examples[0].costs.size(), set.size()) << "the examples carry costs";
  EXPECT_EQ(median->choice.choose(equidistant), 0u) << "B gains on a third of the weight";
  EXPECT_EQ(median->choice.choose(f.features[1]), a) << "A gains on all of its cluster";
  options.vote = PipelineChoiceOptions::Vote::Cost;

  options.agreement = 0;
  options.novelty = 0.5;
  Expected<PipelineChoiceResult> guarded =
      choosePipelineSet(f.measures, f.features, f.pool, options);
  ASSERT_TRUE(guarded) << guarded.error().message;
  EXPECT_GT(guarded->choice.maxDistance, 0);
  EXPECT_LT(guarded->choice.maxDistance, 0.1) << "within a cluster, examples are 0.005 apart";
  EXPECT_EQ(guarded->choice.choose(equidistant), 0u);
  EXPECT_EQ(guarded->choice.choose(f.features[1]), a);

  // Across code bases (each cluster its own code base): the threshold is
  // the distance between the clusters, so a module between them is typical
  // there and novel by the distances within a cluster.
  options.noveltyAcrossCodeBases = true;
  EXPECT_FALSE(choosePipelineSet(f.measures, f.features, f.pool, options))
      << "across code bases needs each module's code base";
  const std::vector<std::string> codeBases{"a", "a", "a", "b", "b", "b"};
  Expected<PipelineChoiceResult> across =
      choosePipelineSet(f.measures, f.features, f.pool, options, codeBases);
  ASSERT_TRUE(across) << across.error().message;
  EXPECT_GT(across->choice.maxDistance, 10 * guarded->choice.maxDistance);
  std::vector<double> between = f.features[1];
  between[0] += 0.5; // a tenth of the way to the other cluster
  EXPECT_EQ(guarded->choice.choose(between), 0u);
  EXPECT_EQ(across->choice.choose(between), a);
  options.novelty = 1;
  EXPECT_FALSE(options.validate()) << "across code bases without a quantile";
  options.noveltyAcrossCodeBases = false;
  options.novelty = 0;
  EXPECT_FALSE(options.validate());
  options.novelty = 1.5;
  EXPECT_FALSE(options.validate());
}

// With a vocabulary, the features end with the embedding: the learned
// choice names them and carries the vocabulary; features without them are
// refused.
TEST(PipelineChoice, AnEmbeddingJoinsTheFeatures) {
  Fixture f;
  PipelineChoiceOptions options;
  options.embedding = policies::Ir2VecVocabulary{{"Add", "Load"}, {{1, 0}, {0, 1}}, {}};
  EXPECT_FALSE(choosePipelineSet(f.measures, f.features, f.pool, options))
      << "features without the embedding";
  for (size_t m = 0; m < f.features.size(); ++m) {
    f.features[m].push_back(m < 3 ? 0.1 : 0.9);
    f.features[m].push_back(0.5);
  }
  Expected<PipelineChoiceResult> result =
      choosePipelineSet(f.measures, f.features, f.pool, options);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->choice.features, policies::moduleFeatureNames(2));
  ASSERT_TRUE(result->choice.embedding);
  EXPECT_EQ(result->choice.embedding->entities, options.embedding->entities);
  EXPECT_TRUE(result->choice.validate());
  EXPECT_EQ(result->chosenTotal, 540); // the clusters still choose their own
}

// Leave one code base out: when each cluster is one code base, the other
// code base's examples choose for it (the wrong pipeline: A's modules get B,
// 103 each, and B's get A, 104 each); when both code bases have modules in
// each cluster, the estimate stays the oracle.
TEST(PipelineChoice, LeavingOneCodeBaseOutChoosesByTheOthers) {
  Fixture f;
  PipelineChoiceOptions options;
  options.neighbours = 2;
  Expected<PipelineChoiceResult> apart = choosePipelineSet(
      f.measures, f.features, f.pool, options, {"zlib", "zlib", "zlib", "lua", "lua", "lua"});
  ASSERT_TRUE(apart) << apart.error().message;
  EXPECT_EQ(apart->chosenTotal, 540); // leave one module out does not see it
  ASSERT_TRUE(apart->codeBaseOutTotal);
  EXPECT_EQ(*apart->codeBaseOutTotal, 3 * 103 + 3 * 104);
  EXPECT_EQ(apart->leaveCodeBaseOut[0], apart->labels[3]);
  Expected<PipelineChoiceResult> mixed = choosePipelineSet(
      f.measures, f.features, f.pool, options, {"zlib", "lua", "zlib", "lua", "zlib", "lua"});
  ASSERT_TRUE(mixed) << mixed.error().message;
  EXPECT_EQ(*mixed->codeBaseOutTotal, 540);
  EXPECT_FALSE(choosePipelineSet(f.measures, f.features, f.pool, options, {"zlib"}));
}

// The pool's measures in a file: read back exactly (failures included),
// found by candidate whatever the pool's order, missing for a candidate
// not stored, and refused for another context or module list.
TEST(PipelineChoice, ThePoolsMeasuresRoundTripThroughAFile) {
  Fixture f;
  f.measures[1][2] = std::numeric_limits<double>::quiet_NaN();
  f.measures[3][4] = 101.25;
  std::vector<corpus::ModuleSpec> specs(6);
  std::vector<const corpus::ModuleSpec*> modules;
  for (size_t m = 0; m < 6; ++m) {
    specs[m].name = "dir/module" + std::to_string(m) + ".c";
    modules.push_back(&specs[m]);
  }
  const std::string path = ::testing::TempDir() + "/pool-measures.tsv";
  PoolMeasures stored;
  for (size_t p = 0; p < f.pool.size(); ++p)
    stored.store(f.pool[p], f.measures[p]);
  ASSERT_TRUE(writePoolMeasures(path, "text-size, inliner none", modules, stored));
  Expected<PoolMeasures> back = readPoolMeasures(path, "text-size, inliner none", modules);
  ASSERT_TRUE(back) << back.error().message;
  std::vector<ChoiceCandidate> reversed(f.pool.rbegin(), f.pool.rend());
  for (const ChoiceCandidate& candidate : reversed) {
    const size_t p = std::find(f.pool.begin(), f.pool.end(), candidate) - f.pool.begin();
    const std::vector<double>* column = back->find(candidate);
    ASSERT_NE(column, nullptr) << candidate.describe();
    for (size_t m = 0; m < 6; ++m) {
      if (std::isnan(f.measures[p][m]))
        EXPECT_TRUE(std::isnan((*column)[m]));
      else
        EXPECT_EQ((*column)[m], f.measures[p][m]);
    }
  }
  // A candidate the file lacks is missing, not an error; stored, it is
  // written beside the others and read back.
  ChoiceCandidate added = f.pool[3];
  added.withInliner = true;
  EXPECT_EQ(back->find(added), nullptr);
  back->store(added, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(writePoolMeasures(path, "text-size, inliner none", modules, *back));
  Expected<PoolMeasures> grown = readPoolMeasures(path, "text-size, inliner none", modules);
  ASSERT_TRUE(grown) << grown.error().message;
  ASSERT_NE(grown->find(added), nullptr);
  EXPECT_EQ((*grown->find(added))[5], 6);
  EXPECT_EQ((*grown->find(f.pool[3]))[4], 101.25);
  EXPECT_FALSE(readPoolMeasures(path, "text-size, inliner inlining-oz", modules));
  std::swap(modules[0], modules[1]);
  Expected<PoolMeasures> reordered = readPoolMeasures(path, "text-size, inliner none", modules);
  ASSERT_FALSE(reordered);
  EXPECT_NE(reordered.error().message.find("dir/module1.c"), std::string::npos)
      << reordered.error().message;
  std::swap(modules[0], modules[1]);
  // The verify mode's comparison: equal (failures included), then a
  // changed measure named by module and candidate.
  std::vector<std::vector<double>> read;
  for (const ChoiceCandidate& candidate : f.pool)
    read.push_back(*back->find(candidate));
  EXPECT_TRUE(comparePoolMatrices(read, f.measures, modules, f.pool));
  std::vector<std::vector<double>> changed = f.measures;
  changed[3][4] = 101;
  Status differs = comparePoolMatrices(read, changed, modules, f.pool);
  ASSERT_FALSE(differs);
  EXPECT_NE(differs.error().message.find("dir/module4.c"), std::string::npos)
      << differs.error().message;
  changed = f.measures;
  changed[1][2] = 90; // compiled where the stored one failed
  EXPECT_FALSE(comparePoolMatrices(read, changed, modules, f.pool));
  modules.pop_back();
  EXPECT_FALSE(readPoolMeasures(path, "text-size, inliner none", modules))
      << "a row more than modules";
  modules.push_back(&specs[5]);
  // A damaged measure is named, not read as a number's prefix.
  std::string text;
  {
    std::ifstream in(path);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t at = text.find("101.25");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 6, "101x25");
  {
    std::ofstream out(path);
    out << text;
  }
  Expected<PoolMeasures> damaged = readPoolMeasures(path, "text-size, inliner none", modules);
  ASSERT_FALSE(damaged);
  EXPECT_NE(damaged.error().message.find("dir/module4.c"), std::string::npos)
      << damaged.error().message;
  std::filesystem::remove(path);
}

TEST(PipelineChoice, TheLearningDataIsWrittenAsOneRowPerModule) {
  Fixture f;
  f.measures[1][2] = std::numeric_limits<double>::quiet_NaN();
  std::vector<corpus::ModuleSpec> specs(6);
  std::vector<const corpus::ModuleSpec*> modules;
  std::vector<std::string> codeBases;
  for (size_t m = 0; m < 6; ++m) {
    specs[m].name = "module" + std::to_string(m) + ".c";
    modules.push_back(&specs[m]);
    codeBases.push_back(m < 3 ? "zlib" : "lua");
  }
  const std::string path = ::testing::TempDir() + "/choice-data.tsv";
  const std::vector<std::string> names = policies::moduleFeatureNames();
  ASSERT_TRUE(writeChoiceData(path, modules, codeBases, names, f.features, f.pool, f.measures));
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::istringstream split(line);
    for (std::string field; std::getline(split, field, '\t');)
      fields.push_back(field);
    rows.push_back(fields);
  }
  ASSERT_EQ(rows.size(), 7u);
  const size_t width = 2 + names.size() + f.pool.size();
  for (const auto& row : rows)
    EXPECT_EQ(row.size(), width);
  EXPECT_EQ(rows[0][2], names[0]);
  EXPECT_EQ(rows[0].back(), f.pool.back().describe());
  EXPECT_EQ(rows[4][0], "module3.c");
  EXPECT_EQ(rows[4][1], "lua");
  EXPECT_EQ(std::stod(rows[4][2]), f.features[3][0]);
  EXPECT_EQ(rows[3][2 + names.size() + 1], "nan"); // module 2, pool pipeline 1
  EXPECT_EQ(std::stod(rows[5][2 + names.size() + 2]), f.measures[2][4]);
  std::vector<std::string> fewer(codeBases.begin(), codeBases.end() - 1);
  EXPECT_FALSE(writeChoiceData(path, modules, fewer, names, f.features, f.pool, f.measures));
  std::filesystem::remove(path);
}

} // namespace
} // namespace mlgo::training
