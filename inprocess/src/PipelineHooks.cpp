#include "PipelineHooks.h"

#include <llvm/ADT/Any.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>

namespace mlgo::inprocess {

namespace {

using policies::ExtensionPoint;
using policies::PipelinePhase;

// Around added passes: the first raises PipelineRun::insideAddition, the
// second lowers it (passes of one manager run one after the other on one
// IR unit, so the pair brackets exactly the added passes). One type for
// every kind of pass manager. Required: never declined.
struct AdditionMarker : llvm::PassInfoMixin<AdditionMarker> {
  PipelineRun* state;
  int step; // +1 before the added passes, -1 after
  void mark() const { state->insideAddition += step; }
  llvm::PreservedAnalyses run(llvm::Module&, llvm::ModuleAnalysisManager&) { return marked(); }
  llvm::PreservedAnalyses run(llvm::Function&, llvm::FunctionAnalysisManager&) { return marked(); }
  llvm::PreservedAnalyses run(llvm::Loop&, llvm::LoopAnalysisManager&,
                              llvm::LoopStandardAnalysisResults&, llvm::LPMUpdater&) {
    return marked();
  }
  llvm::PreservedAnalyses run(llvm::LazyCallGraph::SCC&, llvm::CGSCCAnalysisManager&,
                              llvm::LazyCallGraph&, llvm::CGSCCUpdateResult&) {
    return marked();
  }
  static bool isRequired() { return true; }

private:
  llvm::PreservedAnalyses marked() const {
    mark();
    return llvm::PreservedAnalyses::all();
  }
};

// After a replacement pipeline: -Oz's own optional passes are declined from here.
struct ReplacementEnd : llvm::PassInfoMixin<ReplacementEnd> {
  PipelineRun* state;
  llvm::PreservedAnalyses run(llvm::Module&, llvm::ModuleAnalysisManager&) {
    state->replaced = true;
    return llvm::PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

// `text` parsed into `manager` between markers; checkPipelineTexts has
// parsed it before, so an error here is LLVM's own bug.
template <class Manager>
void addBetweenMarkers(llvm::PassBuilder& builder, Manager& manager, const std::string& text,
                       PipelineRun& run) {
  manager.addPass(AdditionMarker{{}, &run, +1});
  if (llvm::Error error = builder.parsePassPipeline(manager, text))
    llvm::report_fatal_error(std::move(error));
  manager.addPass(AdditionMarker{{}, &run, -1});
}

// What kind of passes the point takes, as a parse into a scratch manager of
// that kind.
llvm::Error parseAt(llvm::PassBuilder& builder, ExtensionPoint point, const std::string& text) {
  switch (point) {
  case ExtensionPoint::Peephole:
  case ExtensionPoint::ScalarOptimizerLate:
  case ExtensionPoint::VectorizerStart:
  case ExtensionPoint::VectorizerEnd: {
    llvm::FunctionPassManager manager;
    return builder.parsePassPipeline(manager, text);
  }
  case ExtensionPoint::LateLoopOptimizations:
  case ExtensionPoint::LoopOptimizerEnd: {
    llvm::LoopPassManager manager;
    return builder.parsePassPipeline(manager, text);
  }
  case ExtensionPoint::CgsccOptimizerLate: {
    llvm::CGSCCPassManager manager;
    return builder.parsePassPipeline(manager, text);
  }
  case ExtensionPoint::PipelineStart:
  case ExtensionPoint::PipelineEarlySimplification:
  case ExtensionPoint::OptimizerEarly:
  case ExtensionPoint::OptimizerLast:
    break;
  }
  llvm::ModulePassManager manager;
  return builder.parsePassPipeline(manager, text);
}

void registerAddition(llvm::PassBuilder& builder, ExtensionPoint point, const std::string& text,
                      PipelineRun& run) {
  auto functions = [&builder, &text, &run](llvm::FunctionPassManager& manager,
                                           llvm::OptimizationLevel) {
    addBetweenMarkers(builder, manager, text, run);
  };
  auto loops = [&builder, &text, &run](llvm::LoopPassManager& manager, llvm::OptimizationLevel) {
    addBetweenMarkers(builder, manager, text, run);
  };
  auto modules = [&builder, &text, &run](llvm::ModulePassManager& manager,
                                         llvm::OptimizationLevel) {
    addBetweenMarkers(builder, manager, text, run);
  };
  auto phasedModules = [modules](llvm::ModulePassManager& manager, llvm::OptimizationLevel level,
                                 llvm::ThinOrFullLTOPhase) { modules(manager, level); };
  switch (point) {
  case ExtensionPoint::Peephole:
    return builder.registerPeepholeEPCallback(functions);
  case ExtensionPoint::LateLoopOptimizations:
    return builder.registerLateLoopOptimizationsEPCallback(loops);
  case ExtensionPoint::LoopOptimizerEnd:
    return builder.registerLoopOptimizerEndEPCallback(loops);
  case ExtensionPoint::ScalarOptimizerLate:
    return builder.registerScalarOptimizerLateEPCallback(functions);
  case ExtensionPoint::CgsccOptimizerLate:
    return builder.registerCGSCCOptimizerLateEPCallback(
        [&builder, &text, &run](llvm::CGSCCPassManager& manager, llvm::OptimizationLevel) {
          addBetweenMarkers(builder, manager, text, run);
        });
  case ExtensionPoint::VectorizerStart:
    return builder.registerVectorizerStartEPCallback(functions);
  case ExtensionPoint::VectorizerEnd:
    return builder.registerVectorizerEndEPCallback(functions);
  case ExtensionPoint::PipelineStart:
    return builder.registerPipelineStartEPCallback(modules);
  case ExtensionPoint::PipelineEarlySimplification:
    return builder.registerPipelineEarlySimplificationEPCallback(phasedModules);
  case ExtensionPoint::OptimizerEarly:
    return builder.registerOptimizerEarlyEPCallback(phasedModules);
  case ExtensionPoint::OptimizerLast:
    return builder.registerOptimizerLastEPCallback(phasedModules);
  }
}

// The should-run callback: false declines the pass run.
bool shouldRun(PipelineRun& run, llvm::StringRef pass) {
  if (run.replaced) {
    ++run.declinedAfterReplacement;
    return false;
  }
  if (run.insideAddition > 0)
    return true;
  for (const policies::SkippedPass& skip : run.pipeline.skipped)
    if (pass == skip.passClass && (!skip.phase || *skip.phase == run.phase)) {
      ++run.declined[skip.text()];
      return false;
    }
  return true;
}

} // namespace

Status checkPipelineTexts(const policies::PassPipeline& pipeline) {
  llvm::PassBuilder builder;
  for (const auto& [point, text] : pipeline.additions)
    if (llvm::Error error = parseAt(builder, point, text))
      return makeError("added passes at " + std::string(policies::extensionPointName(point)) +
                       " \"" + text + "\": " + llvm::toString(std::move(error)));
  if (!pipeline.replacement.empty()) {
    llvm::ModulePassManager manager;
    if (llvm::Error error = builder.parsePassPipeline(manager, pipeline.replacement))
      return makeError("replacement pipeline \"" + pipeline.replacement +
                       "\": " + llvm::toString(std::move(error)));
  }
  return Status::ok();
}

void applyPipeline(llvm::PassBuilder& builder, PipelineRun& run) {
  const policies::PassPipeline& pipeline = run.pipeline;
  if (pipeline.neutral())
    return;
  for (const auto& [point, text] : pipeline.additions)
    registerAddition(builder, point, text, run);
  if (!pipeline.replacement.empty())
    builder.registerPipelineStartEPCallback(
        [&builder, &run](llvm::ModulePassManager& manager, llvm::OptimizationLevel) {
          // A replacement that is itself a default pipeline ("default<Os>")
          // reaches this point again while it is parsed: its own start.
          static thread_local bool parsing = false;
          if (parsing)
            return;
          parsing = true;
          llvm::Error error = builder.parsePassPipeline(manager, run.pipeline.replacement);
          parsing = false;
          if (error)
            llvm::report_fatal_error(std::move(error));
          manager.addPass(ReplacementEnd{{}, &run});
        });
  llvm::PassInstrumentationCallbacks* callbacks = builder.getPassInstrumentationCallbacks();
  if (!callbacks)
    return;
  callbacks->registerShouldRunOptionalPassCallback(
      [&run](llvm::StringRef pass, llvm::Any) { return shouldRun(run, pass); });
  // The phase: the module inliner's start and end.
  callbacks->registerBeforeNonSkippedPassCallback([&run](llvm::StringRef pass, llvm::Any) {
    if (pass == "ModuleInlinerWrapperPass")
      run.phase = PipelinePhase::Inliner;
  });
  callbacks->registerAfterPassCallback(
      [&run](llvm::StringRef pass, llvm::Any, const llvm::PreservedAnalyses&) {
        if (pass == "ModuleInlinerWrapperPass")
          run.phase = PipelinePhase::Late;
      });
}

} // namespace mlgo::inprocess
