#include "CodeGeneration.h"

#include <clang/Basic/CodeGenOptions.h>
#include <clang/Basic/LangOptions.h>
#include <clang/Basic/TargetOptions.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringSwitch.h>
#include <llvm/Analysis/RuntimeLibcallInfo.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/CodeGen/CodeGenTargetMachineImpl.h>
#include <llvm/CodeGen/MachineModuleInfo.h>
#include <llvm/CodeGen/Passes.h>
#include <llvm/CodeGen/TargetPassConfig.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <memory>
#include <optional>

namespace mlgo::inprocess {

namespace {

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

Status generateObject(llvm::Module& module, const clang::CompilerInvocation& invocation,
                      llvm::raw_pwrite_stream& out, const CodeGenerationHooks& hooks) {
  const clang::CodeGenOptions& cg = invocation.getCodeGenOpts();
  const clang::TargetOptions& to = invocation.getTargetOpts();
  const llvm::Triple& triple = module.getTargetTriple();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError("target " + triple.str() + ": " + error);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, to.CPU, llvm::join(to.Features, ","), targetOptions(cg, invocation.getLangOpts()),
      cg.RelocationModel, codeModel(cg.CodeModel), codeGenLevel(cg)));
  if (!machine)
    return makeError("no target machine for " + triple.str());
  machine->setLargeDataThreshold(cg.LargeDataThreshold);
  auto& generator = static_cast<llvm::CodeGenTargetMachineImpl&>(*machine);

  // LLVM's addPassesToEmitFile, with the hooks' passes.
  llvm::legacy::PassManager passes;
  passes.add(llvm::createTargetTransformInfoWrapperPass(machine->getTargetIRAnalysis()));
  llvm::TargetLibraryInfoImpl libraryInfo(triple);
  passes.add(new llvm::TargetLibraryInfoWrapperPass(libraryInfo));
  // Made from the triple here, as clang does: left to the pass manager, it
  // knows no library calls when pre-ISel lowering asks, which then expands
  // every memcpy into a loop (an object unlike clang's).
  passes.add(new llvm::RuntimeLibraryInfoWrapper(triple));
  if (hooks.beforePipeline)
    hooks.beforePipeline(passes);
  auto* machineModule = new llvm::MachineModuleInfoWrapperPass(machine.get());
  llvm::TargetPassConfig* config = generator.createPassConfig(passes);
  config->setDisableVerify(true);
  passes.add(config);
  passes.add(machineModule);
  if (hooks.configure)
    hooks.configure(*config);
  if (config->addISelPasses())
    return makeError("instruction selection could not be set up");
  config->addMachinePasses();
  config->setInitialized();
  if (hooks.beforeEmission)
    hooks.beforeEmission(passes);
  if (generator.addAsmPrinter(passes, out, nullptr, llvm::CodeGenFileType::ObjectFile,
                              machineModule->getMMI().getContext()))
    return makeError("no object emitter for " + triple.str());
  passes.add(llvm::createFreeMachineFunctionPass());
  passes.run(module);
  return Status::ok();
}

} // namespace mlgo::inprocess
