#include "mlgo/corpus/Sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace mlgo::corpus {
namespace {

std::vector<uint64_t> sizesUpTo(size_t n) {
  std::vector<uint64_t> sizes(n);
  std::iota(sizes.begin(), sizes.end(), uint64_t{0});
  return sizes;
}

const SamplingStrategy kAll[] = {
    SamplingStrategy::WithReplacement, SamplingStrategy::WithoutReplacement,
    SamplingStrategy::BucketRoundRobin, SamplingStrategy::LanguageStratified};

TEST(ModuleSampler, NamesRoundTrip) {
  for (SamplingStrategy s : kAll)
    EXPECT_EQ(parseSamplingStrategy(samplingStrategyName(s)), s);
  EXPECT_FALSE(parseSamplingStrategy("random"));
}

TEST(ModuleSampler, DeterministicForSeedAndStep) {
  for (SamplingStrategy s : kAll) {
    ModuleSampler a(s, sizesUpTo(50), 123), b(s, sizesUpTo(50), 123), c(s, sizesUpTo(50), 124);
    bool anyDiffers = false;
    for (uint64_t step = 0; step < 20; ++step) {
      EXPECT_EQ(a.sample(step, 10), b.sample(step, 10)) << samplingStrategyName(s);
      // Asking out of order gives the same answer: no hidden state.
      EXPECT_EQ(a.sample(19 - step, 10), b.sample(19 - step, 10));
      anyDiffers |= a.sample(step, 10) != c.sample(step, 10);
    }
    EXPECT_TRUE(anyDiffers) << samplingStrategyName(s) << ": the seed changes nothing";
  }
}

TEST(ModuleSampler, WithReplacementIsUniform) {
  const size_t n = 10;
  ModuleSampler sampler(SamplingStrategy::WithReplacement, sizesUpTo(n), 7);
  std::vector<int> counts(n, 0);
  for (uint64_t step = 0; step < 5000; ++step)
    for (size_t i : sampler.sample(step, 4))
      ++counts.at(i);
  // 2000 expected per module, sd ≈ 42.
  for (int c : counts)
    EXPECT_NEAR(c, 2000, 250);
  // k larger than the corpus is allowed with replacement.
  EXPECT_EQ(sampler.sample(0, 25).size(), 25u);
}

TEST(ModuleSampler, WithoutReplacementCoversEachEpochOnce) {
  const size_t n = 23, k = 5; // 4 steps per epoch, 3 modules left out each epoch
  ModuleSampler sampler(SamplingStrategy::WithoutReplacement, sizesUpTo(n), 11);
  for (uint64_t epoch = 0; epoch < 3; ++epoch) {
    std::set<size_t> seen;
    for (uint64_t step = epoch * 4; step < epoch * 4 + 4; ++step) {
      std::vector<size_t> picks = sampler.sample(step, k);
      ASSERT_EQ(picks.size(), k);
      for (size_t i : picks) {
        EXPECT_LT(i, n);
        EXPECT_TRUE(seen.insert(i).second) << "module " << i << " twice in epoch " << epoch;
      }
    }
    EXPECT_EQ(seen.size(), 20u);
  }
  // Consecutive epochs use different permutations.
  EXPECT_NE(sampler.sample(0, k), sampler.sample(4, k));
  EXPECT_EQ(sampler.sample(0, 100).size(), n) << "k is clamped to the corpus size";
}

TEST(ModuleSampler, WithoutReplacementVisitsEveryModuleOverManyEpochs) {
  ModuleSampler sampler(SamplingStrategy::WithoutReplacement, sizesUpTo(10), 5);
  std::vector<int> counts(10, 0);
  for (uint64_t step = 0; step < 3000; ++step)
    for (size_t i : sampler.sample(step, 3))
      ++counts[i];
  // 900 expected each.
  for (int c : counts)
    EXPECT_NEAR(c, 900, 120);
}

TEST(ModuleSampler, BucketsSpanTheSizeRange) {
  // As in ml-compiler-opt's test: 100 modules of sizes 0..99, k = 20 buckets
  // of 5; sorted by size, pick i comes from the i-th bucket from the top.
  ModuleSampler sampler(SamplingStrategy::BucketRoundRobin, sizesUpTo(100), 3);
  for (uint64_t step = 0; step < 32; ++step) {
    std::vector<size_t> picks = sampler.sample(step, 20);
    ASSERT_EQ(picks.size(), 20u);
    std::sort(picks.begin(), picks.end(), std::greater<>());
    for (size_t i = 0; i < picks.size(); ++i)
      EXPECT_EQ(picks[i] / 5, 19 - i);
  }
}

TEST(ModuleSampler, BucketsSampleEveryModuleOfAnOddCorpus) {
  // 37 modules (prime) in buckets of uneven length: every module is reachable.
  ModuleSampler sampler(SamplingStrategy::BucketRoundRobin, sizesUpTo(37), 9);
  std::set<size_t> seen;
  for (uint64_t step = 0; step < 400; ++step)
    for (size_t i : sampler.sample(step, 7))
      seen.insert(i);
  EXPECT_EQ(seen.size(), 37u);
  EXPECT_EQ(sampler.sample(0, 50).size(), 37u);
}

TEST(ModuleSampler, BucketPicksAreUniformWithinTheBucket) {
  // One bucket over 4 modules: each drawn about equally often.
  ModuleSampler sampler(SamplingStrategy::BucketRoundRobin, {40, 30, 20, 10}, 17);
  std::vector<int> counts(4, 0);
  for (uint64_t step = 0; step < 8000; ++step)
    ++counts[sampler.sample(step, 1).at(0)];
  for (int c : counts)
    EXPECT_NEAR(c, 2000, 200);
}

// Half the step from each language, however few modules one of them has
// (here 5 of 60 are C++): ⌈k/2⌉ and ⌊k/2⌋ with the larger share alternating,
// no module twice in a step, every C++ module visited, and each language's
// picks spread over its sizes. A language with fewer modules than its share
// gives the rest to the other.
TEST(ModuleSampler, LanguageStratifiedSplitsEveryStepBetweenLanguages) {
  const size_t n = 60;
  std::vector<int> languages(n, 0);
  for (size_t i : {3u, 17u, 30u, 44u, 58u})
    languages[i] = 1;
  ModuleSampler sampler(SamplingStrategy::LanguageStratified, sizesUpTo(n), 5, 20, languages);
  std::set<size_t> cxxSeen;
  for (uint64_t step = 0; step < 40; ++step) {
    std::vector<size_t> picks = sampler.sample(step, 7);
    ASSERT_EQ(picks.size(), 7u);
    EXPECT_EQ(std::set<size_t>(picks.begin(), picks.end()).size(), 7u) << "step " << step;
    size_t cxx = 0;
    for (size_t pick : picks) {
      cxx += languages[pick] == 1;
      if (languages[pick] == 1)
        cxxSeen.insert(pick);
    }
    EXPECT_EQ(cxx, step % 2 == 0 ? 3u : 4u) << "step " << step;
  }
  EXPECT_EQ(cxxSeen.size(), 5u);
  // Larger than a language's modules: the other language takes the rest.
  std::vector<size_t> wide = sampler.sample(0, 20);
  ASSERT_EQ(wide.size(), 20u);
  EXPECT_EQ(std::count_if(wide.begin(), wide.end(), [&](size_t i) { return languages[i] == 1; }),
            5);
  // One language only (or none given): as many picks, all distinct.
  ModuleSampler plain(SamplingStrategy::LanguageStratified, sizesUpTo(n), 5);
  std::vector<size_t> picks = plain.sample(3, 10);
  EXPECT_EQ(std::set<size_t>(picks.begin(), picks.end()).size(), 10u);
}

} // namespace
} // namespace mlgo::corpus
