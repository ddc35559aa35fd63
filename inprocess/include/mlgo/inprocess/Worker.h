// An in-process compile worker: a long-lived process that compiles modules
// with clang's own cc1 (libclang-cpp 22) in its address space and answers the
// inliner's decisions by calling the policy directly, as the ML inliner's
// model. The trainer starts a few (mlgo-inprocess-worker) and feeds them jobs
// over pipes (mlgo/evaluators/WorkerProtocol.h); a compiler crash kills only
// the worker, which the trainer records and replaces.
#pragma once

namespace mlgo::inprocess {

// Serves jobs read from `input` and writes results to `output` until the
// input ends (exit code 0) or carries something that is not the protocol (2).
int runWorker(int input, int output);

// Development aid (mlgo-inprocess-worker --measure-regalloc CORPUS): every
// module's register-allocation score (RegAllocMeasure.h) and .text bytes
// under the default advisor, one line each.
int printRegAllocMeasures(const char* corpusDirectory);

// mlgo-inprocess-worker --module-features FILE.bc…: each module's counts
// (policies/ModuleFeatures.h) as a TSV on stdout, for training a
// module-level pipeline policy; 1 if a file is not bitcode (named on stderr).
int printModuleFeatures(int files, char** paths);

} // namespace mlgo::inprocess
