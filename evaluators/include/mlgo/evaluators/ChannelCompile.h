// A compiler command whose decisions of a task are answered by a policy
// over clang's interactive channel, as a user's build runs it: the way
// mlgo-cc deploys policies no plugin can carry (register-allocation
// eviction: LLVM 22 has no plugin hook for its advisor). The command keeps
// its standard streams; the channel's FIFOs live in a private scratch
// directory that is removed afterwards.
#pragma once

#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/policies/Policy.h"
#include "mlgo/support/Expected.h"

#include <filesystem>
#include <string>
#include <vector>

namespace mlgo::evaluators {

// Runs `program arguments…` with the task's channel arguments appended and
// answers its questions with `policy` (deterministically) until it exits;
// returns its exit status (128 + signal if killed). A compile that asks
// nothing (no function reaches the decision) just runs. A policy that does
// not fit the compiler's header, or a broken channel, stops the compiler:
// an error that says why (never an object made without the policy).
Expected<int> runCompilerWithChannel(const CompilerTask& task, const policies::Policy& policy,
                                     const std::string& program, std::vector<std::string> arguments,
                                     const std::filesystem::path& scratchParent);

} // namespace mlgo::evaluators
