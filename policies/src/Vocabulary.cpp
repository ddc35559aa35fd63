#include "mlgo/policies/Vocabulary.h"

#include "mlgo/support/Random.h"

#include "VocabularyInternal.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

namespace fs = std::filesystem;

namespace mlgo::policies {

namespace {

constexpr std::string_view kBucketsExtension = ".buckets";

// Parses one boundary as Python's float() would for the files
// ml-compiler-opt writes: surrounding blanks allowed, locale-independent.
std::optional<double> parseBoundary(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos)
    return std::nullopt;
  size_t end = text.find_last_not_of(" \t\r") + 1;
  text = text.substr(begin, end - begin);
  if (text.front() == '+')
    text.remove_prefix(1);
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size())
    return std::nullopt;
  return value;
}

std::string formatBoundary(double value) {
  std::array<char, 64> buffer;
  auto [ptr, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), ptr);
}

// FNV-1a: a name hash defined by this code, not by the standard library, so
// subsamples are the same everywhere.
uint64_t hashName(std::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : name)
    hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return hash;
}

// NumPy's _lerp, which np.quantile's "linear" method uses: interpolating from
// the nearer end keeps results monotone and exact at the ends.
double lerp(double a, double b, double t) {
  double difference = b - a;
  return t >= 0.5 ? b - difference * (1 - t) : a + difference * t;
}

} // namespace

Status Vocabulary::set(std::string feature, Boundaries boundaries) {
  if (boundaries.empty())
    return makeError("vocabulary feature \"" + feature + "\": no boundaries");
  for (size_t i = 0; i < boundaries.size(); ++i) {
    if (!std::isfinite(boundaries[i]))
      return makeError("vocabulary feature \"" + feature + "\": boundary " + std::to_string(i) +
                       " is not finite");
    if (i > 0 && boundaries[i] < boundaries[i - 1])
      return makeError("vocabulary feature \"" + feature + "\": boundary " + std::to_string(i) +
                       " (" + formatBoundary(boundaries[i]) + ") is smaller than the one before (" +
                       formatBoundary(boundaries[i - 1]) + ")");
    if (boundaries[i] == 0)
      boundaries[i] = 0.0; // drops the sign of -0.0
  }
  entries_[std::move(feature)] = std::move(boundaries);
  return Status::ok();
}

const Vocabulary::Boundaries* Vocabulary::find(std::string_view feature) const {
  auto it = entries_.find(feature);
  return it == entries_.end() ? nullptr : &it->second;
}

namespace detail {

size_t countAtOrBelow(std::span<const double> sorted, double value) {
  // std::upper_bound without branches: with ~1000 boundaries per feature the
  // mispredicted jumps were most of an inlining decision's cost. The loop
  // keeps "elements before `base` are <= value, those from base + size on
  // are not"; the select compiles to a conditional move.
  assert(!sorted.empty());
  const double* base = sorted.data();
  size_t size = sorted.size();
  while (size > 1) {
    size_t half = size / 2;
    base = base[half] <= value ? base + half : base;
    size -= half;
  }
  return static_cast<size_t>(base - sorted.data()) + (*base <= value ? 1 : 0);
}

} // namespace detail

double normalizedQuantile(std::span<const double> boundaries, double value) {
  return static_cast<double>(detail::countAtOrBelow(boundaries, value)) /
         static_cast<double>(boundaries.size());
}

Expected<Vocabulary> readVocabularyDirectory(const fs::path& directory) {
  std::error_code ec;
  if (!fs::is_directory(directory, ec))
    return makeError(directory.string() + ": not a directory");
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, ec))
    if (entry.path().extension() == kBucketsExtension && entry.is_regular_file(ec))
      files.push_back(entry.path());
  if (ec)
    return makeError(directory.string() + ": cannot list: " + ec.message());
  if (files.empty())
    return makeError(directory.string() + ": no " + std::string(kBucketsExtension) + " files");
  std::sort(files.begin(), files.end());

  Vocabulary vocabulary;
  for (const fs::path& file : files) {
    std::ifstream in(file);
    if (!in)
      return makeError(file.string() + ": cannot open for reading");
    Vocabulary::Boundaries boundaries;
    std::string line;
    size_t lineNumber = 0;
    while (std::getline(in, line)) {
      ++lineNumber;
      std::string where = file.string() + ":" + std::to_string(lineNumber);
      std::optional<double> value = parseBoundary(line);
      if (!value)
        return makeError(where + ": not a number: \"" + line + "\"");
      if (!std::isfinite(*value))
        return makeError(where + ": boundary " + line + " is not finite");
      if (!boundaries.empty() && *value < boundaries.back())
        return makeError(where + ": boundary " + formatBoundary(*value) +
                         " is smaller than the one before (" + formatBoundary(boundaries.back()) +
                         "); boundaries must be sorted");
      boundaries.push_back(*value);
    }
    if (in.bad())
      return makeError(file.string() + ": read error");
    if (boundaries.empty())
      return makeError(file.string() + ": no boundaries");
    Status status = vocabulary.set(file.stem().string(), std::move(boundaries));
    if (!status)
      return makeError(file.string() + ": " + status.error().message);
  }
  return vocabulary;
}

Status writeVocabularyDirectory(const Vocabulary& vocabulary, const fs::path& directory) {
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec)
    return makeError(directory.string() + ": cannot create: " + ec.message());
  for (const auto& [feature, boundaries] : vocabulary.entries()) {
    if (feature.empty() || feature.find('/') != std::string::npos || feature == "." ||
        feature == "..")
      return makeError(directory.string() + ": feature name \"" + feature +
                       "\" cannot be a file name");
    fs::path file = directory / (feature + std::string(kBucketsExtension));
    std::ofstream out(file, std::ios::trunc);
    if (!out)
      return makeError(file.string() + ": cannot open for writing");
    for (double boundary : boundaries)
      out << formatBoundary(boundary) << '\n';
    out.close();
    if (!out)
      return makeError(file.string() + ": write error");
  }
  return Status::ok();
}

Status VocabularyOptions::validate() const {
  if (quantiles < 1)
    return makeError("quantiles: must be at least 1 (got " + std::to_string(quantiles) + ")");
  if (!(samplingFraction > 0 && samplingFraction <= 1))
    return makeError("samplingFraction: must be in (0, 1] (got " +
                     std::to_string(samplingFraction) + ")");
  return Status::ok();
}

Expected<Vocabulary> buildVocabulary(const FeatureSamples& samples,
                                     const VocabularyOptions& options) {
  if (Status valid = options.validate(); !valid)
    return makeError("vocabulary options: " + valid.error().message);

  // np.linspace(0, 1, n): i * (1 / (n - 1)), the last exactly 1.
  const size_t count = static_cast<size_t>(options.quantiles);
  std::vector<double> levels(count, 0.0);
  if (count > 1) {
    double step = 1.0 / static_cast<double>(count - 1);
    for (size_t i = 0; i < count; ++i)
      levels[i] = static_cast<double>(i) * step;
    levels.back() = 1.0;
  }

  Vocabulary vocabulary;
  for (const auto& [feature, observed] : samples) {
    for (double value : observed)
      if (std::isnan(value))
        return makeError("feature \"" + feature + "\": a recorded value is NaN");

    std::vector<double> values;
    if (options.samplingFraction < 1) {
      // A partial Fisher-Yates shuffle: the first `keep` values are a uniform
      // sample without replacement. Each feature has its own stream, so the
      // result does not depend on which other features are present.
      size_t keep = static_cast<size_t>(
          std::floor(static_cast<double>(observed.size()) * options.samplingFraction));
      values = observed;
      RandomStream rng(deriveKey({options.seed, hashName(feature)}));
      for (size_t i = 0; i < keep; ++i)
        std::swap(values[i], values[i + rng.uniformBelow(values.size() - i)]);
      values.resize(keep);
    } else {
      values = observed;
    }
    if (values.empty())
      return makeError("feature \"" + feature + "\": no values to compute quantiles from");
    std::sort(values.begin(), values.end());

    Vocabulary::Boundaries boundaries(count);
    const size_t last = values.size() - 1;
    for (size_t i = 0; i < count; ++i) {
      double position = static_cast<double>(last) * levels[i];
      double below = std::floor(position);
      size_t lower = std::min(static_cast<size_t>(below), last);
      size_t upper = std::min(lower + 1, last);
      boundaries[i] = lerp(values[lower], values[upper], position - below);
    }
    Status status = vocabulary.set(feature, std::move(boundaries));
    if (!status)
      return status.error();
  }
  return vocabulary;
}

} // namespace mlgo::policies
