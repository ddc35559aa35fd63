// -Oz's pipeline as text, for the pass-pipeline task's pass parameters:
// no extension point sits where -Oz runs most of its passes, so a pass run
// with other parameters in its own place needs the pipeline written out.
#pragma once

#include "mlgo/policies/PassPipeline.h"
#include "mlgo/support/Expected.h"

#include <string>
#include <utility>
#include <vector>

namespace mlgo::inprocess {

// clang-22's -Oz module pipeline in opt's syntax; parsed by a PassBuilder
// that knows the pipeline hooks' own pass names (vector-combine-early).
const std::string& ozPipelineText();

// That text with every run of each named pass (opt's name, "gvn") given
// the parameters ("no-load-pre"), in place of the ones it had, and the
// inliner's advisor set up before the inliner's walk (mlgo-inline-advisor,
// what the wrapper the text leaves out does). An error names a pass the
// text does not run.
// Added passes go where their extension point sits in the text
// (those policies::parametersTakeAdditionsAt names; PassPipeline::validate
// refuses the others), between
// the markers of PipelineHooks (mlgo-addition-begin, mlgo-addition-end).
Expected<std::string> parameterisedOzPipeline(const policies::PassPipeline& pipeline);

} // namespace mlgo::inprocess
