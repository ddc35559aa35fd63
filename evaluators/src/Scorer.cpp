#include "mlgo/evaluators/Scorer.h"

#include <chrono>

namespace mlgo::evaluators {

policies::FlipSetPolicy trialPolicy(const TrialBatch& batch, const DecisionTrial& trial) {
  policies::FlipSetPolicy policy = *batch.base;
  policy.toggle(trial.state);
  return policy;
}

TrialResults Scorer::evaluateTrials(const TrialRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  TrialResults out;
  for (const TrialBatch& batch : request.batches) {
    std::vector<JobResult>& jobs = out.jobs.emplace_back();
    for (const DecisionTrial& trial : batch.trials) {
      policies::FlipSetPolicy policy = trialPolicy(batch, trial);
      EvaluationRequest one;
      one.candidates = {&policy};
      one.modules = {batch.module};
      one.recordTrajectories = true;
      EvaluationResult evaluated = evaluate(one);
      if (evaluated.problem && !out.problem)
        out.problem = evaluated.problem;
      jobs.push_back(evaluated.job(0, 0));
      ++out.trials;
      ++out.fullCompiles["no incremental route"];
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

} // namespace mlgo::evaluators
