// What the compiler is asked to decide, as a value the evaluator is given:
// the arguments that open the interactive channel and the feature that holds
// the compiler's own decision. Inlining for size is the first task;
// register-allocation eviction/priority are the same protocol with other
// arguments and advice types.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace mlgo::evaluators {

struct CompilerTask {
  std::string name;
  // Appended to a module's compile command; every "{channel}" is replaced by
  // the channel's base path.
  std::vector<std::string> interactiveArguments;
  // The feature carrying the compiler's default decision (the BC label);
  // empty if the task has none.
  std::string defaultDecisionFeature;
  // Sections whose sizes make up the measured size: exact names, or a
  // prefix ending in '.' matches e.g. ".text.hot" for ".text.".
  std::vector<std::string> sizeSections{".text", ".text."};

  std::vector<std::string> argumentsFor(const std::filesystem::path& channelBase) const;

  // LLVM's ML inliner in release/interactive mode, with the default
  // decision included as the last feature.
  static CompilerTask inliningForSize();
};

} // namespace mlgo::evaluators
