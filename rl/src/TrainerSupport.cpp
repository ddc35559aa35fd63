#include "TrainerSupport.h"

#include "mlgo/policies/PolicyFile.h"
#include "mlgo/support/Random.h"

#include <algorithm>
#include <numeric>

namespace mlgo::rl::detail {

std::vector<size_t> permutation(size_t n, uint64_t key) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  RandomStream rng(key);
  for (size_t i = n; i > 1; --i)
    std::swap(order[i - 1], order[rng.uniformBelow(i)]);
  return order;
}

std::vector<std::vector<size_t>> miniBatches(const std::vector<size_t>& order, size_t size) {
  std::vector<std::vector<size_t>> batches;
  for (size_t begin = 0; begin < order.size(); begin += size)
    batches.emplace_back(order.begin() + static_cast<ptrdiff_t>(begin),
                         order.begin() +
                             static_cast<ptrdiff_t>(std::min(order.size(), begin + size)));
  return batches;
}

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
        evaluator.compile(*module, echo.get(), policies::DecisionMode::Deterministic, 0, true);
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
    const evaluators::Trajectory& t = *job.trajectory;
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

double stateScalar(const results::StateValues& values, const std::string& name, double fallback) {
  auto it = values.vectors.find(name);
  return it != values.vectors.end() && it->second.size() == 1 ? it->second[0] : fallback;
}

} // namespace mlgo::rl::detail
