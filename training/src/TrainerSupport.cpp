#include "TrainerSupport.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "mlgo/policies/PolicyFile.h"
#include "mlgo/support/OptionSchema.h"

namespace mlgo::training::detail {

std::string exactDecimal(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

std::vector<std::string> splitTabs(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, '\t');)
    fields.push_back(field);
  return fields;
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
  const evaluators::CompilerTask& task = scorer.task();
  std::unique_ptr<policies::Policy> echo =
      task.defaultDecisionFeature.empty()
          ? policies::makeConstantPolicy(task.neutralAdvice)
          : policies::makeHeuristicEchoPolicy(task.defaultDecisionFeature);
  evaluators::EvaluationRequest request;
  request.candidates = {echo.get()};
  request.modules = modules;
  request.recordTrajectories = true;
  request.showProgress = showProgress;
  return scorer.evaluate(request);
}

void addDecisionSamples(const std::vector<policies::TensorSpec>& specs, const double* row,
                        const std::string& candidateMask, policies::FeatureSamples& samples) {
  // Candidate rows: where the mask is, and how many candidates.
  size_t maskColumn = 0, candidates = 0, column = 0;
  for (const policies::TensorSpec& spec : specs) {
    if (!candidateMask.empty() && spec.name == candidateMask) {
      maskColumn = column;
      candidates = spec.elementCount();
    }
    column += spec.elementCount();
  }
  column = 0;
  for (const policies::TensorSpec& spec : specs) {
    const size_t n = spec.elementCount();
    const bool perCandidate = candidates > 0 && n == candidates;
    if (n == 1 || perCandidate || spec.isFloatVector())
      for (size_t e = 0; e < n; ++e) {
        const double value = row[column + e];
        if (perCandidate && row[maskColumn + e] == 0)
          continue;
        if (std::isfinite(value))
          samples[spec.name].push_back(value);
      }
    column += n;
  }
}

Expected<policies::Vocabulary> vocabularyFromJobs(const std::vector<evaluators::JobResult>& jobs,
                                                  int quantiles, const std::string& candidateMask) {
  policies::FeatureSamples samples;
  for (const evaluators::JobResult& job : jobs) {
    if (!job.ok() || !job.trajectory)
      continue;
    const policies::Trajectory& t = *job.trajectory;
    for (size_t d = 0; d < t.decisions(); ++d)
      addDecisionSamples(t.featureSpecs, t.row(d), candidateMask, samples);
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
  // A program's job is a whole build: no trajectory to learn clang's
  // features or a vocabulary from.
  if (corpus.programs())
    return makeError("training on programs needs an initial policy (--initial-policy: e.g. "
                     "bc-train's clone or a shipped policy); its features cannot be learned "
                     "from a program's run");
  Expected<std::vector<policies::TensorSpec>> specs =
      probeFeatureSpecs(scorer, corpus.eligible(), corpus.source());
  if (!specs)
    return specs.error();
  // A task whose advice is a candidate's index gets a candidate-scoring MLP.
  const evaluators::CompilerTask& task = scorer.task();
  policies::MlpOptions mlp = task.policyOptions(options.mlp);
  Expected<policies::Vocabulary> vocabulary =
      options.vocabulary
          ? policies::readVocabularyDirectory(*options.vocabulary)
          : vocabularyFromJobs(recordHeuristic(scorer, corpus.eligible(), false).jobs,
                               options.vocabularyQuantiles, mlp.candidateMask);
  if (!vocabulary)
    return vocabulary.error();
  record.attributes["vocabulary"] = options.vocabulary
                                        ? options.vocabulary->string()
                                        : "built from the heuristic's decisions on the corpus";
  Expected<std::shared_ptr<const policies::MlpStructure>> structure =
      policies::MlpStructure::create(*specs, *vocabulary, mlp);
  if (!structure)
    return structure.error();
  // A residual start is exactly the compiler's decisions (a zero output
  // layer): say so, as that is what a run's first screen reports.
  record.attributes["initial_policy"] =
      mlp.residualMargin > 0
          ? "the compiler's own decisions (" + mlp.residualFeature + ", residual margin " +
                TextCodec<double>::format(mlp.residualMargin) + "; random hidden layers, seed " +
                std::to_string(seed) + ")"
          : "random (seed " + std::to_string(seed) + ")";
  return policies::MlpPolicy::initialised(*structure, seed);
}

} // namespace mlgo::training::detail
