// The training data of an IR2Vec vocabulary (policies/Ir2VecVocabulary.h),
// read from corpora with LLVM's `llvm-ir2vec` (beside clang-22): its entity
// list, and the distinct triplets of every module's bitcode.
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/policies/Ir2VecVocabulary.h"
#include "mlgo/support/Expected.h"

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace mlgo::evaluators {

struct Ir2VecTrainingData {
  std::vector<std::string> entities;
  std::vector<policies::Ir2VecTriplet> triplets; // distinct, sorted
  uint32_t relations = 0;                        // MAX_RELATION + 1
  size_t modules = 0;
  size_t tripletsRead = 0; // before removing repeats
};

// `llvm-ir2vec` of the LLVM that `clang` belongs to.
std::string ir2vecToolBeside(const std::string& clang);

// Runs `tool triplets` on every module of `corpora` (`workers` at a time),
// in `scratch`. The error names the module and the tool's message.
Expected<Ir2VecTrainingData> collectIr2VecTriplets(const std::vector<corpus::Corpus>& corpora,
                                                   const std::string& tool,
                                                   const std::filesystem::path& scratch,
                                                   size_t workers);

} // namespace mlgo::evaluators
