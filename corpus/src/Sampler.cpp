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
} // namespace

std::string_view samplingStrategyName(SamplingStrategy strategy) {
  switch (strategy) {
  case SamplingStrategy::WithReplacement:
    return "with-replacement";
  case SamplingStrategy::WithoutReplacement:
    return "without-replacement";
  case SamplingStrategy::BucketRoundRobin:
    return "bucket-round-robin";
  }
  return "unknown";
}

std::optional<SamplingStrategy> parseSamplingStrategy(std::string_view name) {
  for (SamplingStrategy s :
       {SamplingStrategy::WithReplacement, SamplingStrategy::WithoutReplacement,
        SamplingStrategy::BucketRoundRobin})
    if (samplingStrategyName(s) == name)
      return s;
  return std::nullopt;
}

ModuleSampler::ModuleSampler(SamplingStrategy strategy, std::vector<uint64_t> moduleSizes,
                             uint64_t seed, size_t visitBuckets)
    : strategy_(strategy), sizes_(std::move(moduleSizes)), seed_(seed),
      visitBuckets_(visitBuckets) {
  assert(!sizes_.empty() && "sampling from an empty corpus");
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
  }
  return {};
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
