#include "mlgo/corpus/Sampler.h"

#include "mlgo/support/Random.h"

#include <algorithm>
#include <cassert>
#include <numeric>

namespace mlgo::corpus {

namespace {
// Stream tags keep the draws of different strategies independent.
constexpr uint64_t kTagWithReplacement = 1;
constexpr uint64_t kTagEpochPermutation = 2;
constexpr uint64_t kTagBuckets = 3;
constexpr uint64_t kTagStratum = 4;
} // namespace

std::string_view samplingStrategyName(SamplingStrategy strategy) {
  switch (strategy) {
  case SamplingStrategy::WithReplacement:
    return "with-replacement";
  case SamplingStrategy::WithoutReplacement:
    return "without-replacement";
  case SamplingStrategy::BucketRoundRobin:
    return "bucket-round-robin";
  case SamplingStrategy::LanguageStratified:
    return "language-stratified";
  }
  return "unknown";
}

std::optional<SamplingStrategy> parseSamplingStrategy(std::string_view name) {
  for (SamplingStrategy s :
       {SamplingStrategy::WithReplacement, SamplingStrategy::WithoutReplacement,
        SamplingStrategy::BucketRoundRobin, SamplingStrategy::LanguageStratified})
    if (samplingStrategyName(s) == name)
      return s;
  return std::nullopt;
}

ModuleSampler::ModuleSampler(SamplingStrategy strategy, std::vector<uint64_t> moduleSizes,
                             uint64_t seed, size_t visitBuckets, std::vector<int> languages)
    : strategy_(strategy), sizes_(std::move(moduleSizes)), seed_(seed),
      visitBuckets_(visitBuckets) {
  assert(!sizes_.empty() && "sampling from an empty corpus");
  assert((languages.empty() || languages.size() == sizes_.size()) && "a language per module");
  if (strategy_ == SamplingStrategy::LanguageStratified) {
    languages.resize(sizes_.size(), 0); // none given: one language
    std::vector<int> distinct(languages.begin(), languages.end());
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (size_t l = 0; l < distinct.size(); ++l) {
      Stratum stratum;
      std::vector<uint64_t> sizes;
      for (size_t i = 0; i < sizes_.size(); ++i)
        if (languages[i] == distinct[l]) {
          stratum.modules.push_back(i);
          sizes.push_back(sizes_[i]);
        }
      stratum.sampler = std::make_shared<const ModuleSampler>(
          SamplingStrategy::BucketRoundRobin, std::move(sizes), deriveKey({seed_, kTagStratum, l}),
          visitBuckets_);
      strata_.push_back(std::move(stratum));
    }
  }
  bySizeDescending_.resize(sizes_.size());
  std::iota(bySizeDescending_.begin(), bySizeDescending_.end(), size_t{0});
  std::stable_sort(bySizeDescending_.begin(), bySizeDescending_.end(),
                   [&](size_t a, size_t b) { return sizes_[a] > sizes_[b]; });
}

std::vector<size_t> ModuleSampler::sample(uint64_t step, size_t k) const {
  switch (strategy_) {
  case SamplingStrategy::WithReplacement:
    return sampleWithReplacement(step, k);
  case SamplingStrategy::WithoutReplacement:
    return sampleWithoutReplacement(step, std::min(k, sizes_.size()));
  case SamplingStrategy::BucketRoundRobin:
    return sampleBuckets(step, std::min(k, sizes_.size()));
  case SamplingStrategy::LanguageStratified:
    return sampleLanguages(step, std::min(k, sizes_.size()));
  }
  return {};
}

std::vector<size_t> ModuleSampler::sampleLanguages(uint64_t step, size_t k) const {
  // Shares as even as the strata's sizes allow: k / L each, the remainder to
  // the strata after a step-dependent rotation; a stratum smaller than its
  // share gives the rest to the others.
  const size_t strata = strata_.size();
  std::vector<size_t> share(strata, k / strata);
  for (size_t r = 0; r < k % strata; ++r)
    ++share[(step + r) % strata];
  size_t spare = 0;
  for (size_t l = 0; l < strata; ++l)
    if (share[l] > strata_[l].modules.size()) {
      spare += share[l] - strata_[l].modules.size();
      share[l] = strata_[l].modules.size();
    }
  for (size_t l = 0; spare > 0 && l < strata; ++l) {
    const size_t more = std::min(spare, strata_[l].modules.size() - share[l]);
    share[l] += more;
    spare -= more;
  }
  std::vector<size_t> picks;
  picks.reserve(k);
  for (size_t l = 0; l < strata; ++l)
    for (size_t pick : strata_[l].sampler->sample(step, share[l]))
      picks.push_back(strata_[l].modules[pick]);
  return picks;
}

std::vector<size_t> ModuleSampler::sampleWithReplacement(uint64_t step, size_t k) const {
  RandomStream rng(deriveKey({seed_, kTagWithReplacement, step}));
  std::vector<size_t> picks(k);
  for (size_t& pick : picks)
    pick = rng.uniformBelow(sizes_.size());
  return picks;
}

std::vector<size_t> ModuleSampler::sampleWithoutReplacement(uint64_t step, size_t k) const {
  if (k == 0)
    return {};
  const size_t n = sizes_.size();
  const uint64_t stepsPerEpoch = n / k;
  const uint64_t epoch = step / stepsPerEpoch;
  const size_t offset = static_cast<size_t>(step % stepsPerEpoch) * k;
  // Fisher–Yates over the whole corpus for this epoch; only its [offset,
  // offset + k) window is this step's sample.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  RandomStream rng(deriveKey({seed_, kTagEpochPermutation, epoch}));
  for (size_t i = n - 1; i > 0; --i)
    std::swap(order[i], order[rng.uniformBelow(i + 1)]);
  return {order.begin() + static_cast<ptrdiff_t>(offset),
          order.begin() + static_cast<ptrdiff_t>(offset + k)};
}

std::vector<size_t> ModuleSampler::sampleBuckets(uint64_t step, size_t k) const {
  if (k == 0)
    return {};
  const size_t n = sizes_.size();
  // ml-compiler-opt's visiting order: k buckets visited so that the sample
  // approximates drawing round-robin from `visitBuckets_` coarser buckets.
  const size_t quotient = k / visitBuckets_;
  std::vector<size_t> order(k);
  std::iota(order.begin(), order.end(), size_t{0});
  if (quotient > 0)
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return a % quotient < b % quotient; });
  RandomStream rng(deriveKey({seed_, kTagBuckets, step}));
  std::vector<size_t> picks;
  picks.reserve(k);
  const double bucketSize = static_cast<double>(n) / static_cast<double>(k);
  for (size_t bucket : order) {
    size_t begin = static_cast<size_t>(bucketSize * static_cast<double>(bucket));
    size_t end = static_cast<size_t>(bucketSize * static_cast<double>(bucket + 1));
    end = std::max(std::min(end, n), begin + 1);
    picks.push_back(bySizeDescending_[begin + rng.uniformBelow(end - begin)]);
  }
  return picks;
}

} // namespace mlgo::corpus
