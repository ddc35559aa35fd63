#include "mlgo/training/UnitSearch.h"

#include "mlgo/policies/CalleeConsistent.h"
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
  Expected<std::unique_ptr<policies::Policy>> loadedPolicy =
      policies::loadPolicy(request.policyFile);
  if (!loadedPolicy)
    return loadedPolicy.error();
  const std::shared_ptr<const policies::Policy> policy(loadedPolicy.take());
  std::unique_ptr<policies::Policy> consistent;
  if (options.consistentStart && !policy->calleeConsistent())
    consistent = std::make_unique<policies::CalleeConsistentPolicy>(policy);
  std::unique_ptr<policies::Policy> previous;
  if (!request.previousPolicy.empty()) {
    Expected<std::unique_ptr<policies::Policy>> loaded =
        policies::policyFromJson(request.previousPolicy, "the unit's previous choice");
    if (loaded)
      previous = loaded.take();
  }

  // The starts: the unit's previous choice (after an edit), the policy, its
  // consistent twin, -Oz (the evaluator's baseline). Ties go to the earlier:
  // an edited unit goes on from its previous flips, and the search tries the
  // policy's overrulings rather than none.
  evaluators::EvaluationRequest starts;
  if (previous)
    starts.candidates.push_back(previous.get());
  starts.candidates.push_back(policy.get());
  if (consistent)
    starts.candidates.push_back(consistent.get());
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
  for (size_t c = starts.candidates.size(); c-- > 0;) {
    const evaluators::JobResult& job = measured.job(c, 0);
    if (job.ok() && measured.measured(job) <= startMeasure) {
      startPolicy = starts.candidates[c];
      startMeasure = measured.measured(job);
    }
  }
  auto measuredText = [&](const policies::Policy* candidate) {
    for (size_t c = 0; c < starts.candidates.size(); ++c)
      if (starts.candidates[c] == candidate)
        return measured.job(c, 0).ok() ? bytes(measured.measured(measured.job(c, 0)))
                                       : std::string("failed");
    return std::string("-");
  };

  DecisionSearchOptions search;
  search.maxDecisions = request.budget;
  search.order = options.order;
  search.trialsPerRound = options.trialsPerRound;
  search.start = startPolicy;
  search.guide = policy.get();
  const corpus::ModuleSpec* modules[] = {&request.module};
  Expected<DecisionSearchResult> result = searchDecisions(scorer, modules, search);
  if (!result)
    return result.error();

  deploy::UnitSearchOutcome outcome;
  outcome.ozBytes = std::llround(ozMeasure);
  outcome.chosenBytes = outcome.ozBytes;
  const ModuleSearch* unit = &result->modules.front();
  if (unit->best && *unit->best < ozMeasure) {
    Expected<std::string> json = policies::policyToJson(result->policy);
    if (!json)
      return json.error();
    outcome.chosenPolicy = json.take();
    outcome.chosenBytes = std::llround(*unit->best);
  }
  outcome.summary = "-Oz " + bytes(ozMeasure) + ", policy " + measuredText(policy.get()) +
                    (consistent ? ", consistent " + measuredText(consistent.get()) : "") +
                    (previous ? ", previous " + measuredText(previous.get()) : "") + "; from " +
                    (startPolicy == nullptr            ? "-Oz"
                     : startPolicy == previous.get()   ? "its previous choice"
                     : startPolicy == consistent.get() ? "the consistent policy"
                                                       : "the policy") +
                    ", " + std::to_string(unit->tried) + " decisions tried, " +
                    std::to_string(unit->kept) + " kept";
  return outcome;
}

} // namespace mlgo::training
