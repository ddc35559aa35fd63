// A pass-pipeline action (policies/PassPipeline.h) applied to the
// PassBuilder clang builds its -Oz pipeline with: through the callbacks
// clang hands to every PassBuilder it makes (CodeGenOptions::
// PassBuilderCallbacks in the worker, a pass plugin's registration in a
// build), so that everything else stays clang's own (target machine,
// pipeline tuning, library info, instrumentations).
//
// - Skipped passes: PassInstrumentation's should-run callback declines
//   them (LLVM's own mechanism for optnone and opt-bisect), in the phase
//   the rule names. Required passes are never asked, so nothing a compile
//   needs is skipped.
// - Added passes: parsed (opt's syntax) into the pass manager at their
//   extension point, between two markers; a skip rule does not apply
//   inside them (skipping InstCombinePass and adding instcombine at the end
//   is a real choice).
// - A replacement, or -Oz's text with pass parameters (OzPipeline.h): parsed
//   at the pipeline's start into a pass that runs it (if its alternative is
//   chosen) and after which no optional pass of -Oz's own runs.
// - A choice among pipelines (PipelineChoice): a pass at the pipeline's
//   start counts the module (ModuleFeatures.h) and chooses; every
//   alternative's additions are in the pass manager, and the should-run
//   callback declines the passes of those not chosen, as it declines skips;
//   an alternative with pass parameters runs its own text if chosen.
//   Chosen alternative j compiles what the single pipeline j compiles
//   (PipelineHooks test).
// The neutral pipeline registers nothing: it is clang's own -Oz.
#pragma once

#include "ModuleFeatures.h"

#include "mlgo/policies/ModuleFeatures.h"
#include "mlgo/policies/PassPipeline.h"
#include "mlgo/support/Expected.h"

#include <map>
#include <string>
#include <vector>

namespace llvm {
class PassBuilder;
}

namespace mlgo::inprocess {

// One compile's application of a pipeline (or a policy's choice of one);
// must outlive the pipeline's run.
struct PipelineRun {
  explicit PipelineRun(const policies::PassPipeline& pipeline) : alternatives{&pipeline} {}
  // The policy's pipeline, or its choice's set (chosen when the pipeline starts).
  explicit PipelineRun(const policies::PipelinePolicy& policy);
  std::vector<const policies::PassPipeline*> alternatives;
  const policies::PipelineChoice* choice = nullptr;
  size_t chosen = 0; // into alternatives
  bool choiceMade = false;
  policies::ModuleCounts counted{}; // what the choice read: the counts,
  std::vector<double> features;     // and the features made of them (and the embedding)
  // With a choice whose features include an IR2Vec embedding.
  std::shared_ptr<const ModuleEmbedder> embedder;
  const policies::PassPipeline& pipeline() const { return *alternatives[chosen]; }
  // Whether the pipeline policy's inliner (if it has one) decides in the
  // chosen alternative; false: LLVM's heuristic (PipelineChoice::
  // heuristicInliner). Asked when the inliner starts, after the choice.
  bool inlinerPolicyDecides() const { return !choice || choice->inlinerPolicyIn(chosen); }
  policies::PipelinePhase phase = policies::PipelinePhase::Early;
  int insideAddition = 0; // > 0 while added passes run
  size_t additionOf = 0;  // the alternative whose added passes run
  bool replaced = false;  // the replacement has run
  // Per alternative, what replaces -Oz's own run when it is chosen: its
  // replacement, or -Oz's text with its pass parameters (empty: neither).
  std::vector<std::string> texts;
  uint64_t declinedUnchosen = 0; // pass runs of alternatives not chosen
  // Per skip rule (SkippedPass::text()): how many pass runs it declined.
  std::map<std::string, uint64_t> declined;
  uint64_t declinedAfterReplacement = 0;
};

// Whether LLVM parses every text of the pipeline as passes of its point's
// kind (function passes for the peephole point, …); the error names the
// point and the text. Cheap: builds no pipeline around them.
Status checkPipelineTexts(const policies::PassPipeline& pipeline);
// The same for the policy's pipeline and every pipeline of its choice.
Status checkPolicyTexts(const policies::PipelinePolicy& policy);

// Registers the run's callbacks on `builder` (a neutral pipeline: none).
// Texts must have passed checkPipelineTexts.
void applyPipeline(llvm::PassBuilder& builder, PipelineRun& run);

} // namespace mlgo::inprocess
