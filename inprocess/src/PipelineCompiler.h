// The pass-pipeline task's jobs in the worker: clang's cc1 with the job's
// pipeline applied to its PassBuilder (PipelineHooks.h), the optimised
// module's IR instructions counted, and the object generated as clang does
// (CodeGeneration.h). A plain job (no policy) is -Oz itself.
#pragma once

#include "mlgo/evaluators/WorkerProtocol.h"
#include "mlgo/policies/ModuleFeatures.h"
#include "mlgo/policies/Policy.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace mlgo::inprocess {

// What the pipeline's changes did in one compile (for tests and tools).
struct PipelineReport {
  std::map<std::string, uint64_t> declined; // per skip rule: pass runs declined
  uint64_t declinedAfterReplacement = 0;    // -Oz's optional runs after a replacement
  uint64_t declinedUnchosen = 0;            // added passes of pipelines not chosen
  std::optional<size_t> chosen;             // with a choice: the module's pipeline
  policies::ModuleCounts counted{};         // with a choice: the counts it read
  std::vector<double> features;             // and the features (embedding included)
};

// `policy`: a pipeline policy (policies/PassPipeline.h), or null for -Oz.
// The result's `measured` is the IR instruction count, its size the
// object's code bytes.
evaluators::protocol::ResultMessage compilePipeline(const evaluators::protocol::JobMessage& job,
                                                    const policies::Policy* policy,
                                                    PipelineReport* report = nullptr);

} // namespace mlgo::inprocess
