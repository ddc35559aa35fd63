// The register-allocation task's measure, in-process: LLVM's own
// RegAllocScore (copies, loads, stores, cheap and expensive
// rematerialisations, each weighted by its block's frequency; what LLVM's
// development mode logs as the eviction reward), summed over the module's
// functions, beside the object's code size.
//
// clang's code generation has no place for a pass of ours (and LLVM's own
// RegAllocScoring pass only logs in development mode, which Debian's LLVM
// lacks), so the module goes through clang's optimisation pipeline only
// (EmitLLVMOnlyAction, the same cc1 options), then through LLVM's code
// generation pipeline assembled here as addPassesToEmitFile does, the target
// machine made from the same options as clang makes it, with one pass after
// the virtual-register rewriter that scores each machine function. The
// object is written to the command's -o and equals clang's (tested on the
// -O2 zlib and Lua corpora: same .text bytes).
#pragma once

#include "mlgo/evaluators/ObjectCode.h"
#include "mlgo/support/Expected.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace mlgo::inprocess {

struct RegAllocMeasure {
  double score = 0; // lower is better
  size_t functions = 0;
  evaluators::CodeMeasure code;
};

// `arguments`: the cc1 command, "-cc1" first, ending in "-o <object>".
// Clang's diagnostics are appended to `diagnostics`.
// `mlAdvisor`: evictions by LLVM's ML advisor in release mode, whose model
// is the interactive channel named by the process-global
// -regalloc-evict-interactive-channel-base (someone must answer it); else the
// default advisor.
// `defaultChoice` (with mlAdvisor): before each question the ML advisor asks,
// LLVM's default advisor is asked the same question and its answer stored
// here as the ML advisor's candidate index (32: evict nothing), which is how
// LLVM's development mode numbers it for its logs. The one answering the
// channel reads it when the question arrives.
Expected<RegAllocMeasure> measureRegAlloc(const std::vector<std::string>& arguments,
                                          const std::vector<std::string>& sizeSections,
                                          std::string& diagnostics, bool mlAdvisor = false,
                                          std::atomic<int64_t>* defaultChoice = nullptr);

} // namespace mlgo::inprocess
