#include "RegAllocMeasure.h"

#include "CodeGeneration.h"
#include "InProcessCompiler.h"
#include "LlvmRegAllocScore.h"

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Basic/LangOptions.h>
#include <clang/Basic/TargetOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Analysis/RuntimeLibcallInfo.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/CodeGen/CodeGenTargetMachineImpl.h>
#include <llvm/CodeGen/MachineBlockFrequencyInfo.h>
#include <llvm/CodeGen/MachineFunctionPass.h>
#include <llvm/CodeGen/MachineModuleInfo.h>
#include <llvm/CodeGen/Passes.h>
#include <llvm/CodeGen/RegAllocEvictionAdvisor.h>
#include <llvm/CodeGen/TargetPassConfig.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <cstdlib>
#include <memory>
#include <optional>

namespace mlgo::inprocess {

namespace {

// Runs after the virtual-register rewriter (identity copies gone): adds each
// function's score, from LLVM's own calculateRegAllocScore.
class ScorePass final : public llvm::MachineFunctionPass {
public:
  static char ID;
  explicit ScorePass(RegAllocMeasure& measure) : MachineFunctionPass(ID), measure_(measure) {}
  llvm::StringRef getPassName() const override { return "mlgo regalloc score"; }
  void getAnalysisUsage(llvm::AnalysisUsage& usage) const override {
    usage.addRequired<llvm::MachineBlockFrequencyInfoWrapperPass>();
    usage.setPreservesAll();
    MachineFunctionPass::getAnalysisUsage(usage);
  }
  bool runOnMachineFunction(llvm::MachineFunction& function) override {
    measure_.score +=
        llvm::calculateRegAllocScore(
            function, getAnalysis<llvm::MachineBlockFrequencyInfoWrapperPass>().getMBFI())
            .getScore();
    ++measure_.functions;
    return false;
  }

private:
  RegAllocMeasure& measure_;
};
char ScorePass::ID = 0;

// LLVM 22's AllocationOrder (lib/CodeGen/AllocationOrder.h, a private
// header): its layout, to walk a register's candidates in the order
// MLEvictAdvisor numbers them — the hints first, then the rest of the order
// without the hints, up to the order limit. Checked against libLLVM's own
// AllocationOrder::create, which writes Order at byte 0x38 and the
// iteration limit at 0x48.
struct AllocationOrderLayout {
  llvm::SmallVector<llvm::MCPhysReg, 16> hints;
  llvm::ArrayRef<llvm::MCPhysReg> order;
  int iterationLimit;
};
static_assert(sizeof(AllocationOrderLayout) == 0x50, "LLVM 22's AllocationOrder layout");

// MLEvictAdvisor's candidate index of `chosen` (32 when nothing is evicted),
// or -1 if the ML advisor would not offer that register at all.
int64_t candidateIndex(const llvm::AllocationOrder& allocationOrder, unsigned orderLimit,
                       llvm::MCRegister chosen) {
  constexpr int64_t evictNothing = 32; // MLEvictAdvisor's CandidateVirtRegPos
  if (!chosen)
    return evictNothing;
  const auto& o = reinterpret_cast<const AllocationOrderLayout&>(allocationOrder);
  const int limit = o.iterationLimit;
  auto isHint = [&](llvm::MCPhysReg r) { return llvm::is_contained(o.hints, r); };
  auto next = [&](int pos) {
    if (pos < limit)
      ++pos;
    while (pos >= 0 && pos < limit && isHint(o.order[static_cast<size_t>(pos)]))
      ++pos;
    return pos;
  };
  const int end = orderLimit == 0 ? limit : next(std::min(static_cast<int>(orderLimit) - 1, limit));
  int64_t index = 0;
  for (int pos = -static_cast<int>(o.hints.size()); pos != end && index < evictNothing;
       pos = next(pos), ++index) {
    const llvm::MCPhysReg reg = pos < 0 ? o.hints.end()[pos] : o.order[static_cast<size_t>(pos)];
    if (reg == chosen.id())
      return index;
  }
  return -1;
}

// The ML advisor, with LLVM's default advisor asked the same question first
// (its methods are const: asking changes nothing) and its answer published
// as a candidate index.
class DefaultObservingAdvisor final : public llvm::RegAllocEvictionAdvisor {
public:
  DefaultObservingAdvisor(const llvm::MachineFunction& function, const llvm::RAGreedy& allocator,
                          std::unique_ptr<llvm::RegAllocEvictionAdvisor> ml,
                          std::atomic<int64_t>& defaultChoice)
      : RegAllocEvictionAdvisor(function, allocator), ml_(std::move(ml)),
        heuristic_(function, allocator), defaultChoice_(defaultChoice) {}

  llvm::MCRegister tryFindEvictionCandidate(const llvm::LiveInterval& virtReg,
                                            const llvm::AllocationOrder& order,
                                            uint8_t costPerUseLimit,
                                            const llvm::SmallVirtRegSet& fixed) const override {
    // The ML advisor asks only when there is an order limit.
    if (std::optional<unsigned> limit = getOrderLimit(virtReg, order, costPerUseLimit)) {
      const llvm::RegAllocEvictionAdvisor& heuristic = heuristic_;
      defaultChoice_.store(candidateIndex(
          order, *limit,
          heuristic.tryFindEvictionCandidate(virtReg, order, costPerUseLimit, fixed)));
    }
    return ml_->tryFindEvictionCandidate(virtReg, order, costPerUseLimit, fixed);
  }
  bool canEvictHintInterference(const llvm::LiveInterval& virtReg, llvm::MCRegister physReg,
                                const llvm::SmallVirtRegSet& fixed) const override {
    return ml_->canEvictHintInterference(virtReg, physReg, fixed);
  }

private:
  std::unique_ptr<llvm::RegAllocEvictionAdvisor> ml_;
  llvm::DefaultEvictionAdvisor heuristic_;
  std::atomic<int64_t>& defaultChoice_;
};

class DefaultObservingProvider final : public llvm::RegAllocEvictionAdvisorProvider {
public:
  DefaultObservingProvider(llvm::LLVMContext& context, std::atomic<int64_t>& defaultChoice)
      : RegAllocEvictionAdvisorProvider(AdvisorMode::Release, context),
        release_(llvm::createReleaseModeAdvisorProvider(context)), defaultChoice_(defaultChoice) {}
  std::unique_ptr<llvm::RegAllocEvictionAdvisor>
  getAdvisor(const llvm::MachineFunction& function, const llvm::RAGreedy& allocator,
             llvm::MachineBlockFrequencyInfo* frequencies, llvm::MachineLoopInfo* loops) override {
    return std::make_unique<DefaultObservingAdvisor>(
        function, allocator, release_->getAdvisor(function, allocator, frequencies, loops),
        defaultChoice_);
  }

private:
  std::unique_ptr<llvm::RegAllocEvictionAdvisorProvider> release_;
  std::atomic<int64_t>& defaultChoice_;
};

// The eviction advisor analysis in release mode, whatever the process-global
// -regalloc-enable-advisor says: added before the pipeline, it takes the
// place of the one the pass manager would make from that option, so plain
// and policy jobs share one worker.
class ReleaseEvictionAnalysis final : public llvm::RegAllocEvictionAdvisorAnalysisLegacy {
public:
  ReleaseEvictionAnalysis(llvm::LLVMContext& context, std::atomic<int64_t>* defaultChoice)
      : RegAllocEvictionAdvisorAnalysisLegacy(AdvisorMode::Release) {
    if (defaultChoice)
      Provider = std::make_unique<DefaultObservingProvider>(context, *defaultChoice);
    else
      Provider.reset(llvm::createReleaseModeAdvisorProvider(context));
  }
};

} // namespace

Expected<RegAllocMeasure> measureRegAlloc(const std::vector<std::string>& arguments,
                                          const std::vector<std::string>& sizeSections,
                                          std::string& diagnostics, bool mlAdvisor,
                                          std::atomic<int64_t>* defaultChoice) {
  initialiseTargets();
  std::string object;
  Expected<std::shared_ptr<clang::CompilerInvocation>> invocation =
      parseInvocation(arguments, object, diagnostics);
  if (!invocation)
    return invocation.error();

  llvm::LLVMContext context;
  Expected<std::unique_ptr<llvm::Module>> optimised =
      optimiseModule(*invocation, context, diagnostics);
  if (!optimised)
    return optimised.error();
  std::unique_ptr<llvm::Module> module = optimised.take();

  RegAllocMeasure measure;
  std::error_code ec;
  llvm::raw_fd_ostream out(object, ec);
  if (ec)
    return makeError(object + ": " + ec.message());
  CodeGenerationHooks hooks;
  if (mlAdvisor)
    hooks.beforePipeline = [&](llvm::legacy::PassManager& passes) {
      passes.add(new ReleaseEvictionAnalysis(context, defaultChoice));
    };
  // The score pass after the virtual-register rewriter.
  hooks.configure = [&](llvm::TargetPassConfig& config) {
    config.insertPass(&llvm::VirtRegRewriterID, llvm::IdentifyingPassPtr(new ScorePass(measure)));
  };
  MLGO_TRY(generateObject(*module, **invocation, out, hooks));
  out.close();
  Expected<evaluators::CodeMeasure> code = evaluators::measureCode(object, sizeSections);
  if (!code)
    return code.error();
  measure.code = *code;
  return measure;
}

} // namespace mlgo::inprocess
