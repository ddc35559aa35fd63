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

Status checkPolicyFits(const evaluators::EvaluationResult& result) {
  for (const evaluators::JobResult& job : result.jobs)
    if (job.status == evaluators::JobStatus::PolicyMismatch)
      return makeError("the policy does not fit the compiler's inliner features: " + job.message +
                       "; a starting policy must read the features clang-22 sends (train it "
                       "on them, or start from a random MLP)");
  return Status::ok();
}

evaluators::EvaluationResult recordHeuristic(evaluators::Scorer& scorer,
                                             const std::vector<const corpus::ModuleSpec*>& modules,
                                             bool showProgress) {
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy();
  evaluators::EvaluationRequest request;
  request.candidates = {echo.get()};
  request.modules = modules;
  request.recordTrajectories = true;
  request.showProgress = showProgress;
  return scorer.evaluate(request);
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

namespace {

// The features clang sends (its header), from the first module whose
// compile opened the interactive channel.
Expected<std::vector<policies::TensorSpec>>
probeFeatureSpecs(evaluators::Scorer& scorer, const std::vector<const corpus::ModuleSpec*>& modules,
                  const std::string& corpus) {
  for (const corpus::ModuleSpec* module : modules) {
    evaluators::EvaluationResult probe = recordHeuristic(scorer, {module}, false);
    const evaluators::JobResult& job = probe.job(0, 0);
    if (job.ok() && job.trajectory)
      return job.trajectory->featureSpecs;
  }
  return makeError(corpus + ": no module opened clang's interactive channel; cannot learn the "
                            "features");
}

} // namespace

Expected<policies::MlpPolicy> startingPolicy(const PolicyStartOptions& options, uint64_t seed,
                                             evaluators::Scorer& scorer,
                                             const TrainingCorpus& corpus,
                                             results::RunRecord& record) {
  if (options.initialPolicy) {
    Expected<policies::MlpPolicy> loaded = policies::loadMlpPolicy(*options.initialPolicy);
    if (loaded)
      record.attributes["initial_policy"] = options.initialPolicy->string();
    return loaded;
  }
  Expected<std::vector<policies::TensorSpec>> specs =
      probeFeatureSpecs(scorer, corpus.eligible(), corpus.directory().string());
  if (!specs)
    return specs.error();
  Expected<policies::Vocabulary> vocabulary =
      options.vocabulary
          ? policies::readVocabularyDirectory(*options.vocabulary)
          : vocabularyFromJobs(recordHeuristic(scorer, corpus.eligible(), false).jobs,
                               options.vocabularyQuantiles);
  if (!vocabulary)
    return vocabulary.error();
  record.attributes["vocabulary"] = options.vocabulary
                                        ? options.vocabulary->string()
                                        : "built from the heuristic's decisions on the corpus";
  Expected<std::shared_ptr<const policies::MlpStructure>> structure =
      policies::MlpStructure::create(*specs, *vocabulary, options.mlp);
  if (!structure)
    return structure.error();
  record.attributes["initial_policy"] = "random (seed " + std::to_string(seed) + ")";
  return policies::MlpPolicy::initialised(*structure, seed);
}

} // namespace mlgo::training::detail
