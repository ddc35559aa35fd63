#include "RegAllocMeasure.h"

#include "InProcessCompiler.h"

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

// LLVM 22 exports calculateRegAllocScore from libLLVM but keeps its header
// (lib/CodeGen/RegAllocScore.h) private. Declared here as LLVM 22 defines
// them: the score is six doubles (copies, loads, stores, cheap
// rematerialisations, load-stores, expensive rematerialisations, in that
// order) whose weighted sum getScore() gives.
namespace llvm {
class RegAllocScore final {
public:
  double copies = 0, loads = 0, stores = 0, cheapRemats = 0, loadStores = 0, expensiveRemats = 0;
  double getScore() const;
};
RegAllocScore calculateRegAllocScore(const MachineFunction& MF,
                                     const MachineBlockFrequencyInfo& MBFI);
} // namespace llvm

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

// The eviction advisor analysis in release mode, whatever the process-global
// -regalloc-enable-advisor says: added before the pipeline, it takes the
// place of the one the pass manager would make from that option, so plain
// and policy jobs share one worker.
class ReleaseEvictionAnalysis final : public llvm::RegAllocEvictionAdvisorAnalysisLegacy {
public:
  explicit ReleaseEvictionAnalysis(llvm::LLVMContext& context)
      : RegAllocEvictionAdvisorAnalysisLegacy(AdvisorMode::Release) {
    Provider.reset(llvm::createReleaseModeAdvisorProvider(context));
  }
};

std::optional<llvm::CodeModel::Model> codeModel(const std::string& name) {
  return llvm::StringSwitch<std::optional<llvm::CodeModel::Model>>(name)
      .Case("tiny", llvm::CodeModel::Tiny)
      .Case("small", llvm::CodeModel::Small)
      .Case("kernel", llvm::CodeModel::Kernel)
      .Case("medium", llvm::CodeModel::Medium)
      .Case("large", llvm::CodeModel::Large)
      .Default(std::nullopt);
}

// clang's mapping of -O levels to code generation levels (BackendUtil).
llvm::CodeGenOptLevel codeGenLevel(const clang::CodeGenOptions& options) {
  switch (options.OptimizationLevel) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  case 3:
    return llvm::CodeGenOptLevel::Aggressive;
  default:
    return llvm::CodeGenOptLevel::Default;
  }
}

// The target options clang derives from the cc1 options that can change the
// generated code (clang's initTargetOptions, the code-relevant part).
llvm::TargetOptions targetOptions(const clang::CodeGenOptions& cg, const clang::LangOptions& lang) {
  llvm::TargetOptions options;
  options.FunctionSections = cg.FunctionSections;
  options.DataSections = cg.DataSections;
  options.UniqueSectionNames = cg.UniqueSectionNames;
  options.EmitAddrsig = cg.Addrsig;
  options.EmitStackSizeSection = cg.StackSizeSection;
  options.NoZerosInBSS = cg.NoZeroInitializedInBSS;
  options.MCOptions.X86RelaxRelocations = cg.X86RelaxRelocations;
  options.NoInfsFPMath = lang.NoHonorInfs;
  options.NoNaNsFPMath = lang.NoHonorNaNs;
  options.NoTrappingFPMath = lang.getDefaultExceptionMode() == clang::LangOptions::FPE_Ignore;
  options.DebuggerTuning = cg.getDebuggerTuning();
  return options;
}

} // namespace

Expected<RegAllocMeasure> measureRegAlloc(const std::vector<std::string>& arguments,
                                          const std::vector<std::string>& sizeSections,
                                          std::string& diagnostics, bool mlAdvisor) {
  initialiseTargets();
  std::string object;
  Expected<std::shared_ptr<clang::CompilerInvocation>> invocation =
      parseInvocation(arguments, object, diagnostics);
  if (!invocation)
    return invocation.error();

  llvm::raw_string_ostream diagnosticStream(diagnostics);
  llvm::LLVMContext context;
  clang::CompilerInstance compiler(*invocation);
  compiler.createVirtualFileSystem();
  compiler.createDiagnostics(
      new clang::TextDiagnosticPrinter(diagnosticStream, compiler.getDiagnosticOpts()),
      /*ShouldOwnClient=*/true);
  // clang's optimisation pipeline, no code generation.
  clang::EmitLLVMOnlyAction optimise(&context);
  if (!compiler.ExecuteAction(optimise))
    return makeError("compiler reported errors");
  std::unique_ptr<llvm::Module> module = optimise.takeModule();
  if (!module)
    return makeError("clang kept no module");

  const clang::CodeGenOptions& cg = (*invocation)->getCodeGenOpts();
  const clang::TargetOptions& to = (*invocation)->getTargetOpts();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(module->getTargetTriple(), error);
  if (!target)
    return makeError("target " + module->getTargetTriple().str() + ": " + error);
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(module->getTargetTriple(), to.CPU, llvm::join(to.Features, ","),
                                  targetOptions(cg, (*invocation)->getLangOpts()),
                                  cg.RelocationModel, codeModel(cg.CodeModel), codeGenLevel(cg)));
  if (!machine)
    return makeError("no target machine for " + module->getTargetTriple().str());
  machine->setLargeDataThreshold(cg.LargeDataThreshold);
  auto& generator = static_cast<llvm::CodeGenTargetMachineImpl&>(*machine);

  RegAllocMeasure measure;
  std::error_code ec;
  llvm::raw_fd_ostream out(object, ec);
  if (ec)
    return makeError(object + ": " + ec.message());
  {
    // LLVM's addPassesToEmitFile, with the score pass inserted after the
    // virtual-register rewriter.
    llvm::legacy::PassManager passes;
    passes.add(llvm::createTargetTransformInfoWrapperPass(machine->getTargetIRAnalysis()));
    llvm::TargetLibraryInfoImpl libraryInfo(module->getTargetTriple());
    passes.add(new llvm::TargetLibraryInfoWrapperPass(libraryInfo));
    // Made from the triple here, as clang does: left to the pass manager,
    // it knows no library calls when pre-ISel lowering asks, which then
    // expands every memcpy into a loop (an object unlike clang's).
    passes.add(new llvm::RuntimeLibraryInfoWrapper(module->getTargetTriple()));
    if (mlAdvisor)
      passes.add(new ReleaseEvictionAnalysis(context));
    auto* machineModule = new llvm::MachineModuleInfoWrapperPass(machine.get());
    llvm::TargetPassConfig* config = generator.createPassConfig(passes);
    config->setDisableVerify(true);
    passes.add(config);
    passes.add(machineModule);
    config->insertPass(&llvm::VirtRegRewriterID, llvm::IdentifyingPassPtr(new ScorePass(measure)));
    if (config->addISelPasses())
      return makeError("instruction selection could not be set up");
    config->addMachinePasses();
    config->setInitialized();
    if (generator.addAsmPrinter(passes, out, nullptr, llvm::CodeGenFileType::ObjectFile,
                                machineModule->getMMI().getContext()))
      return makeError("no object emitter for " + module->getTargetTriple().str());
    passes.add(llvm::createFreeMachineFunctionPass());
    passes.run(*module);
  }
  out.close();
  Expected<evaluators::CodeMeasure> code = evaluators::measureCode(object, sizeSections);
  if (!code)
    return code.error();
  measure.code = *code;
  return measure;
}

} // namespace mlgo::inprocess
