#include "mlgo/policies/Vocabulary.h"

#include "PoliciesTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace mlgo::policies {
namespace {

using testing::ScratchDirectory;
using testing::writeText;

bool bitIdentical(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(NormalizedQuantile, CountsBoundariesAtOrBelowTheValue) {
  // TF Bucketize: a value equal to a boundary falls in the bucket above it.
  const std::vector<double> boundaries{0, 1, 1, 5, 10};
  EXPECT_EQ(normalizedQuantile(boundaries, -1), 0.0);
  EXPECT_EQ(normalizedQuantile(boundaries, 0), 1 / 5.0);
  EXPECT_EQ(normalizedQuantile(boundaries, 0.5), 1 / 5.0);
  EXPECT_EQ(normalizedQuantile(boundaries, 1), 3 / 5.0);
  EXPECT_EQ(normalizedQuantile(boundaries, 4.99), 3 / 5.0);
  EXPECT_EQ(normalizedQuantile(boundaries, 5), 4 / 5.0);
  EXPECT_EQ(normalizedQuantile(boundaries, 10), 1.0);
  EXPECT_EQ(normalizedQuantile(boundaries, 1e9), 1.0);
}

TEST(Vocabulary, SetValidatesBoundaries) {
  Vocabulary vocabulary;
  EXPECT_TRUE(vocabulary.set("a", {0, 0, 2}));
  Status unsorted = vocabulary.set("b", {0, 3, 2});
  ASSERT_FALSE(unsorted);
  EXPECT_EQ(unsorted.error().message,
            "vocabulary feature \"b\": boundary 2 (2) is smaller than the one before (3)");
  Status empty = vocabulary.set("c", {});
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message, "vocabulary feature \"c\": no boundaries");
  Status infinite = vocabulary.set("d", {0, std::numeric_limits<double>::infinity()});
  ASSERT_FALSE(infinite);
  EXPECT_EQ(infinite.error().message, "vocabulary feature \"d\": boundary 1 is not finite");
  EXPECT_EQ(vocabulary.size(), 1u);
  ASSERT_TRUE(vocabulary.find("a"));
  EXPECT_EQ(*vocabulary.find("a"), (std::vector<double>{0, 0, 2}));
  EXPECT_FALSE(vocabulary.contains("b"));

  // -0.0 buckets like 0.0 and is stored as 0.0.
  ASSERT_TRUE(vocabulary.set("z", {-0.0, 1}));
  EXPECT_FALSE(std::signbit(vocabulary.find("z")->front()));
}

TEST(VocabularyDirectory, WriteReadRoundTripIsBitExact) {
  Vocabulary vocabulary;
  ASSERT_TRUE(vocabulary.set("callee_users", {0, 0, 1, 2, 2, 3, 1000000}));
  ASSERT_TRUE(vocabulary.set("weight", {-1e-300, 0.1, 1.0 / 3, 2.5e17, 1.7976931348623157e308}));
  ASSERT_TRUE(vocabulary.set("one", {4.940656458412465e-324}));
  ScratchDirectory dir;
  ASSERT_TRUE(writeVocabularyDirectory(vocabulary, dir / "vocab"));
  EXPECT_TRUE(std::filesystem::exists(dir / "vocab" / "callee_users.buckets"));

  Expected<Vocabulary> back = readVocabularyDirectory(dir / "vocab");
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), 3u);
  for (const auto& [feature, boundaries] : vocabulary.entries()) {
    ASSERT_TRUE(back->find(feature)) << feature;
    EXPECT_TRUE(bitIdentical(*back->find(feature), boundaries)) << feature;
  }
}

TEST(VocabularyDirectory, ReadsMlCompilerOptFiles) {
  // As sparse_bucket_generator.py writes them (Python float repr), plus
  // blanks and a Windows line end, which float() accepts too.
  ScratchDirectory dir;
  writeText(dir / "sroa_savings.buckets", "0.0\n0.0\n2.5\n1e+20\n");
  writeText(dir / "threshold.buckets", " -45.0\r\n+0.125\n");
  writeText(dir / "README", "not a vocabulary file\n");
  Expected<Vocabulary> vocabulary = readVocabularyDirectory(dir.path());
  ASSERT_TRUE(vocabulary) << vocabulary.error().message;
  ASSERT_EQ(vocabulary->size(), 2u);
  EXPECT_EQ(*vocabulary->find("sroa_savings"), (std::vector<double>{0, 0, 2.5, 1e20}));
  EXPECT_EQ(*vocabulary->find("threshold"), (std::vector<double>{-45, 0.125}));
}

struct BadBucketsFile {
  const char* contents;
  const char* error; // after "<file>"
  friend void PrintTo(const BadBucketsFile& bad, std::ostream* os) { *os << bad.error; }
};

class BadVocabularyFile : public ::testing::TestWithParam<BadBucketsFile> {};

TEST_P(BadVocabularyFile, ErrorNamesFileAndLine) {
  ScratchDirectory dir;
  writeText(dir / "good.buckets", "1.0\n2.0\n");
  writeText(dir / "feature.buckets", GetParam().contents);
  Expected<Vocabulary> vocabulary = readVocabularyDirectory(dir.path());
  ASSERT_FALSE(vocabulary);
  EXPECT_EQ(vocabulary.error().message, (dir / "feature.buckets").string() + GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Examples, BadVocabularyFile,
    ::testing::Values(BadBucketsFile{"1.0\n2.0\nabc\n", ":3: not a number: \"abc\""},
                      BadBucketsFile{"1.0\n\n2.0\n", ":2: not a number: \"\""},
                      BadBucketsFile{"1.0 2.0\n", ":1: not a number: \"1.0 2.0\""},
                      BadBucketsFile{"1.0\n0.5\n",
                                     ":2: boundary 0.5 is smaller than the one before (1); "
                                     "boundaries must be sorted"},
                      BadBucketsFile{"1.0\nnan\n", ":2: boundary nan is not finite"},
                      BadBucketsFile{"", ": no boundaries"}));

TEST(VocabularyDirectory, MissingOrEmptyDirectoryIsAnError) {
  ScratchDirectory dir;
  Expected<Vocabulary> missing = readVocabularyDirectory(dir / "nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, (dir / "nope").string() + ": not a directory");
  Expected<Vocabulary> empty = readVocabularyDirectory(dir.path());
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message, dir.path().string() + ": no .buckets files");
}

TEST(BuildVocabulary, MatchesNumpyLinearQuantiles) {
  FeatureSamples samples;
  // np.quantile([1..10], np.linspace(0, 1, 5)) = [1, 3.25, 5.5, 7.75, 10]
  samples["ten"] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  // np.quantile([0, 0, 0, 0, 7], [0, 0.5, 1]) with 3 quantiles = [0, 0, 7]
  samples["sparse"] = {0, 7, 0, 0, 0};
  samples["single"] = {42};
  VocabularyOptions options;
  options.quantiles = 5;
  Expected<Vocabulary> vocabulary = buildVocabulary(samples, options);
  ASSERT_TRUE(vocabulary) << vocabulary.error().message;
  EXPECT_EQ(*vocabulary->find("ten"), (std::vector<double>{1, 3.25, 5.5, 7.75, 10}));
  EXPECT_EQ(*vocabulary->find("sparse"), (std::vector<double>{0, 0, 0, 0, 7}));
  EXPECT_EQ(*vocabulary->find("single"), (std::vector<double>(5, 42)));

  options.quantiles = 3;
  vocabulary = buildVocabulary(samples, options);
  ASSERT_TRUE(vocabulary);
  EXPECT_EQ(*vocabulary->find("sparse"), (std::vector<double>{0, 0, 7}));
  EXPECT_EQ(*vocabulary->find("ten"), (std::vector<double>{1, 5.5, 10}));

  options.quantiles = 1; // linspace(0, 1, 1) = [0]: the minimum
  vocabulary = buildVocabulary(samples, options);
  ASSERT_TRUE(vocabulary);
  EXPECT_EQ(*vocabulary->find("ten"), std::vector<double>{1});
}

TEST(BuildVocabulary, DefaultHasAThousandQuantiles) {
  FeatureSamples samples;
  for (int i = 0; i < 5000; ++i)
    samples["x"].push_back(i % 37);
  Expected<Vocabulary> vocabulary = buildVocabulary(samples);
  ASSERT_TRUE(vocabulary);
  const std::vector<double>& boundaries = *vocabulary->find("x");
  ASSERT_EQ(boundaries.size(), 1000u);
  EXPECT_EQ(boundaries.front(), 0.0);
  EXPECT_EQ(boundaries.back(), 36.0);
  EXPECT_TRUE(std::is_sorted(boundaries.begin(), boundaries.end()));
}

TEST(BuildVocabulary, SubsamplingIsDeterministicPerSeed) {
  FeatureSamples samples;
  for (int i = 0; i < 1000; ++i)
    samples["x"].push_back(i);
  VocabularyOptions options;
  options.quantiles = 2; // [min, max] of the subsample
  options.samplingFraction = 0.01;
  options.seed = 7;
  Expected<Vocabulary> a = buildVocabulary(samples, options);
  Expected<Vocabulary> b = buildVocabulary(samples, options);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
  const std::vector<double>& range = *a->find("x");
  // Ten values out of a thousand: their extremes lie strictly inside.
  EXPECT_GT(range[0], 0.0);
  EXPECT_LT(range[1], 999.0);
  EXPECT_EQ(range[0], std::floor(range[0])); // an observed value, not interpolated

  options.seed = 8;
  Expected<Vocabulary> c = buildVocabulary(samples, options);
  ASSERT_TRUE(c);
  EXPECT_NE(*a, *c);
}

TEST(BuildVocabulary, RejectsBadInputsAndOptions) {
  FeatureSamples samples{{"empty", {}}};
  Expected<Vocabulary> empty = buildVocabulary(samples);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message, "feature \"empty\": no values to compute quantiles from");

  samples = {{"nan", {1, std::nan(""), 2}}};
  Expected<Vocabulary> nan = buildVocabulary(samples);
  ASSERT_FALSE(nan);
  EXPECT_EQ(nan.error().message, "feature \"nan\": a recorded value is NaN");

  samples = {{"few", {1, 2, 3}}};
  VocabularyOptions tiny;
  tiny.samplingFraction = 0.1; // floor(0.3) = 0 values left
  Expected<Vocabulary> none = buildVocabulary(samples, tiny);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, "feature \"few\": no values to compute quantiles from");

  VocabularyOptions options;
  options.quantiles = 0;
  ASSERT_FALSE(options.validate());
  EXPECT_EQ(options.validate().error().message, "quantiles: must be at least 1 (got 0)");
  Expected<Vocabulary> rejected = buildVocabulary(samples, options);
  ASSERT_FALSE(rejected);
  EXPECT_EQ(rejected.error().message, "vocabulary options: quantiles: must be at least 1 (got 0)");
  options = {};
  options.samplingFraction = 1.5;
  ASSERT_FALSE(options.validate());
  EXPECT_EQ(options.validate().error().message.rfind("samplingFraction: must be in (0, 1]", 0), 0u);
  EXPECT_TRUE(VocabularyOptions{}.validate());
}

} // namespace
} // namespace mlgo::policies
