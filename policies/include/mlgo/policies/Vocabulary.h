// Quantile vocabularies: per feature, the sorted boundaries that ml-compiler-opt
// calls "sparse buckets" and stores as a directory of `<feature>.buckets` text
// files, one boundary per line. A network sees a feature through its position
// among these boundaries (see normalizedQuantile), never its raw value.
#pragma once

#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::policies {

class Vocabulary {
public:
  using Boundaries = std::vector<double>;

  // Sets the boundaries of `feature`, replacing any it had. They must be
  // non-empty, finite and sorted non-decreasing (repeats are normal for
  // sparse features); the error names the feature. -0.0 is stored as 0.0
  // (they bucket alike), so every stored value prints and parses exactly.
  Status set(std::string feature, Boundaries boundaries);

  // The boundaries of `feature`, or nullptr.
  const Boundaries* find(std::string_view feature) const;
  bool contains(std::string_view feature) const { return find(feature) != nullptr; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // Sorted by feature name.
  const std::map<std::string, Boundaries, std::less<>>& entries() const { return entries_; }

  bool operator==(const Vocabulary& other) const = default;

private:
  std::map<std::string, Boundaries, std::less<>> entries_;
};

// ml-compiler-opt's normalisation (feature_ops.get_normalize_fn): the number
// of boundaries <= value (TF Bucketize, i.e. std::upper_bound), divided by the
// number of boundaries. In [0, 1]. `boundaries` must be sorted and non-empty.
double normalizedQuantile(std::span<const double> boundaries, double value);

// Reads every `<feature>.buckets` file in `directory` (other files are
// ignored). Errors name the file and line.
Expected<Vocabulary> readVocabularyDirectory(const std::filesystem::path& directory);

// Writes one `<feature>.buckets` file per entry, creating `directory` if
// needed; other files already there stay (use a fresh directory). Values are written in the
// shortest form that parses back to the same double, as Python's repr does, so ml-compiler-opt
// reads the files too.
Status writeVocabularyDirectory(const Vocabulary& vocabulary,
                                const std::filesystem::path& directory);

// How buildVocabulary turns recorded feature values into boundaries, after
// ml-compiler-opt's sparse_bucket_generator.py.
struct VocabularyOptions {
  // Boundaries per feature: the quantiles at linspace(0, 1, quantiles), so the
  // first is the minimum and the last the maximum. ml-compiler-opt uses 1000;
  // fewer makes the normalised inputs coarser.
  int quantiles = 1000;
  // Fraction of each feature's values, drawn without replacement, that the
  // quantiles are computed from. 1 uses every value (exact); less trades
  // accuracy for time on very large recordings.
  double samplingFraction = 1.0;
  // Seeds the subsampling (unused when samplingFraction is 1).
  uint64_t seed = 0;

  Status validate() const;
};

// Observed values of each feature, e.g. from recorded trajectories.
using FeatureSamples = std::map<std::string, std::vector<double>, std::less<>>;

// Computes each feature's quantile boundaries with NumPy's default (linear)
// interpolation, as np.quantile does. A feature with no values (after
// subsampling) or a NaN value is an error naming it.
Expected<Vocabulary> buildVocabulary(const FeatureSamples& samples,
                                     const VocabularyOptions& options = {});

} // namespace mlgo::policies
