// What a corpus holds: per-module bitcode size, functions and call sites,
// read from the bitcode with LLVM (in parallel).
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/support/Threads.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::corpus {

struct ModuleStats {
  std::string name;
  uint64_t bitcodeBytes = 0;
  // Functions with a body in this module.
  uint64_t definedFunctions = 0;
  // Direct calls to functions defined in this module (not intrinsics): the
  // sites the inliner can decide on.
  uint64_t localCallSites = 0;
  // Set if the bitcode could not be parsed.
  std::optional<std::string> error;
};

struct CorpusStats {
  std::vector<ModuleStats> modules;
  uint64_t totalBitcodeBytes = 0;
  uint64_t totalFunctions = 0;
  uint64_t totalCallSites = 0;
  double medianBitcodeBytes = 0;
  double medianFunctions = 0;
  double medianCallSites = 0;
  size_t unreadableModules = 0;
};

double median(std::vector<double> values);

CorpusStats computeCorpusStats(const Corpus& corpus, size_t threads = hardwareThreads());

} // namespace mlgo::corpus
