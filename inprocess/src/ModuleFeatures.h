// A module's counts (policies/ModuleFeatures.h) from its LLVM IR: one
// function for the worker, its --module-features mode and the pass plugin,
// so that what a policy was trained on is what a build shows it.
#pragma once

#include "mlgo/policies/Ir2VecVocabulary.h"
#include "mlgo/policies/ModuleFeatures.h"

#include <memory>
#include <vector>

namespace llvm {
class Module;
}

namespace mlgo::inprocess {

policies::ModuleCounts countModule(const llvm::Module& module);

// A module's IR2Vec part of the features (policies::moduleEmbeddingNames):
// LLVM's own symbolic embedder (llvm/Analysis/IR2Vec.h) over every defined
// function, with the policy's vocabulary rather than a process-global file,
// summed and divided by the module's instruction count. The vocabulary is
// laid out for LLVM once, here; entities it lacks embed as zeros.
class ModuleEmbedder {
public:
  explicit ModuleEmbedder(const policies::Ir2VecVocabulary& vocabulary);
  ~ModuleEmbedder();
  ModuleEmbedder(const ModuleEmbedder&) = delete;
  ModuleEmbedder& operator=(const ModuleEmbedder&) = delete;
  std::vector<double> embed(const llvm::Module& module) const;

private:
  struct LlvmVocabulary;
  std::unique_ptr<LlvmVocabulary> vocabulary_;
  size_t dimension_ = 0;
};

// What a module-level choice reads: moduleFeatureVector(counts), then the
// embedding when there is an embedder.
std::vector<double> moduleFeatures(const llvm::Module& module, const policies::ModuleCounts& counts,
                                   const ModuleEmbedder* embedder);

} // namespace mlgo::inprocess
