#include "mlgo/support/Random.h"

#include <gtest/gtest.h>

#include <vector>

namespace mlgo {
namespace {

TEST(RandomStream, SameKeySameStream) {
  RandomStream a(deriveKey({7, 1, 2})), b(deriveKey({7, 1, 2}));
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(a.next(), b.next());
}

TEST(RandomStream, KeyPartsAreOrderSensitive) {
  EXPECT_NE(deriveKey({1, 2}), deriveKey({2, 1}));
  EXPECT_NE(deriveKey({1}), deriveKey({1, 0}));
}

TEST(RandomStream, UniformBelowStaysInRangeAndCoversIt) {
  RandomStream rng(42);
  std::vector<int> counts(7, 0);
  const int draws = 70000;
  for (int i = 0; i < draws; ++i) {
    uint64_t x = rng.uniformBelow(7);
    ASSERT_LT(x, 7u);
    ++counts[x];
  }
  // Each bucket expects 10000 (sd ≈ 93); 6 sd is far beyond chance for this fixed seed.
  for (int c : counts)
    EXPECT_NEAR(c, draws / 7, 600);
}

TEST(RandomStream, Uniform01InUnitInterval) {
  RandomStream rng(3);
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    double u = rng.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
}

} // namespace
} // namespace mlgo
