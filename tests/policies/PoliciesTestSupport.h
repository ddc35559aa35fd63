// Helpers for the policies tests: the captured clang headers, scratch
// directories, and small vocabularies.
#pragma once

#include "mlgo/policies/Mlp.h"
#include "mlgo/policies/TensorSpec.h"
#include "mlgo/policies/Vocabulary.h"
#include "mlgo/support/Random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace mlgo::policies::testing {

// MLP options as the inlining task gives them (the policies layer knows no
// task): its default decision out of the network's inputs and the residual's
// feature. tests/evaluators' CompilerTaskTest checks that
// CompilerTask::inliningForSize().policyOptions does the same.
inline MlpOptions inlinerMlpOptions(MlpOptions base = {}) {
  base.excludedFeatures.insert(base.excludedFeatures.begin(), "inlining_default");
  base.residualFeature = "inlining_default";
  return base;
}

// A file of tests/data, without its trailing newline.
inline std::string readTestData(const std::string& name) {
  std::filesystem::path file = std::filesystem::path(MLGO_TEST_DATA_DIR) / name;
  std::ifstream in(file, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << file;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  return text;
}

inline ChannelHeader loadHeader(const std::string& name) {
  Expected<ChannelHeader> header = parseChannelHeader(readTestData(name));
  EXPECT_TRUE(header) << name << ": " << (header ? "" : header.error().message);
  return header ? header.take() : ChannelHeader{};
}

inline ChannelHeader inlinerHeader() {
  return loadHeader("inliner-header-llvm22.json");
}

// A fresh directory under the test temp dir, removed when the object dies.
class ScratchDirectory {
public:
  ScratchDirectory() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::path(::testing::TempDir()) /
            ("mlgo-policies-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDirectory() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

private:
  std::filesystem::path path_;
};

// `count` feature vectors of small integers in [0, 60), seeded.
inline std::vector<std::vector<double>> randomStates(size_t count, size_t width, uint64_t seed) {
  RandomStream rng(seed);
  std::vector<std::vector<double>> states(count, std::vector<double>(width));
  for (auto& state : states)
    for (double& v : state)
      v = static_cast<double>(rng.uniformBelow(60));
  return states;
}

inline void writeText(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out) << "cannot write " << file;
}

// A vocabulary for every scalar feature of `header` except those named in
// `skip`: boundaries 0, 1, 2, …, count-1 (distinct per feature by an offset,
// so a mix-up of features shows).
inline Vocabulary integerVocabulary(const ChannelHeader& header, int count = 16,
                                    const std::vector<std::string>& skip = {"inlining_default"}) {
  Vocabulary vocabulary;
  for (size_t f = 0; f < header.features.size(); ++f) {
    const TensorSpec& feature = header.features[f];
    if (std::find(skip.begin(), skip.end(), feature.name) != skip.end())
      continue;
    std::vector<double> boundaries;
    for (int i = 0; i < count; ++i)
      boundaries.push_back(static_cast<double>(i) + static_cast<double>(f % 3));
    EXPECT_TRUE(vocabulary.set(feature.name, boundaries));
  }
  return vocabulary;
}

} // namespace mlgo::policies::testing
