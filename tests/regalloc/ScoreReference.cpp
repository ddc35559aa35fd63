// A reference computation of a module's RegAllocScore, independent of our
// code generation pipeline: clang-22 itself stops after the virtual-register
// rewriter and writes MIR (-mllvm -stop-after=virtregrewriter); this reads
// that MIR back with LLVM's MIR parser, as llc does, and sums LLVM's own
// calculateRegAllocScore over the machine functions, block frequencies
// computed afresh from the MIR's branch probabilities.
//
// Usage: regalloc-score-reference FILE.mir...  (prints "FILE\tSCORE" each)
#include <llvm/CodeGen/MIRParser/MIRParser.h>
#include <llvm/CodeGen/MachineBlockFrequencyInfo.h>
#include <llvm/CodeGen/MachineFunctionPass.h>
#include <llvm/CodeGen/MachineModuleInfo.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdio>
#include <memory>

#include "../../inprocess/src/LlvmRegAllocScore.h"

namespace {

class SumScores final : public llvm::MachineFunctionPass {
public:
  static char ID;
  explicit SumScores(double& total) : MachineFunctionPass(ID), total_(total) {}
  void getAnalysisUsage(llvm::AnalysisUsage& usage) const override {
    usage.addRequired<llvm::MachineBlockFrequencyInfoWrapperPass>();
    usage.setPreservesAll();
    MachineFunctionPass::getAnalysisUsage(usage);
  }
  bool runOnMachineFunction(llvm::MachineFunction& function) override {
    total_ += llvm::calculateRegAllocScore(
                  function, getAnalysis<llvm::MachineBlockFrequencyInfoWrapperPass>().getMBFI())
                  .getScore();
    return false;
  }

private:
  double& total_;
};
char SumScores::ID = 0;

// The module's total score, or a negative value after printing why not.
double scoreOf(const char* path) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::MIRParser> parser =
      llvm::createMIRParserFromFile(path, diagnostic, context);
  if (!parser) {
    diagnostic.print("regalloc-score-reference", llvm::errs());
    return -1;
  }
  std::unique_ptr<llvm::Module> module = parser->parseIRModule();
  if (!module) {
    std::fprintf(stderr, "%s: no IR module in the MIR\n", path);
    return -1;
  }
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(module->getTargetTriple(), error);
  if (!target) {
    std::fprintf(stderr, "%s: %s\n", path, error.c_str());
    return -1;
  }
  // The CPU and features are in each function's attributes; the defaults
  // here only matter where a function has none.
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(module->getTargetTriple(), "x86-64", "", llvm::TargetOptions(),
                                  llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Default));
  module->setDataLayout(machine->createDataLayout());
  auto* info = new llvm::MachineModuleInfoWrapperPass(machine.get());
  if (parser->parseMachineFunctions(*module, info->getMMI())) {
    std::fprintf(stderr, "%s: the machine functions do not parse\n", path);
    delete info;
    return -1;
  }
  double total = 0;
  llvm::legacy::PassManager passes;
  passes.add(info);
  passes.add(new SumScores(total));
  passes.run(*module);
  return total;
}

} // namespace

int main(int argc, char** argv) {
  llvm::InitializeAllTargetInfos();
  llvm::InitializeAllTargets();
  llvm::InitializeAllTargetMCs();
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    const double score = scoreOf(argv[i]);
    if (score < 0)
      status = 1;
    else
      std::printf("%s\t%.17g\n", argv[i], score);
  }
  return status;
}
