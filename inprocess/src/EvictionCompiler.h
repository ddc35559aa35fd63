// The register allocator's eviction task in a worker: the module through
// RegAllocMeasure's pipeline, its evictions decided by the job's policy. LLVM
// 22 has no hook for an eviction advisor of ours, so the ML advisor (release
// mode) runs with its interactive model runner, and a thread of this worker
// answers that channel, exactly as the clang-process backend answers clang's.
// The channel's name is a process-global option, set once per worker (a
// worker runs one job at a time).
#pragma once

#include "mlgo/evaluators/WorkerProtocol.h"
#include "mlgo/policies/Policy.h"

namespace mlgo::inprocess {

// `policy` null: the default advisor (the task's baseline).
evaluators::protocol::ResultMessage compileEviction(const evaluators::protocol::JobMessage& job,
                                                    const policies::Policy* policy);

} // namespace mlgo::inprocess
