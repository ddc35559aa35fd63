#include "mlgo/training/PipelineChoice.h"

#include "mlgo/policies/ModuleFeatures.h"
#include "mlgo/support/Files.h"
#include "mlgo/training/PipelineSearch.h"

#include "TrainerSupport.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

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
  if (!(margin >= 0) || !std::isfinite(margin))
    return makeError("the margin must be a finite number, at least 0");
  if (vote == Vote::Label && margin > 0)
    return makeError("a margin needs the cost vote");
  if (!(novelty > 0 && novelty <= 1))
    return makeError("the novelty quantile must be in (0, 1]");
  if (noveltyAcrossCodeBases && !(novelty < 1))
    return makeError("novelty across code bases needs a novelty quantile below 1");
  return Status::ok();
}

namespace {

bool compiled(double measure) {
  return !std::isnan(measure);
}

// The q-quantile (linear between ranks) of each example's distance to its
// nearest other example (of another code base, with `codeBases`, one per
// example): how far a training module may be from the rest and still be
// typical. Across code bases is what an unseen code base's module meets:
// its own code base is not among the examples. Positive, so that
// duplicated examples cannot make every module novel.
double noveltyDistance(const std::vector<policies::PipelineChoice::Example>& examples, double q,
                       const std::vector<std::string>& codeBases) {
  std::vector<double> nearest;
  for (size_t i = 0; i < examples.size(); ++i) {
    double best = std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < examples.size(); ++j)
      if (j != i && (codeBases.empty() || codeBases[j] != codeBases[i]))
        best = std::min(
            best, policies::PipelineChoice::distance(examples[i].features, examples[j].features));
    if (std::isfinite(best))
      nearest.push_back(best);
  }
  if (nearest.empty())
    return std::numeric_limits<double>::infinity();
  std::sort(nearest.begin(), nearest.end());
  const double rank = q * static_cast<double>(nearest.size() - 1);
  const size_t low = static_cast<size_t>(rank);
  const size_t high = std::min(low + 1, nearest.size() - 1);
  const double value =
      nearest[low] + (nearest[high] - nearest[low]) * (rank - static_cast<double>(low));
  return std::max(value, 1e-9);
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
                                                 const PipelineChoiceOptions& options,
                                                 const std::vector<std::string>& codeBaseOf) {
  MLGO_TRY(options.validate());
  if (!codeBaseOf.empty() && codeBaseOf.size() != features.size())
    return makeError("one code base per module, or none");
  if (options.noveltyAcrossCodeBases && codeBaseOf.empty())
    return makeError("novelty across code bases needs each module's code base");
  if (pool.empty() || measures.size() != pool.size())
    return makeError("one row of measures per pool pipeline, and a pool");
  const size_t modules = measures[0].size();
  const size_t dimension = options.embedding ? policies::ir2VecDimension(*options.embedding) : 0;
  const size_t width = policies::moduleFeatureNames(dimension).size();
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
  choice.features = policies::moduleFeatureNames(dimension);
  choice.embedding = options.embedding;
  choice.neighbours = options.neighbours;
  choice.agreement = options.agreement;
  choice.margin = options.margin;
  if (options.vote == PipelineChoiceOptions::Vote::CostMedian)
    choice.vote = policies::PipelineChoice::CostVote::Median;
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
    std::vector<double> costs;
    if (options.votesWithCosts())
      for (size_t s = 0; s < result.setInPool.size(); ++s)
        costs.push_back((measureOf(s, m) - measureOf(0, m)) / std::max(measureOf(0, m), 1.0));
    choice.examples.push_back({choice.scaled(features[m]), result.labels[m], std::move(costs)});
  }
  if (options.novelty < 1) {
    std::vector<std::string> exampleCodeBases;
    if (options.noveltyAcrossCodeBases)
      for (size_t m : counted)
        exampleCodeBases.push_back(codeBaseOf[m]);
    choice.maxDistance = noveltyDistance(choice.examples, options.novelty, exampleCodeBases);
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
  if (codeBaseOf.empty())
    return result;
  // Leave one code base out: each code base chosen by the others' examples.
  result.leaveCodeBaseOut.assign(modules, 0);
  result.codeBaseOutTotal = 0.0;
  std::vector<std::string> seen;
  for (size_t m : counted) {
    if (std::find(seen.begin(), seen.end(), codeBaseOf[m]) != seen.end())
      continue;
    seen.push_back(codeBaseOf[m]);
    policies::PipelineChoice others = choice;
    others.examples.clear();
    for (size_t i = 0; i < counted.size(); ++i)
      if (codeBaseOf[counted[i]] != codeBaseOf[m])
        others.examples.push_back(choice.examples[i]);
    for (size_t n : counted)
      if (codeBaseOf[n] == codeBaseOf[m]) {
        result.leaveCodeBaseOut[n] = others.examples.empty() ? 0 : others.choose(features[n]);
        *result.codeBaseOutTotal += measureOf(result.leaveCodeBaseOut[n], n);
      }
  }
  return result;
}

std::vector<std::vector<double>>
measureChoicePool(evaluators::Scorer& evaluator, std::span<const corpus::ModuleSpec* const> modules,
                  const std::vector<ChoiceCandidate>& pool,
                  std::shared_ptr<const policies::Policy> inliner) {
  std::vector<policies::PipelinePolicy> policies;
  policies.reserve(pool.size());
  for (const ChoiceCandidate& candidate : pool)
    policies.emplace_back(candidate.pipeline, candidate.withInliner ? inliner : nullptr);
  return measurePipelinePolicies(evaluator, modules, policies).measures;
}

namespace {

// The text `write` makes, written atomically (support's writeFileAtomically).
Status writeWhole(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ostringstream out;
  out.precision(17);
  write(out);
  return writeFileAtomically(path, out.str());
}

} // namespace

Status writeChoiceData(const std::string& path, std::span<const corpus::ModuleSpec* const> modules,
                       const std::vector<std::string>& codeBaseOf,
                       const std::vector<std::string>& featureNames,
                       const std::vector<std::vector<double>>& features,
                       const std::vector<ChoiceCandidate>& pool,
                       const std::vector<std::vector<double>>& measures) {
  if (codeBaseOf.size() != modules.size() || features.size() != modules.size() ||
      measures.size() != pool.size())
    return makeError(path + ": the learning data's rows do not match the modules");
  for (const std::vector<double>& row : features)
    if (row.size() != featureNames.size())
      return makeError(path + ": a feature row does not match the feature names");
  return writeWhole(path, [&](std::ostream& out) {
    out << "module\tcode_base";
    for (const std::string& name : featureNames)
      out << '\t' << name;
    for (const ChoiceCandidate& candidate : pool)
      out << '\t' << candidate.describe();
    out << '\n';
    for (size_t m = 0; m < modules.size(); ++m) {
      out << modules[m]->name << '\t' << codeBaseOf[m];
      for (double value : features[m])
        out << '\t' << value;
      for (size_t p = 0; p < pool.size(); ++p)
        out << '\t' << measures[p][m];
      out << '\n';
    }
  });
}

const std::vector<double>* PoolMeasures::find(const ChoiceCandidate& candidate) const {
  const auto it = std::find(candidates.begin(), candidates.end(), candidate.describe());
  return it == candidates.end() ? nullptr : &columns[it - candidates.begin()];
}

void PoolMeasures::store(const ChoiceCandidate& candidate, std::vector<double> column) {
  const std::string name = candidate.describe();
  const auto it = std::find(candidates.begin(), candidates.end(), name);
  if (it != candidates.end()) {
    columns[it - candidates.begin()] = std::move(column);
    return;
  }
  candidates.push_back(name);
  columns.push_back(std::move(column));
}

namespace {

constexpr std::string_view kPoolTitle = "# mlgo-es choice pool\t";

} // namespace

Status writePoolMeasures(const std::string& path, const std::string& context,
                         std::span<const corpus::ModuleSpec* const> modules,
                         const PoolMeasures& stored) {
  for (const std::vector<double>& column : stored.columns)
    if (column.size() != modules.size())
      return makeError(path + ": a stored column does not match the modules");
  return writeWhole(path, [&](std::ostream& out) {
    out << kPoolTitle << context << "\nmodule";
    for (const std::string& name : stored.candidates)
      out << '\t' << name;
    out << '\n';
    for (size_t m = 0; m < modules.size(); ++m) {
      out << modules[m]->name;
      for (const std::vector<double>& column : stored.columns)
        out << '\t' << column[m];
      out << '\n';
    }
  });
}

Expected<PoolMeasures> readPoolMeasures(const std::string& path, const std::string& context,
                                        std::span<const corpus::ModuleSpec* const> modules) {
  std::ifstream in(path);
  if (!in)
    return makeError(path + ": cannot read");
  std::string title, line;
  std::getline(in, title);
  if (title != std::string(kPoolTitle) + context)
    return makeError(path + ": measured in another context (its header is \"" + title +
                     "\", this run's \"" + std::string(kPoolTitle) + context + "\")");
  std::getline(in, line);
  std::vector<std::string> names = detail::splitTabs(line);
  if (names.empty() || names.front() != "module")
    return makeError(path + ": no column header after the title");
  PoolMeasures stored;
  stored.candidates.assign(names.begin() + 1, names.end());
  stored.columns.assign(stored.candidates.size(), std::vector<double>(modules.size()));
  for (size_t m = 0; m < modules.size(); ++m) {
    if (!std::getline(in, line))
      return makeError(path + ": no row for module " + modules[m]->name);
    const std::vector<std::string> fields = detail::splitTabs(line);
    if (fields.empty())
      return makeError(path + ": an empty row where module " + modules[m]->name + " should be");
    if (fields.front() != modules[m]->name)
      return makeError(path + ": row " + std::to_string(m + 1) + " is module " + fields.front() +
                       ", not " + modules[m]->name + " (measured on other modules)");
    if (fields.size() != names.size())
      return makeError(path + ": a row of " + std::to_string(fields.size()) +
                       " fields for module " + fields.front() + " under a header of " +
                       std::to_string(names.size()));
    for (size_t c = 0; c < stored.candidates.size(); ++c) {
      const std::string& value = fields[c + 1];
      char* end = nullptr;
      stored.columns[c][m] = value == "nan" ? std::nan("") : std::strtod(value.c_str(), &end);
      if (value != "nan" && (value.empty() || *end != '\0'))
        return makeError(path + ": \"" + value + "\" is not a measure (module " + fields.front() +
                         ")");
    }
  }
  if (std::getline(in, line) && !line.empty())
    return makeError(path + ": more rows than modules (measured on other modules)");
  return stored;
}

Status comparePoolMatrices(const std::vector<std::vector<double>>& stored,
                           const std::vector<std::vector<double>>& compiled,
                           std::span<const corpus::ModuleSpec* const> modules,
                           const std::vector<ChoiceCandidate>& pool) {
  for (size_t p = 0; p < pool.size(); ++p)
    for (size_t m = 0; m < modules.size(); ++m) {
      const double a = stored[p][m], b = compiled[p][m];
      if (a != b && !(std::isnan(a) && std::isnan(b)))
        return makeError("the stored pool measures differ from a compile: module " +
                         modules[m]->name + ", " + pool[p].describe() + ": stored " +
                         std::to_string(a) + ", compiled " + std::to_string(b));
    }
  return Status::ok();
}

Expected<PipelineChoiceResult> learnPipelineChoice(
    evaluators::Scorer& evaluator, std::span<const corpus::ModuleSpec* const> modules,
    const std::vector<std::vector<double>>& features, const std::vector<ChoiceCandidate>& pool,
    std::shared_ptr<const policies::Policy> inliner, const PipelineChoiceOptions& options) {
  MLGO_TRY(options.validate());
  for (const ChoiceCandidate& candidate : pool)
    if (candidate.withInliner && !inliner)
      return makeError("pool candidate " + candidate.describe() + ": no inliner policy given");
  const std::vector<std::vector<double>> measures =
      measureChoicePool(evaluator, modules, pool, inliner);
  MLGO_ASSIGN_OR_RETURN(PipelineChoiceResult result,
                        choosePipelineSet(measures, features, pool, options));
  result.compiled = pool.size() * modules.size();
  return result;
}

} // namespace mlgo::training
