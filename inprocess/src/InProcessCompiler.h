// One cc1 compilation inside this process, under a policy or plain.
#pragma once

#include "mlgo/evaluators/WorkerProtocol.h"
#include "mlgo/policies/Policy.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace clang {
class CompilerInvocation;
}
namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace mlgo::inprocess {

// Registers every LLVM target once per process (cc1 needs the module's).
void initialiseTargets();

// Asked when the inliner has made its last decision: true if the trainer
// already knows the object size for this decision sequence of this module,
// in which case the rest of the pipeline and code generation are skipped.
using CacheQuestion = std::function<bool(const evaluators::protocol::CacheQueryMessage&)>;

// The cc1 command ("-cc1" first, ending in "-o OBJECT") as clang's
// invocation, without -disable-free (a long-lived worker would leak every
// compilation); `object` gets the -o path, `diagnostics` cc1's complaints.
// An error says why, and `status` (if given) how to report it: a command
// with -mllvm is Unsupported (process-global options).
Expected<std::shared_ptr<clang::CompilerInvocation>>
parseInvocation(const std::vector<std::string>& command, std::string& object,
                std::string& diagnostics, evaluators::protocol::WorkerStatus* status = nullptr);

// clang's optimisation pipeline for the invocation, without code
// generation (EmitLLVMOnlyAction): the optimised module, owned by
// `context`; cc1's complaints appended to `diagnostics`.
Expected<std::unique_ptr<llvm::Module>>
optimiseModule(const std::shared_ptr<clang::CompilerInvocation>& invocation,
               llvm::LLVMContext& context, std::string& diagnostics);

// `policy` null: the plain -Oz compile (LLVM's own inlining heuristic).
evaluators::protocol::ResultMessage compileModule(const evaluators::protocol::JobMessage& job,
                                                  const policies::Policy* policy,
                                                  const CacheQuestion& askCache);

} // namespace mlgo::inprocess
