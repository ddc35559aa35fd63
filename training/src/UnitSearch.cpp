#include "mlgo/training/UnitSearch.h"

#include "mlgo/policies/PolicyFile.h"

#include <cmath>

namespace mlgo::training {

namespace {

std::string bytes(double measure) {
  return std::to_string(std::llround(measure)) + " B";
}

} // namespace

Expected<deploy::UnitSearchOutcome> searchTranslationUnit(evaluators::Scorer& scorer,
                                                          const deploy::UnitSearchRequest& request,
                                                          const UnitSearchOptions& options) {
  const evaluators::CompilerTask& task = scorer.task();
  if (task.measure != evaluators::Measure::TextSize || task.defaultDecisionFeature.empty())
    return makeError("the build-time search needs a code-size task with the compiler's own "
                     "decision (" +
                     task.name + " is not one)");
  Expected<std::unique_ptr<policies::Policy>> policy = policies::loadPolicy(request.policyFile);
  if (!policy)
    return policy.error();
  std::unique_ptr<policies::Policy> previous;
  if (!request.previousPolicy.empty()) {
    Expected<std::unique_ptr<policies::Policy>> loaded =
        policies::policyFromJson(request.previousPolicy, "the unit's previous choice");
    if (loaded)
      previous = loaded.take();
  }

  // The starts: -Oz (the evaluator's baseline), the policy, the previous
  // choice. Ties go to the earlier of policy, previous, -Oz (the search then
  // tries the policy's overrulings first).
  evaluators::EvaluationRequest starts;
  starts.candidates = {policy->get()};
  if (previous)
    starts.candidates.push_back(previous.get());
  starts.modules = {&request.module};
  starts.recordTrajectories = true;
  evaluators::EvaluationResult measured = scorer.evaluate(starts);
  const std::optional<double> oz = measured.baselineMeasure(0);
  if (!oz)
    return makeError("-Oz: " + (measured.job(0, 0).message.empty() ? std::string("no baseline")
                                                                   : measured.job(0, 0).message));
  const double ozMeasure = *oz;
  const policies::Policy* startPolicy = nullptr; // -Oz
  double startMeasure = ozMeasure;
  size_t start = 0;
  for (size_t c = 0; c < starts.candidates.size(); ++c) {
    const evaluators::JobResult& job = measured.job(c, 0);
    if (job.ok() && (startPolicy ? measured.measured(job) < startMeasure
                                 : measured.measured(job) <= startMeasure)) {
      startPolicy = starts.candidates[c];
      startMeasure = measured.measured(job);
      start = c + 1;
    }
  }

  DecisionSearchOptions search;
  search.maxDecisions = std::max<size_t>(request.budget, 1);
  search.order = options.order;
  search.trialsPerRound = options.trialsPerRound;
  search.start = startPolicy;
  search.guide = policy->get();
  std::optional<DecisionSearchResult> result;
  if (request.budget > 0) {
    const corpus::ModuleSpec* modules[] = {&request.module};
    Expected<DecisionSearchResult> searched = searchDecisions(scorer, modules, search);
    if (!searched)
      return searched.error();
    result.emplace(searched.take());
  }

  deploy::UnitSearchOutcome outcome;
  outcome.ozBytes = std::llround(ozMeasure);
  outcome.chosenBytes = outcome.ozBytes;
  const ModuleSearch* unit = result ? &result->modules.front() : nullptr;
  if (unit && unit->best && *unit->best < ozMeasure) {
    Expected<std::string> json = policies::policyToJson(result->policy);
    if (!json)
      return json.error();
    outcome.chosenPolicy = json.take();
    outcome.chosenBytes = std::llround(*unit->best);
  }
  const char* startNames[] = {"-Oz", "the policy", "its previous choice"};
  outcome.summary =
      "-Oz " + bytes(ozMeasure) + ", policy " +
      (measured.job(0, 0).ok() ? bytes(measured.measured(measured.job(0, 0))) : "failed") +
      (previous && measured.job(1, 0).ok()
           ? ", previous " + bytes(measured.measured(measured.job(1, 0)))
           : "") +
      "; from " + startNames[start] + ", " + std::to_string(unit ? unit->tried : 0) +
      " decisions tried, " + std::to_string(unit ? unit->kept : 0) + " kept";
  return outcome;
}

} // namespace mlgo::training
