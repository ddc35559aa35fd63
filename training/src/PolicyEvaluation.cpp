#include "mlgo/training/PolicyEvaluation.h"

#include "mlgo/policies/PolicyFile.h"

namespace mlgo::training {

using namespace results;

Expected<results::PolicySizes> evaluatePolicySizes(const results::RunRecord& run,
                                                   results::PolicyChoice choice,
                                                   const corpus::Corpus& corpus,
                                                   evaluators::Evaluator& evaluator,
                                                   std::string_view origin, bool showProgress) {
  std::optional<PolicySnapshot> snapshot = choosePolicy(run, choice);
  if (!snapshot)
    return makeError(std::string(origin) + ": has no " + std::string(policyChoiceName(choice)) +
                     " policy");
  std::string policyOrigin = std::string(origin) + " (" + std::string(policyChoiceName(choice)) +
                             " policy, step " + std::to_string(snapshot->step) + ")";
  Expected<std::unique_ptr<policies::Policy>> policy =
      policies::policyFromJson(snapshot->policyJson, policyOrigin);
  if (!policy)
    return policy.error();

  evaluators::EvaluationRequest request;
  request.candidates = {policy->get()};
  for (const corpus::ModuleSpec& module : corpus.modules())
    request.modules.push_back(&module);
  request.mode = policies::DecisionMode::Deterministic;
  request.showProgress = showProgress;
  evaluators::EvaluationResult result = evaluator.evaluate(request);

  PolicySizes sizes;
  sizes.source = SizeSource::Evaluated;
  sizes.description = std::string(policyChoiceName(choice)) + " policy (step " +
                      std::to_string(snapshot->step) + ") compiled on " +
                      corpus.directory().string();
  sizes.step = snapshot->step;
  for (size_t m = 0; m < request.modules.size(); ++m) {
    const evaluators::JobResult& job = result.job(0, m);
    sizes.modules.push_back(request.modules[m]->name);
    sizes.sizes.push_back(job.ok() ? static_cast<double>(job.sizeBytes) : kNoValue);
    sizes.baselines.push_back(result.baselineBytes[m].value_or(0));
  }
  return sizes;
}

} // namespace mlgo::training
