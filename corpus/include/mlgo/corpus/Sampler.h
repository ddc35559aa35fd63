// Choosing the modules of one training step. Samplers are pure functions of
// (seed, step, k): a resumed run or another worker draws exactly the same
// modules without carrying sampler state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace mlgo::corpus {

enum class SamplingStrategy {
  // k independent uniform draws; a module may appear twice in one step.
  WithReplacement,
  // Walks a fresh random permutation of the corpus per epoch, k modules per
  // step; an epoch holds floor(n / k) steps and the remainder is skipped so a
  // step never repeats a module. (ml-compiler-opt stops at exhaustion.)
  WithoutReplacement,
  // ml-compiler-opt's default: modules sorted by bitcode size are cut into k
  // equal buckets and one module is drawn from each, so every step sees small
  // and large modules alike.
  BucketRoundRobin,
  // The step's k modules split evenly between the modules' languages (C and
  // C++ for the recipes: ⌈k/2⌉ and ⌊k/2⌋, the larger share alternating by
  // step), each language's drawn bucket-round-robin among its own modules,
  // so every step of size ≥ 2 sees both languages however few modules one
  // of them has (a mixed corpus whose C++ is 8 % of the modules would give
  // many all-C steps otherwise). Needs each module's language
  // (corpus::moduleLanguage); a corpus of one language samples as
  // BucketRoundRobin.
  LanguageStratified,
};

std::string_view samplingStrategyName(SamplingStrategy strategy);
std::optional<SamplingStrategy> parseSamplingStrategy(std::string_view name);

class ModuleSampler {
public:
  // `moduleSizes[i]` is the bitcode size of module i (used for buckets).
  // `visitBuckets` is ml-compiler-opt's `n`: it only changes the order in
  // which buckets are visited.
  // `languages[i]` is module i's language as a small integer (only
  // LanguageStratified reads it; empty: every module one language).
  ModuleSampler(SamplingStrategy strategy, std::vector<uint64_t> moduleSizes, uint64_t seed,
                size_t visitBuckets = 20, std::vector<int> languages = {});

  // Indices of the modules for `step`. k is clamped to the corpus size except
  // with replacement.
  std::vector<size_t> sample(uint64_t step, size_t k) const;

  SamplingStrategy strategy() const { return strategy_; }
  size_t corpusSize() const { return sizes_.size(); }

private:
  std::vector<size_t> sampleWithReplacement(uint64_t step, size_t k) const;
  std::vector<size_t> sampleWithoutReplacement(uint64_t step, size_t k) const;
  std::vector<size_t> sampleBuckets(uint64_t step, size_t k) const;
  std::vector<size_t> sampleLanguages(uint64_t step, size_t k) const;

  SamplingStrategy strategy_;
  std::vector<uint64_t> sizes_;
  // Module indices by bitcode size, largest first (ties by index).
  std::vector<size_t> bySizeDescending_;
  uint64_t seed_;
  size_t visitBuckets_;
  // LanguageStratified: per language (ascending), its modules' indices and a
  // bucket sampler over their sizes.
  struct Stratum {
    std::vector<size_t> modules;
    std::shared_ptr<const ModuleSampler> sampler;
  };
  std::vector<Stratum> strata_;
};

} // namespace mlgo::corpus
