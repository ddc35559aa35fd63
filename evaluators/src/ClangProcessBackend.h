// The clang-process backend: a clang-22 process per job in the task's
// interactive mode, the policy answering every decision over the channel's
// FIFOs (InteractiveChannel.h), as ml-compiler-opt does. Takes any job; the
// evaluator's fallback for what the in-process backend cannot take.
#pragma once

#include "mlgo/evaluators/Backend.h"
#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/evaluators/InteractiveChannel.h"

#include <atomic>

namespace mlgo::evaluators {

struct ClangExchange; // one running compiler and its job

class ClangProcessBackend final : public Backend {
public:
  ClangProcessBackend(EvaluatorOptions options, CompilerTask task)
      : options_(std::move(options)), task_(std::move(task)) {}

  BackendKind kind() const override { return BackendKind::Clang; }
  bool needsSerializedPolicy() const override { return false; }
  // Always a result: every failure is a status of it.
  std::optional<JobResult> compile(const JobSpec& job, const SerializedPolicy*) override;
  BackendStatistics statistics() const override;

private:
  // Answers the compiler's decisions until it closes the channel; a result
  // only when the exchange failed (the compiler is then ended).
  std::optional<JobResult> answerDecisions(const JobSpec& job, InteractiveChannel& channel,
                                           ClangExchange& exchange) const;

  EvaluatorOptions options_;
  CompilerTask task_;
  std::atomic<size_t> jobs_{0};
};

} // namespace mlgo::evaluators
