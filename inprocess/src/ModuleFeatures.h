// A module's counts (policies/ModuleFeatures.h) from its LLVM IR: one
// function for the worker, its --module-features mode and the pass plugin,
// so that what a policy was trained on is what a build shows it.
#pragma once

#include "mlgo/policies/ModuleFeatures.h"

namespace llvm {
class Module;
}

namespace mlgo::inprocess {

policies::ModuleCounts countModule(const llvm::Module& module);

} // namespace mlgo::inprocess
