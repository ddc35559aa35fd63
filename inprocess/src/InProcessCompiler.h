// One cc1 compilation inside this process, under a policy or plain.
#pragma once

#include "mlgo/evaluators/WorkerProtocol.h"
#include "mlgo/policies/Policy.h"

#include <functional>

namespace mlgo::inprocess {

// Registers every LLVM target once per process (cc1 needs the module's).
void initialiseTargets();

// Asked when the inliner has made its last decision: true if the trainer
// already knows the object size for this decision sequence of this module,
// in which case the rest of the pipeline and code generation are skipped.
using CacheQuestion = std::function<bool(const evaluators::protocol::CacheQueryMessage&)>;

// `policy` null: the plain -Oz compile (LLVM's own inlining heuristic).
evaluators::protocol::ResultMessage compileModule(const evaluators::protocol::JobMessage& job,
                                                  const policies::Policy* policy,
                                                  const CacheQuestion& askCache);

} // namespace mlgo::inprocess
