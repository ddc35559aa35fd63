#include "mlgo/policies/PassPipeline.h"

#include "mlgo/policies/ModuleFeatures.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

namespace mlgo::policies {

namespace {

struct PointName {
  ExtensionPoint point;
  std::string_view name;
};
constexpr std::array kPointNames{
    PointName{ExtensionPoint::Peephole, "peephole"},
    PointName{ExtensionPoint::LateLoopOptimizations, "late-loop-optimizations"},
    PointName{ExtensionPoint::LoopOptimizerEnd, "loop-optimizer-end"},
    PointName{ExtensionPoint::ScalarOptimizerLate, "scalar-optimizer-late"},
    PointName{ExtensionPoint::CgsccOptimizerLate, "cgscc-optimizer-late"},
    PointName{ExtensionPoint::VectorizerStart, "vectorizer-start"},
    PointName{ExtensionPoint::VectorizerEnd, "vectorizer-end"},
    PointName{ExtensionPoint::PipelineStart, "pipeline-start"},
    PointName{ExtensionPoint::PipelineEarlySimplification, "pipeline-early-simplification"},
    PointName{ExtensionPoint::OptimizerEarly, "optimizer-early"},
    PointName{ExtensionPoint::OptimizerLast, "optimizer-last"},
};

constexpr std::array<std::string_view, 3> kPhaseNames{"early", "inliner", "late"};

// The module inliner, its CGSCC walk, and the always-inliner: the inlining
// task's decisions.
constexpr std::array<std::string_view, 4> kInlinerPasses{
    "ModuleInlinerWrapperPass", "InlinerPass", "DevirtSCCRepeatedPass", "AlwaysInlinerPass"};

} // namespace

std::string_view extensionPointName(ExtensionPoint point) {
  for (const PointName& entry : kPointNames)
    if (entry.point == point)
      return entry.name;
  return "?";
}

Expected<ExtensionPoint> parseExtensionPoint(std::string_view name) {
  std::string known;
  for (const PointName& entry : kPointNames) {
    if (entry.name == name)
      return entry.point;
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
  }
  return makeError("unknown extension point \"" + std::string(name) + "\" (" + known + ")");
}

const std::vector<ExtensionPoint>& allExtensionPoints() {
  static const std::vector<ExtensionPoint> points = [] {
    std::vector<ExtensionPoint> all;
    for (const PointName& entry : kPointNames)
      all.push_back(entry.point);
    return all;
  }();
  return points;
}

std::string_view phaseName(PipelinePhase phase) {
  return kPhaseNames[static_cast<size_t>(phase)];
}

std::string SkippedPass::text() const {
  return phase ? passClass + "@" + std::string(phaseName(*phase)) : passClass;
}

Expected<SkippedPass> parseSkippedPass(std::string_view text) {
  SkippedPass skipped;
  const size_t at = text.find('@');
  skipped.passClass = std::string(text.substr(0, at));
  if (at != std::string_view::npos) {
    const std::string_view phase = text.substr(at + 1);
    for (size_t i = 0; i < kPhaseNames.size(); ++i)
      if (kPhaseNames[i] == phase)
        skipped.phase = static_cast<PipelinePhase>(i);
    if (!skipped.phase)
      return makeError("skipped pass \"" + std::string(text) + "\": unknown phase \"" +
                       std::string(phase) + "\" (early, inliner or late)");
  }
  if (skipped.passClass.empty())
    return makeError("skipped pass \"" + std::string(text) + "\": no pass class");
  return skipped;
}

const std::vector<std::string>& ozPassClasses() {
  // clang-22's -Oz pipeline on C and C++ (opt-22 -passes='default<Oz>'
  // -debug-pass-manager), less the inliner's passes, the required ones
  // (coroutine lowering, the verifier) and those that change no code
  // (remarks, annotations, profile metadata). PipelineTest checks that each
  // one runs, and can be skipped, on a real module.
  static const std::vector<std::string> classes{
      "ADCEPass",
      "AggressiveInstCombinePass",
      "AlignmentFromAssumptionsPass",
      "BDCEPass",
      "CalledValuePropagationPass",
      "ConstantMergePass",
      "ConstraintEliminationPass",
      "CorrelatedValuePropagationPass",
      "DSEPass",
      "DeadArgumentEliminationPass",
      "DivRemPairsPass",
      "DropUnnecessaryAssumesPass",
      "EarlyCSEPass",
      "EliminateAvailableExternallyPass",
      "Float2IntPass",
      "GVNPass",
      "GlobalDCEPass",
      "GlobalOptPass",
      "IPSCCPPass",
      "IndVarSimplifyPass",
      "InferAlignmentPass",
      "InferFunctionAttrsPass",
      "InstCombinePass",
      "InstSimplifyPass",
      "JumpThreadingPass",
      "LICMPass",
      "LoopDeletionPass",
      "LoopDistributePass",
      "LoopFullUnrollPass",
      "LoopIdiomRecognizePass",
      "LoopInstSimplifyPass",
      "LoopLoadEliminationPass",
      "LoopRotatePass",
      "LoopSimplifyCFGPass",
      "LoopSinkPass",
      "LoopUnrollPass",
      "LoopVectorizePass",
      "LowerConstantIntrinsicsPass",
      "LowerExpectIntrinsicPass",
      "MemCpyOptPass",
      "MergedLoadStoreMotionPass",
      "MoveAutoInitPass",
      "PostOrderFunctionAttrsPass",
      "PromotePass",
      "ReassociatePass",
      "RelLookupTableConverterPass",
      "ReversePostOrderFunctionAttrsPass",
      "SCCPPass",
      "SROAPass",
      "SimpleLoopUnswitchPass",
      "SimplifyCFGPass",
      "SpeculativeExecutionPass",
      "TailCallElimPass",
      "VectorCombinePass",
  };
  return classes;
}

bool isInlinerPass(std::string_view passClass) {
  return std::find(kInlinerPasses.begin(), kInlinerPasses.end(), passClass) != kInlinerPasses.end();
}

bool parametersTakeAdditionsAt(ExtensionPoint point) {
  return point == ExtensionPoint::OptimizerLast || point == ExtensionPoint::ScalarOptimizerLate;
}

std::string PassPipeline::describe() const {
  if (!replacement.empty())
    return "replace: " + replacement;
  if (neutral())
    return "-Oz";
  std::string text = "-Oz";
  for (const SkippedPass& skip : skipped)
    text += " -" + skip.text();
  for (const auto& [point, passes] : additions)
    text += " +" + std::string(extensionPointName(point)) + "=" + passes;
  for (const auto& [pass, values] : parameters)
    text += " " + pass + "<" + values + ">";
  return text;
}

Status PassPipeline::validate() const {
  if (!replacement.empty() && (!skipped.empty() || !additions.empty()))
    return makeError("a replacement pipeline stands alone: no skipped or added passes beside it");
  std::set<SkippedPass> seen;
  const std::vector<std::string>& known = ozPassClasses();
  for (const SkippedPass& skip : skipped) {
    if (isInlinerPass(skip.passClass))
      return makeError("skipped pass \"" + skip.text() +
                       "\": the inliner belongs to the inlining task (its policy or "
                       "the heuristic decide it)");
    if (std::find(known.begin(), known.end(), skip.passClass) == known.end())
      return makeError("skipped pass \"" + skip.text() +
                       "\": not an optional pass class of clang-22's -Oz pipeline "
                       "(mlgo-eval pipeline-search --list-passes names them)");
    if (!seen.insert(skip).second)
      return makeError("skipped pass \"" + skip.text() + "\" is listed twice");
  }
  for (const auto& [point, passes] : additions)
    if (passes.find_first_not_of(" \t") == std::string::npos)
      return makeError("added passes at " + std::string(extensionPointName(point)) +
                       ": empty pipeline text");
  if (!parameters.empty() && !replacement.empty())
    return makeError("pass parameters run -Oz as its text: no replacement beside them");
  if (!parameters.empty())
    for (const auto& [point, passes] : additions)
      if (!parametersTakeAdditionsAt(point))
        return makeError("added passes at " + std::string(extensionPointName(point)) +
                         " beside pass parameters: -Oz's text takes additions only at "
                         "optimizer-last and scalar-optimizer-late (yet)");
  std::set<std::string> named;
  for (const auto& [pass, values] : parameters) {
    if (pass.empty() ||
        pass.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
      return makeError("parameters of \"" + pass +
                       "\": a pass name in opt's syntax (lower case, digits, '-') is expected");
    if (values.find_first_of("<>(),") != std::string::npos)
      return makeError("parameters of \"" + pass + "\": \"" + values +
                       "\" holds a pipeline delimiter (one of < > ( ) ,)");
    if (!named.insert(pass).second)
      return makeError("parameters of \"" + pass + "\" are given twice");
  }
  return Status::ok();
}

PassPipeline PassPipeline::canonical() const {
  PassPipeline result = *this;
  std::sort(result.skipped.begin(), result.skipped.end());
  result.skipped.erase(std::unique(result.skipped.begin(), result.skipped.end()),
                       result.skipped.end());
  std::sort(result.parameters.begin(), result.parameters.end());
  result.parameters.erase(std::unique(result.parameters.begin(), result.parameters.end()),
                          result.parameters.end());
  return result;
}

bool PipelineChoice::inlinerPolicyIn(size_t pipeline) const {
  return !std::binary_search(heuristicInliner.begin(), heuristicInliner.end(), pipeline);
}

std::vector<double> PipelineChoice::scaled(const std::vector<double>& values) const {
  std::vector<double> result(values.size());
  for (size_t i = 0; i < values.size() && i < mean.size(); ++i)
    result[i] = (values[i] - mean[i]) / scale[i];
  return result;
}

PipelineChoice PipelineChoice::forcedTo(size_t pipeline) const {
  PipelineChoice result = *this;
  result.forced = pipeline;
  return result;
}

std::vector<std::shared_ptr<const PipelinePolicy>>
forcedAlternatives(const PipelinePolicy& policy) {
  std::vector<std::shared_ptr<const PipelinePolicy>> result;
  if (const std::shared_ptr<const PipelineChoice>& choice = policy.choice())
    for (size_t p = 0; p < choice->pipelines.size(); ++p)
      result.push_back(std::make_shared<const PipelinePolicy>(
          policy.pipeline(), policy.inliner(),
          std::make_shared<const PipelineChoice>(choice->forcedTo(p))));
  return result;
}

double PipelineChoice::distance(const std::vector<double>& a, const std::vector<double>& b) {
  double squared = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double d = a[i] - b[i];
    squared += d * d;
  }
  return std::sqrt(squared);
}

double PipelineChoice::confirmed(const std::vector<double>& point, size_t pipeline) const {
  const size_t columns = pipelines.size();
  double sum = confirm[point.size() * columns + pipeline];
  for (size_t f = 0; f < point.size(); ++f)
    sum += point[f] * confirm[f * columns + pipeline];
  return sum;
}

double PipelineChoice::weightedMedianCost(const std::vector<std::pair<double, size_t>>& nearest,
                                          size_t k, size_t pipeline) const {
  std::vector<std::pair<double, double>> costs; // (cost, weight), ascending by cost
  double total = 0;
  for (size_t i = 0; i < k; ++i) {
    costs.emplace_back(examples[nearest[i].second].costs[pipeline], 1 / (nearest[i].first + 1e-9));
    total += costs.back().second;
  }
  std::stable_sort(costs.begin(), costs.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  double below = 0;
  for (const auto& [cost, weight] : costs)
    if ((below += weight) >= total / 2)
      return cost;
  return costs.back().first;
}

size_t PipelineChoice::choose(const std::vector<double>& values) const {
  if (forced)
    return *forced;
  const std::vector<double> point = scaled(values);
  std::vector<std::pair<double, size_t>> distances; // (distance, example)
  distances.reserve(examples.size());
  for (size_t e = 0; e < examples.size(); ++e)
    distances.emplace_back(distance(point, examples[e].features), e);
  const size_t k = std::min(neighbours, distances.size());
  std::partial_sort(distances.begin(), distances.begin() + static_cast<std::ptrdiff_t>(k),
                    distances.end());
  if (k == 0 || distances[0].first > maxDistance)
    return 0;
  std::vector<double> votes(pipelines.size(), 0.0);
  double sum = 0;
  for (size_t i = 0; i < k; ++i) {
    const double weight = 1 / (distances[i].first + 1e-9);
    const Example& example = examples[distances[i].second];
    sum += weight;
    if (votesWithCosts())
      for (size_t p = 0; p < pipelines.size(); ++p)
        votes[p] += weight * example.costs[p];
    else
      votes[example.pipeline] += weight;
  }
  if (sum <= 0)
    return 0;
  if (votesWithCosts()) {
    // The cheapest by its neighbours' mean (or median) cost; the fallback
    // (cost 0 by definition) unless another undercuts it by more than the
    // margin.
    for (size_t p = 0; p < pipelines.size(); ++p) {
      votes[p] = vote == CostVote::Median ? weightedMedianCost(distances, k, p) : votes[p] / sum;
      if (p > 0 && inlinerPolicyIn(p))
        votes[p] += inlinerMargin;
    }
    const auto cheapest = std::min_element(votes.begin() + 1, votes.end());
    if (cheapest == votes.end() || *cheapest >= -margin)
      return 0;
    const auto winner = static_cast<size_t>(cheapest - votes.begin());
    double agreeing = 0; // the weight of the neighbours on which it gained
    for (size_t i = 0; i < k; ++i)
      if (examples[distances[i].second].costs[winner] < 0)
        agreeing += 1 / (distances[i].first + 1e-9);
    if (agreeing < agreement * sum)
      return 0;
    return confirm.empty() || confirmed(point, winner) < 0 ? winner : 0;
  }
  const auto best = std::max_element(votes.begin(), votes.end());
  if (*best < agreement * sum)
    return 0;
  return static_cast<size_t>(best - votes.begin());
}

Status PipelineChoice::validate() const {
  if (pipelines.empty())
    return makeError("a choice needs at least one pipeline");
  for (size_t p = 0; p < pipelines.size(); ++p) {
    if (!pipelines[p].replacement.empty())
      return makeError("pipelines[" + std::to_string(p) +
                       "]: a choice is among structured pipelines (skips, additions, pass "
                       "parameters), not replacements");
    if (Status valid = pipelines[p].validate(); !valid)
      return makeError("pipelines[" + std::to_string(p) + "]: " + valid.error().message);
  }
  if (embedding) {
    if (ir2VecDimension(*embedding) == 0 ||
        embedding->entities.size() != embedding->embeddings.size())
      return makeError("embedding: an IR2Vec vocabulary needs entities, one vector each");
    for (const std::vector<double>& vector : embedding->embeddings)
      if (vector.size() != ir2VecDimension(*embedding))
        return makeError("embedding: every vector of the vocabulary as wide as the first");
  }
  const std::vector<std::string> known = moduleFeatureNames(embeddingDimension());
  if (features != known)
    return makeError("features: not the " + std::to_string(known.size()) +
                     " module features this build computes (a policy of another version)");
  if (mean.size() != known.size() || scale.size() != known.size())
    return makeError("mean and scale need one value per feature");
  for (double s : scale)
    if (!(s > 0) || !std::isfinite(s))
      return makeError("scale: every value must be positive");
  if (neighbours == 0)
    return makeError("neighbours must be at least 1");
  if (!(agreement >= 0 && agreement <= 1))
    return makeError("agreement must be between 0 and 1");
  if (!(margin >= 0) || !std::isfinite(margin))
    return makeError("margin must be a finite number, at least 0");
  if (!(inlinerMargin >= 0) || !std::isfinite(inlinerMargin))
    return makeError("inliner_margin must be a finite number, at least 0");
  if (inlinerMargin > 0 && !votesWithCosts())
    return makeError(
        "inliner_margin: a price on the inliner's alternatives needs examples with costs");
  if (vote == CostVote::Median && !votesWithCosts())
    return makeError("vote: a median of the neighbours' costs needs examples with costs");
  if (!(maxDistance > 0))
    return makeError("max_distance must be positive");
  if (forced && *forced >= pipelines.size())
    return makeError("forced: alternative " + std::to_string(*forced) + " of " +
                     std::to_string(pipelines.size()));
  if (examples.empty())
    return makeError("a choice needs examples");
  if (!confirm.empty()) {
    if (!votesWithCosts())
      return makeError("confirm: a second opinion on the cost vote needs examples with costs");
    if (confirm.size() != (known.size() + 1) * pipelines.size())
      return makeError("confirm: " + std::to_string(confirm.size()) + " weights, needs (" +
                       std::to_string(known.size()) + " features + 1) x " +
                       std::to_string(pipelines.size()) + " pipelines");
    for (double weight : confirm)
      if (!std::isfinite(weight))
        return makeError("confirm: weights must be finite");
  }
  for (size_t e = 0; e < examples.size(); ++e) {
    if (examples[e].features.size() != known.size() || examples[e].pipeline >= pipelines.size())
      return makeError("examples[" + std::to_string(e) +
                       "]: one value per feature and a pipeline index in range");
    if (examples[e].costs.size() != (votesWithCosts() ? pipelines.size() : 0))
      return makeError("examples[" + std::to_string(e) +
                       "]: costs for every pipeline in every example, or in none");
    for (double cost : examples[e].costs)
      if (!std::isfinite(cost))
        return makeError("examples[" + std::to_string(e) + "]: costs must be finite");
  }
  for (size_t i = 0; i < heuristicInliner.size(); ++i)
    if (heuristicInliner[i] >= pipelines.size() ||
        (i > 0 && heuristicInliner[i] <= heuristicInliner[i - 1]))
      return makeError("heuristic_inliner: pipeline indices in range, ascending, each once");
  return Status::ok();
}

Expected<std::unique_ptr<Policy>> makePipelinePolicy(PassPipeline pipeline,
                                                     std::shared_ptr<const Policy> inliner,
                                                     std::shared_ptr<const PipelineChoice> choice) {
  if (Status valid = pipeline.validate(); !valid)
    return valid.error();
  if (inliner && dynamic_cast<const PipelinePolicy*>(inliner.get()))
    return makeError("the inliner policy of a pipeline policy is itself a pipeline policy");
  if (choice) {
    if (Status valid = choice->validate(); !valid)
      return makeError("choice: " + valid.error().message);
    if (!choice->heuristicInliner.empty() && !inliner)
      return makeError("choice: heuristic_inliner names the pipelines where LLVM's heuristic "
                       "inlines instead of the policy's inliner, but the policy carries none");
    if (choice->inlinerMargin > 0 && !inliner)
      return makeError("choice: inliner_margin prices the alternatives that run the policy's "
                       "inliner, but the policy carries none");
  }
  return std::unique_ptr<Policy>(
      std::make_unique<PipelinePolicy>(std::move(pipeline), std::move(inliner), std::move(choice)));
}

} // namespace mlgo::policies
