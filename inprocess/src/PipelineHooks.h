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
// - A replacement: parsed at the pipeline's start, followed by a marker
//   after which no optional pass runs.
// The neutral pipeline registers nothing: it is clang's own -Oz.
#pragma once

#include "mlgo/policies/PassPipeline.h"
#include "mlgo/support/Expected.h"

#include <map>
#include <string>

namespace llvm {
class PassBuilder;
}

namespace mlgo::inprocess {

// One compile's application of a pipeline; must outlive the pipeline's run.
struct PipelineRun {
  explicit PipelineRun(const policies::PassPipeline& pipeline) : pipeline(pipeline) {}
  const policies::PassPipeline& pipeline;
  policies::PipelinePhase phase = policies::PipelinePhase::Early;
  int insideAddition = 0; // > 0 while added passes run
  bool replaced = false;  // the replacement has run
  // Per skip rule (SkippedPass::text()): how many pass runs it declined.
  std::map<std::string, uint64_t> declined;
  uint64_t declinedAfterReplacement = 0;
};

// Whether LLVM parses every text of the pipeline as passes of its point's
// kind (function passes for the peephole point, …); the error names the
// point and the text. Cheap: builds no pipeline around them.
Status checkPipelineTexts(const policies::PassPipeline& pipeline);

// Registers the run's callbacks on `builder` (a neutral pipeline: none).
// Texts must have passed checkPipelineTexts.
void applyPipeline(llvm::PassBuilder& builder, PipelineRun& run);

} // namespace mlgo::inprocess
