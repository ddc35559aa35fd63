#include "mlgo/training/PipelineChoice.h"

#include "mlgo/policies/ModuleFeatures.h"
#include "mlgo/training/PipelineSearch.h"

#include <algorithm>
#include <cmath>

namespace mlgo::training {

using policies::PassPipeline;

std::string ChoiceCandidate::describe() const {
  return pipeline.describe() + (withInliner ? ", inliner policy" : "");
}

Status PipelineChoiceOptions::validate() const {
  if (setSize < 1)
    return makeError("the set needs at least one pipeline (the fallback)");
  if (neighbours < 1)
    return makeError("neighbours must be at least 1");
  if (!(minimumGain >= 0))
    return makeError("the minimum gain must be at least 0");
  if (!(agreement >= 0 && agreement <= 1))
    return makeError("the agreement must be between 0 and 1");
  return Status::ok();
}

namespace {

bool compiled(double measure) {
  return !std::isnan(measure);
}

// Greedy coverage: the fallback, then each time the pool pipeline whose
// addition shrinks the best-of total most.
std::vector<size_t> greedySet(const std::vector<std::vector<double>>& measures,
                              const PipelineChoiceOptions& options, double fallbackTotal) {
  const size_t modules = measures[0].size();
  std::vector<size_t> set{0};
  std::vector<double> best = measures[0];
  while (set.size() < options.setSize) {
    double bestGain = 0;
    size_t bestPipeline = 0;
    for (size_t p = 1; p < measures.size(); ++p) {
      if (std::find(set.begin(), set.end(), p) != set.end())
        continue;
      double gain = 0;
      for (size_t m = 0; m < modules; ++m)
        if (compiled(best[m]) && compiled(measures[p][m]))
          gain += std::max(0.0, best[m] - measures[p][m]);
      if (gain > bestGain) {
        bestGain = gain;
        bestPipeline = p;
      }
    }
    if (bestPipeline == 0 || bestGain < options.minimumGain * fallbackTotal)
      break;
    set.push_back(bestPipeline);
    for (size_t m = 0; m < modules; ++m)
      if (compiled(best[m]) && compiled(measures[bestPipeline][m]))
        best[m] = std::min(best[m], measures[bestPipeline][m]);
  }
  return set;
}

} // namespace

Expected<PipelineChoiceResult> choosePipelineSet(const std::vector<std::vector<double>>& measures,
                                                 const std::vector<std::vector<double>>& features,
                                                 const std::vector<ChoiceCandidate>& pool,
                                                 const PipelineChoiceOptions& options) {
  MLGO_TRY(options.validate());
  if (pool.empty() || measures.size() != pool.size())
    return makeError("one row of measures per pool pipeline, and a pool");
  const size_t modules = measures[0].size();
  const size_t width = policies::moduleFeatureNames().size();
  if (features.size() != modules)
    return makeError("one feature vector per module");
  for (const std::vector<double>& row : features)
    if (row.size() != width)
      return makeError("a feature vector of " + std::to_string(row.size()) + " values, not " +
                       std::to_string(width));
  PipelineChoiceResult result;
  std::vector<size_t> counted; // modules whose fallback compiled
  for (size_t m = 0; m < modules; ++m)
    if (compiled(measures[0][m])) {
      counted.push_back(m);
      result.fallbackTotal += measures[0][m];
    }
  if (counted.empty())
    return makeError("the fallback pipeline compiled no module");
  result.setInPool = greedySet(measures, options, result.fallbackTotal);

  policies::PipelineChoice& choice = result.choice;
  const bool anyInliner =
      std::any_of(pool.begin(), pool.end(), [](const ChoiceCandidate& c) { return c.withInliner; });
  for (size_t p : result.setInPool) {
    if (anyInliner && !pool[p].withInliner)
      choice.heuristicInliner.push_back(choice.pipelines.size());
    choice.pipelines.push_back(pool[p].pipeline);
  }
  choice.features = policies::moduleFeatureNames();
  choice.neighbours = options.neighbours;
  choice.agreement = options.agreement;
  choice.mean.assign(width, 0.0);
  choice.scale.assign(width, 0.0);
  for (size_t m : counted)
    for (size_t i = 0; i < width; ++i)
      choice.mean[i] += features[m][i] / static_cast<double>(counted.size());
  for (size_t m : counted)
    for (size_t i = 0; i < width; ++i)
      choice.scale[i] +=
          std::pow(features[m][i] - choice.mean[i], 2) / static_cast<double>(counted.size());
  for (double& s : choice.scale)
    s = s > 1e-12 ? std::sqrt(s) : 1.0;

  // Labels: each module's best of the set (the earlier on a tie, so the
  // fallback wins ties).
  auto measureOf = [&](size_t inSet, size_t m) {
    const double value = measures[result.setInPool[inSet]][m];
    return compiled(value) ? value : measures[0][m];
  };
  result.labels.assign(modules, 0);
  for (size_t m : counted) {
    for (size_t s = 1; s < result.setInPool.size(); ++s)
      if (measureOf(s, m) < measureOf(result.labels[m], m))
        result.labels[m] = s;
    result.oracleTotal += measureOf(result.labels[m], m);
    choice.examples.push_back({choice.scaled(features[m]), result.labels[m]});
  }
  MLGO_TRY(choice.validate());

  // Leave one out: each module chosen by the others, as an unseen one is.
  result.leaveOneOut.assign(modules, 0);
  for (size_t i = 0; i < counted.size(); ++i) {
    policies::PipelineChoice without = choice;
    without.examples.erase(without.examples.begin() + static_cast<std::ptrdiff_t>(i));
    const size_t m = counted[i];
    result.leaveOneOut[m] = without.examples.empty() ? 0 : without.choose(features[m]);
    result.chosenTotal += measureOf(result.leaveOneOut[m], m);
  }
  return result;
}

Expected<PipelineChoiceResult> learnPipelineChoice(
    evaluators::Scorer& evaluator, std::span<const corpus::ModuleSpec* const> modules,
    const std::vector<std::vector<double>>& features, const std::vector<ChoiceCandidate>& pool,
    std::shared_ptr<const policies::Policy> inliner, const PipelineChoiceOptions& options) {
  MLGO_TRY(options.validate());
  std::vector<policies::PipelinePolicy> policies;
  policies.reserve(pool.size());
  for (const ChoiceCandidate& candidate : pool) {
    if (candidate.withInliner && !inliner)
      return makeError("pool candidate " + candidate.describe() + ": no inliner policy given");
    policies.emplace_back(candidate.pipeline, candidate.withInliner ? inliner : nullptr);
  }
  const PipelineMatrix matrix = measurePipelinePolicies(evaluator, modules, policies);
  const std::vector<std::vector<double>>& measures = matrix.measures;
  MLGO_ASSIGN_OR_RETURN(PipelineChoiceResult result,
                        choosePipelineSet(measures, features, pool, options));
  result.compiled = pool.size() * modules.size();
  return result;
}

} // namespace mlgo::training
