// Real evaluators for the trainer tests on real corpora.
#pragma once

#include "mlgo/evaluators/Evaluator.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

namespace mlgo::testing {

// An in-process evaluator for the inlining task, without the on-disk
// baseline cache (tests compile their own baselines).
inline std::unique_ptr<evaluators::Evaluator> testEvaluator(size_t workers,
                                                            const std::filesystem::path& scratch) {
  evaluators::EvaluatorOptions options;
  options.workers = workers;
  options.scratchDirectory = scratch;
  Expected<std::unique_ptr<evaluators::Evaluator>> evaluator =
      evaluators::Evaluator::create(options, evaluators::CompilerTask::inliningForSize());
  EXPECT_TRUE(evaluator) << evaluator.error().message;
  return evaluator ? evaluator.take() : nullptr;
}

} // namespace mlgo::testing
