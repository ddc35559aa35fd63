#include "PipelineHooks.h"

#include "ModuleFeatures.h"
#include "OzPipeline.h"

#include <llvm/ADT/Any.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/InlineAdvisor.h>
#include <llvm/Analysis/InlineCost.h>
#include <llvm/Analysis/ReplayInlineAdvisor.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Vectorize/VectorCombine.h>

#include <algorithm>
#include <functional>

namespace mlgo::inprocess {

namespace {

using policies::ExtensionPoint;
using policies::PipelinePhase;

// Around added passes: the first raises PipelineRun::insideAddition, the
// second lowers it (passes of one manager run one after the other on one
// IR unit, so the pair brackets exactly the added passes). One type for
// every kind of pass manager. Required: never declined.
struct AdditionMarker : llvm::PassInfoMixin<AdditionMarker> {
  // In an alternative's own text (pass parameters), which runs only when
  // chosen: the additions are the chosen alternative's.
  static constexpr size_t kChosen = SIZE_MAX;
  PipelineRun* state;
  int step;           // +1 before the added passes, -1 after
  size_t alternative; // whose additions they are
  void mark() const {
    state->insideAddition += step;
    if (step > 0)
      state->additionOf = alternative == kChosen ? state->chosen : alternative;
  }
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

// At the pipeline's start, with a choice: the module's features choose.
struct ChooseModulePipeline : llvm::PassInfoMixin<ChooseModulePipeline> {
  PipelineRun* state;
  llvm::PreservedAnalyses run(llvm::Module& module, llvm::ModuleAnalysisManager&) {
    state->counted = countModule(module);
    state->features = moduleFeatures(module, state->counted, state->embedder.get());
    state->chosen = state->choice->choose(state->features);
    state->choiceMade = true;
    return llvm::PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

// At the pipeline's start: an alternative's own pipeline (a replacement,
// or -Oz's text with its pass parameters), run only if it is the chosen
// one (a single pipeline: always); -Oz's own optional passes are declined
// after it.
struct RunIfChosen : llvm::PassInfoMixin<RunIfChosen> {
  PipelineRun* state;
  size_t alternative;
  llvm::ModulePassManager passes;
  llvm::PreservedAnalyses run(llvm::Module& module, llvm::ModuleAnalysisManager& analyses) {
    if (state->chosen != alternative)
      return llvm::PreservedAnalyses::all();
    llvm::PreservedAnalyses preserved = passes.run(module, analyses);
    state->replaced = true;
    return preserved;
  }
  static bool isRequired() { return true; }
};

// `text` parsed into `manager` between markers; checkPipelineTexts has
// parsed it before, so an error here is LLVM's own bug.
template <class Manager>
void addBetweenMarkers(llvm::PassBuilder& builder, Manager& manager, const std::string& text,
                       PipelineRun& run, size_t alternative) {
  manager.addPass(AdditionMarker{{}, &run, +1, alternative});
  if (llvm::Error error = builder.parsePassPipeline(manager, text))
    llvm::report_fatal_error(std::move(error));
  manager.addPass(AdditionMarker{{}, &run, -1, alternative});
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
                      PipelineRun& run, size_t alternative) {
  auto functions = [&builder, &text, &run, alternative](llvm::FunctionPassManager& manager,
                                                        llvm::OptimizationLevel) {
    addBetweenMarkers(builder, manager, text, run, alternative);
  };
  auto loops = [&builder, &text, &run, alternative](llvm::LoopPassManager& manager,
                                                    llvm::OptimizationLevel) {
    addBetweenMarkers(builder, manager, text, run, alternative);
  };
  auto modules = [&builder, &text, &run, alternative](llvm::ModulePassManager& manager,
                                                      llvm::OptimizationLevel) {
    addBetweenMarkers(builder, manager, text, run, alternative);
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
        [&builder, &text, &run, alternative](llvm::CGSCCPassManager& manager,
                                             llvm::OptimizationLevel) {
          addBetweenMarkers(builder, manager, text, run, alternative);
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
  if (run.insideAddition > 0) {
    if (run.additionOf == run.chosen)
      return true;
    ++run.declinedUnchosen;
    return false;
  }
  for (const policies::SkippedPass& skip : run.pipeline().skipped)
    if (pass == skip.passClass && (!skip.phase || *skip.phase == run.phase)) {
      ++run.declined[skip.text()];
      return false;
    }
  return true;
}

// What -Oz's inliner wrapper (ModuleInlinerWrapperPass) does before its
// walk over SCCs, for -Oz's text, which prints the walk without the
// wrapper: the inliner's advisor set up with -Oz's parameters, so that a
// registered advisor (an inliner policy) decides, as in -Oz.
struct SetUpInlineAdvisor : llvm::PassInfoMixin<SetUpInlineAdvisor> {
  llvm::PreservedAnalyses run(llvm::Module& module, llvm::ModuleAnalysisManager& analyses) {
    auto& advisor = analyses.getResult<llvm::InlineAdvisorAnalysis>(module);
    if (!advisor.tryCreate(llvm::getInlineParams(/*OptLevel=*/2, /*SizeOptLevel=*/2),
                           llvm::InliningAdvisorMode::Default, {},
                           {llvm::ThinOrFullLTOPhase::None, llvm::InlinePass::CGSCCInliner}))
      llvm::report_fatal_error("could not set up the inliner's advisor");
    return llvm::PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

// Pass names of our own, for what -Oz runs and opt's textual syntax cannot
// say: "vector-combine-early" is the function simplification's
// VectorCombinePass(TryEarlyFoldsOnly), which clang's printed pipeline
// (-mllvm -print-pipeline-passes) shows as a full "vector-combine";
// "mlgo-inline-advisor" is SetUpInlineAdvisor.
void registerOwnPassNames(llvm::PassBuilder& builder, PipelineRun* run = nullptr) {
  // Added passes in -Oz's text: the markers an extension point puts around
  // them (the text runs only when its alternative is chosen). Parsed
  // without a run only to check a text, never run then.
  // One callback for both kinds of manager the markers are parsed into.
  auto markers = [run](llvm::StringRef name, auto& manager,
                       llvm::ArrayRef<llvm::PassBuilder::PipelineElement>) {
    if (name != "mlgo-addition-begin" && name != "mlgo-addition-end")
      return false;
    manager.addPass(
        AdditionMarker{{}, run, name == "mlgo-addition-begin" ? +1 : -1, AdditionMarker::kChosen});
    return true;
  };
  builder.registerPipelineParsingCallback(
      std::function<bool(llvm::StringRef, llvm::ModulePassManager&,
                         llvm::ArrayRef<llvm::PassBuilder::PipelineElement>)>(markers));
  builder.registerPipelineParsingCallback(
      std::function<bool(llvm::StringRef, llvm::FunctionPassManager&,
                         llvm::ArrayRef<llvm::PassBuilder::PipelineElement>)>(markers));
  builder.registerPipelineParsingCallback([](llvm::StringRef name, llvm::ModulePassManager& manager,
                                             llvm::ArrayRef<llvm::PassBuilder::PipelineElement>) {
    if (name != "mlgo-inline-advisor")
      return false;
    manager.addPass(SetUpInlineAdvisor{});
    return true;
  });
  builder.registerPipelineParsingCallback([](llvm::StringRef name,
                                             llvm::FunctionPassManager& manager,
                                             llvm::ArrayRef<llvm::PassBuilder::PipelineElement>) {
    if (name != "vector-combine-early")
      return false;
    manager.addPass(llvm::VectorCombinePass(/*TryEarlyFoldsOnly=*/true));
    return true;
  });
}

} // namespace

Status checkPipelineTexts(const policies::PassPipeline& pipeline) {
  llvm::PassBuilder builder;
  registerOwnPassNames(builder);
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
  if (!pipeline.parameters.empty()) {
    MLGO_ASSIGN_OR_RETURN(const std::string text, parameterisedOzPipeline(pipeline));
    llvm::ModulePassManager manager;
    if (llvm::Error error = builder.parsePassPipeline(manager, text))
      return makeError("pass parameters " + pipeline.describe() + ": " +
                       llvm::toString(std::move(error)));
  }
  return Status::ok();
}

PipelineRun::PipelineRun(const policies::PipelinePolicy& policy) : choice(policy.choice().get()) {
  if (!choice) {
    alternatives = {&policy.pipeline()};
    return;
  }
  for (const policies::PassPipeline& alternative : choice->pipelines)
    alternatives.push_back(&alternative);
  if (choice->embedding)
    embedder = std::make_shared<const ModuleEmbedder>(*choice->embedding);
}

Status checkPolicyTexts(const policies::PipelinePolicy& policy) {
  MLGO_TRY(checkPipelineTexts(policy.pipeline()));
  if (policy.choice())
    for (size_t i = 0; i < policy.choice()->pipelines.size(); ++i)
      if (Status texts = checkPipelineTexts(policy.choice()->pipelines[i]); !texts)
        return makeError("choice.pipelines[" + std::to_string(i) + "]: " + texts.error().message);
  return Status::ok();
}

void applyPipeline(llvm::PassBuilder& builder, PipelineRun& run) {
  // Nothing to apply to -Oz, unless a choice among -Oz alternatives decides
  // who inlines: it must still run.
  if (!run.choice && run.alternatives.front()->neutral())
    return;
  registerOwnPassNames(builder, &run);
  // The choice first: it runs before any addition at the pipeline's start.
  if (run.choice)
    builder.registerPipelineStartEPCallback(
        [&run](llvm::ModulePassManager& manager, llvm::OptimizationLevel) {
          manager.addPass(ChooseModulePipeline{{}, &run});
        });
  // Alternatives run in -Oz's own pipeline get their additions at the
  // extension points; a replacement (a single pipeline's: a choice holds
  // none) or -Oz's text with pass parameters replaces -Oz's own run at the
  // start, its added passes in the text.
  run.texts.assign(run.alternatives.size(), std::string());
  for (size_t a = 0; a < run.alternatives.size(); ++a) {
    const policies::PassPipeline& pipeline = *run.alternatives[a];
    if (!pipeline.parameters.empty()) {
      Expected<std::string> text = parameterisedOzPipeline(pipeline);
      if (!text)
        llvm::report_fatal_error(llvm::Twine(text.error().message));
      run.texts[a] = text.take();
      continue;
    }
    run.texts[a] = pipeline.replacement;
    for (const auto& [point, text] : pipeline.additions)
      registerAddition(builder, point, text, run, a);
  }
  if (std::any_of(run.texts.begin(), run.texts.end(), [](const auto& t) { return !t.empty(); }))
    builder.registerPipelineStartEPCallback(
        [&builder, &run](llvm::ModulePassManager& manager, llvm::OptimizationLevel) {
          // A replacement that is itself a default pipeline ("default<Os>")
          // reaches this point again while it is parsed: its own start.
          static thread_local bool parsing = false;
          if (parsing)
            return;
          parsing = true;
          for (size_t a = 0; a < run.texts.size(); ++a) {
            if (run.texts[a].empty())
              continue;
            llvm::ModulePassManager passes;
            if (llvm::Error error = builder.parsePassPipeline(passes, run.texts[a]))
              llvm::report_fatal_error(std::move(error));
            manager.addPass(RunIfChosen{{}, &run, a, std::move(passes)});
          }
          parsing = false;
        });
  llvm::PassInstrumentationCallbacks* callbacks = builder.getPassInstrumentationCallbacks();
  if (!callbacks)
    return;
  callbacks->registerShouldRunOptionalPassCallback(
      [&run](llvm::StringRef pass, llvm::Any) { return shouldRun(run, pass); });
  // The phase: the module inliner's start and end. -Oz's text has no
  // wrapper around the inliner: there its walk over SCCs, the text's one
  // top-level cgscc(…) adaptor, marks the phase (the wrapper holds only
  // analyses besides it). Which one: the chosen alternative's.
  auto isInliner = [&run](llvm::StringRef pass) {
    return pass == (run.pipeline().parameters.empty() ? "ModuleInlinerWrapperPass"
                                                      : "ModuleToPostOrderCGSCCPassAdaptor");
  };
  callbacks->registerBeforeNonSkippedPassCallback(
      [&run, isInliner](llvm::StringRef pass, llvm::Any) {
        if (isInliner(pass))
          run.phase = PipelinePhase::Inliner;
      });
  callbacks->registerAfterPassCallback(
      [&run, isInliner](llvm::StringRef pass, llvm::Any, const llvm::PreservedAnalyses&) {
        if (isInliner(pass))
          run.phase = PipelinePhase::Late;
      });
}

} // namespace mlgo::inprocess
