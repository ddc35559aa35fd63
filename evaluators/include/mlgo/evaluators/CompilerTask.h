// What the compiler is asked to decide, as a value the evaluator is given:
// the arguments that open the interactive channel, the advice it answers
// with, the feature that holds the compiler's own decision, what is measured
// and how it is rewarded. Inlining for size is the first task;
// register-allocation eviction/priority are the same protocol with other
// arguments, advice and measures, and need no change to the backends' core.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace mlgo::evaluators {

// ml-compiler-opt's reward: 1 − (measured + δ) / (baseline + δ). Positive
// when the job measures less than the baseline. A module's reward and a
// corpus total's are computed alike.
struct RelativeReward {
  double delta = 0.01;
  double operator()(uint64_t measured, uint64_t baseline) const;
};

struct CompilerTask {
  std::string name;
  // Appended to a module's compile command; every "{channel}" is replaced by
  // the channel's base path.
  std::vector<std::string> interactiveArguments;
  // The advice tensor the compiler asks for (its header names it); a header
  // that asks for another is a protocol error.
  std::string adviceName;
  // The feature carrying the compiler's default decision (the BC label);
  // empty if the task has none.
  std::string defaultDecisionFeature;
  // Sections whose sizes make up the measured size: exact names, or a
  // prefix ending in '.' matches e.g. ".text.hot" for ".text.".
  std::vector<std::string> sizeSections{".text", ".text."};
  RelativeReward reward;

  std::vector<std::string> argumentsFor(const std::filesystem::path& channelBase) const;

  // LLVM's ML inliner in release/interactive mode, with the default
  // decision included as the last feature; .text bytes against -Oz.
  static CompilerTask inliningForSize();
};

// The inlining task's reward (ml-compiler-opt's, δ = 0.01).
inline double sizeReward(uint64_t sizeBytes, uint64_t baselineBytes) {
  return RelativeReward{}(sizeBytes, baselineBytes);
}

} // namespace mlgo::evaluators
