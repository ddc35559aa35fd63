// The evaluator's jobs as trace files: the step between compiling (the
// evaluators) and storing (results/, which knows nothing of the evaluator).
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/results/TraceFile.h"
#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::training {

// A job's outcome as a row of a trace's /modules.
results::TraceModule traceModule(std::string name, const evaluators::JobResult& job,
                                 std::optional<uint64_t> baselineBytes);

// What a trace's reader needs to know of the task that recorded it:
// "task", "default_feature" (the label BC imitates) and "candidate_mask"
// (a candidate-scoring task's mask feature), the last two possibly empty.
results::TraceAttributes taskAttributes(const evaluators::CompilerTask& task);

// A trace of a one-way search's tried decisions (mlgo-eval search
// --flips-from A --tried) says so: this attribute holds A. Its labels only
// ever cover states where the compiler chose A, so bc-train gives a policy
// trained on them nothing but A to overrule (MlpOptions::residualKept: the
// other actions), and the file carries its own direction; deployed the
// other way, such a policy made validation 6 to 48 % larger.
inline constexpr const char* kFlipsFromAttribute = "flips_from";

// Writes one candidate's jobs of an evaluation as a trace: the features come
// from the first job that recorded a trajectory (an error if none did).
Status writeTrace(const std::filesystem::path& path, const evaluators::EvaluationResult& result,
                  size_t candidate, const std::vector<const corpus::ModuleSpec*>& modules,
                  const results::TraceAttributes& attributes = {});

} // namespace mlgo::training
