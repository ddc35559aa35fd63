// Merging several corpora into one: module names get a prefix per source
// corpus ("<prefix>/<name>") so that names never collide.
#pragma once

#include "mlgo/support/Expected.h"

#include <filesystem>
#include <string>
#include <vector>

namespace mlgo::corpus {

struct MergeInput {
  std::filesystem::path directory;
  // Empty: derived from the directory name (its parent's name when the
  // directory is called "corpus", as recipes lay them out).
  std::string prefix;
};

struct MergeSummary {
  size_t corpora = 0;
  size_t modules = 0;
};

std::string defaultMergePrefix(const std::filesystem::path& directory);

// Every input must load; all must agree on has_thinlto. A corpus with a
// global_command_override gets the override written into each module's .cmd,
// since the merged corpus can hold only one override. Files are hard-linked
// where possible, copied otherwise.
Expected<MergeSummary> mergeCorpora(const std::vector<MergeInput>& inputs,
                                    const std::filesystem::path& outputDirectory);

} // namespace mlgo::corpus
