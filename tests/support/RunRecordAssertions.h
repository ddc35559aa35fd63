// Comparing two trainer run records that must hold the same numbers (the same
// seed at 1 and 2 workers, or an interrupted and resumed run against an
// uninterrupted one). Header-only: used by the suites that link mlgo::results.
#pragma once

#include "TestSupport.h"
#include "mlgo/results/RunFile.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mlgo::testing {

inline bool sameOrBothNaN(double x, double y) {
  return x == y || (std::isnan(x) && std::isnan(y));
}

// Every step scalar but the scheduling-dependent ones, the modules and sizes
// of every step, the final policy and the optimiser's checkpointed state.
inline void expectSameStepNumbers(const results::RunRecord& a, const results::RunRecord& b) {
  ASSERT_EQ(a.steps(), b.steps());
  for (const auto& [name, values] : a.stepScalars) {
    if (isSchedulingDependentScalar(name))
      continue;
    ASSERT_TRUE(b.stepScalars.count(name)) << name;
    const std::vector<double>& other = b.stepScalars.at(name);
    ASSERT_EQ(values.size(), other.size()) << name;
    for (size_t i = 0; i < values.size(); ++i)
      EXPECT_TRUE(sameOrBothNaN(values[i], other[i]))
          << name << "[" << i << "]: " << values[i] << " vs " << other[i];
  }
  EXPECT_EQ(a.stepModules, b.stepModules);
  EXPECT_EQ(a.stepSizes, b.stepSizes);
  ASSERT_TRUE(a.finalPolicy && b.finalPolicy);
  EXPECT_EQ(a.finalPolicy->policyJson, b.finalPolicy->policyJson);
  ASSERT_TRUE(a.checkpoint && b.checkpoint);
  EXPECT_EQ(a.checkpoint->optimizerState, b.checkpoint->optimizerState);
}

} // namespace mlgo::testing
