#include "TrainerSupport.h"

#include "mlgo/policies/PolicyFile.h"

namespace mlgo::training::detail {

std::string policyJson(const policies::MlpPolicy& policy) {
  Expected<std::string> json = policies::policyToJson(policy);
  return json ? *json : std::string("{}");
}

Expected<policies::MlpPolicy> mlpFromJson(const std::string& json, const std::string& origin) {
  Expected<std::unique_ptr<policies::Policy>> policy = policies::policyFromJson(json, origin);
  if (!policy)
    return policy.error();
  auto* mlp = dynamic_cast<policies::MlpPolicy*>(policy->get());
  if (!mlp)
    return makeError(origin + ": the policy is not an MLP");
  return *mlp;
}

evaluators::EvaluationResult recordHeuristic(evaluators::Evaluator& evaluator,
                                             const std::vector<const corpus::ModuleSpec*>& modules,
                                             bool showProgress) {
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy();
  evaluators::EvaluationRequest request;
  request.candidates = {echo.get()};
  request.modules = modules;
  request.recordTrajectories = true;
  request.showProgress = showProgress;
  return evaluator.evaluate(request);
}

Expected<std::vector<policies::TensorSpec>>
probeFeatureSpecs(evaluators::Evaluator& evaluator,
                  const std::vector<const corpus::ModuleSpec*>& modules,
                  const std::string& corpus) {
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy();
  for (const corpus::ModuleSpec* module : modules) {
    evaluators::JobResult job =
        evaluator.compile({.module = module, .policy = echo.get(), .recordTrajectory = true});
    if (job.ok() && job.trajectory)
      return job.trajectory->featureSpecs;
  }
  return makeError(corpus + ": no module opened clang's interactive channel; cannot learn the "
                            "features");
}

Expected<policies::Vocabulary> vocabularyFromJobs(const std::vector<evaluators::JobResult>& jobs,
                                                  int quantiles) {
  policies::FeatureSamples samples;
  for (const evaluators::JobResult& job : jobs) {
    if (!job.ok() || !job.trajectory)
      continue;
    const policies::Trajectory& t = *job.trajectory;
    size_t column = 0;
    for (const policies::TensorSpec& spec : t.featureSpecs) {
      if (spec.elementCount() == 1)
        for (size_t d = 0; d < t.decisions(); ++d)
          samples[spec.name].push_back(t.row(d)[column]);
      column += spec.elementCount();
    }
  }
  policies::VocabularyOptions options;
  options.quantiles = quantiles;
  return policies::buildVocabulary(samples, options);
}

void recordFailure(results::RunRecord& record, int64_t step, int64_t candidate,
                   const std::string& module, const evaluators::JobResult& job) {
  record.failures.push_back({step, candidate, module,
                             std::string(evaluators::jobStatusName(job.status)), job.message,
                             job.stderrTail});
}

} // namespace mlgo::training::detail
