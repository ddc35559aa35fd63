// LLVM's code generation for a module clang has optimised, assembled by hand
// as addPassesToEmitFile does, with the target machine made from the cc1
// command's options as clang makes it. Used where a pass of ours must run
// inside code generation (RegAllocMeasure.h) or the module must be changed
// between optimisation and code generation (CodeReuse.h); the objects equal
// clang's own (tests: regalloc.default.*, the reuse's verification).
#pragma once

#include "mlgo/support/Expected.h"

#include <functional>

namespace clang {
class CompilerInvocation;
}
namespace llvm {
class Module;
class TargetPassConfig;
class raw_pwrite_stream;
namespace legacy {
class PassManager;
}
} // namespace llvm

namespace mlgo::inprocess {

struct CodeGenerationHooks {
  // Before the target's pipeline: analyses that take the place of its own.
  std::function<void(llvm::legacy::PassManager&)> beforePipeline;
  // Once the pipeline is configured: passes inserted after named ones.
  std::function<void(llvm::TargetPassConfig&)> configure;
  // After the machine passes, before the object is emitted.
  std::function<void(llvm::legacy::PassManager&)> beforeEmission;
};

// Writes `module`'s object for the command's target to `out`.
Status generateObject(llvm::Module& module, const clang::CompilerInvocation& invocation,
                      llvm::raw_pwrite_stream& out, const CodeGenerationHooks& hooks = {});

} // namespace mlgo::inprocess
