#include "mlgo/corpus/Stats.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>

namespace mlgo::corpus {

namespace {

ModuleStats statsOf(const ModuleSpec& spec) {
  ModuleStats stats;
  stats.name = spec.name;
  stats.bitcodeBytes = spec.bitcodeBytes;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(spec.bitcode.string());
  if (!buffer) {
    stats.error = spec.bitcode.string() + ": " + buffer.getError().message();
    return stats;
  }
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> module =
      llvm::parseBitcodeFile((*buffer)->getMemBufferRef(), context);
  if (!module) {
    stats.error = spec.bitcode.string() + ": " + llvm::toString(module.takeError());
    return stats;
  }
  for (const llvm::Function& function : **module) {
    if (function.isDeclaration())
      continue;
    ++stats.definedFunctions;
    for (const llvm::BasicBlock& block : function)
      for (const llvm::Instruction& instruction : block)
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction))
          if (const llvm::Function* callee = call->getCalledFunction())
            if (!callee->isIntrinsic() && !callee->isDeclaration())
              ++stats.localCallSites;
  }
  return stats;
}

} // namespace

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<ptrdiff_t>(mid), values.end());
  double upper = values[mid];
  if (values.size() % 2 == 1)
    return upper;
  double lower = *std::max_element(values.begin(), values.begin() + static_cast<ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

CorpusStats computeCorpusStats(const Corpus& corpus, size_t threads) {
  CorpusStats result;
  result.modules.resize(corpus.size());
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                              std::max<size_t>(1, threads));
    tbb::parallel_for(tbb::blocked_range<size_t>(0, corpus.size(), 1),
                      [&](const tbb::blocked_range<size_t>& range) {
                        for (size_t i = range.begin(); i != range.end(); ++i)
                          result.modules[i] = statsOf(corpus.modules()[i]);
                      });
  }
  std::vector<double> bytes, functions, calls;
  for (const ModuleStats& m : result.modules) {
    result.totalBitcodeBytes += m.bitcodeBytes;
    bytes.push_back(static_cast<double>(m.bitcodeBytes));
    if (m.error) {
      ++result.unreadableModules;
      continue;
    }
    result.totalFunctions += m.definedFunctions;
    result.totalCallSites += m.localCallSites;
    functions.push_back(static_cast<double>(m.definedFunctions));
    calls.push_back(static_cast<double>(m.localCallSites));
  }
  result.medianBitcodeBytes = median(std::move(bytes));
  result.medianFunctions = median(std::move(functions));
  result.medianCallSites = median(std::move(calls));
  return result;
}

} // namespace mlgo::corpus
