#include "mlgo/training/DecisionSearch.h"

#include <unordered_set>

namespace mlgo::training {

namespace {

// One module's place in the search: its current best trajectory and the
// next decision to try.
struct Frontier {
  policies::Trajectory trajectory;
  size_t next = 0;
  bool active = false;
  uint64_t trial = 0; // the state flipped this round
};

evaluators::EvaluationResult evaluateWith(evaluators::Scorer& scorer,
                                          const policies::Policy& policy,
                                          std::vector<const corpus::ModuleSpec*> modules) {
  evaluators::EvaluationRequest request;
  request.candidates = {&policy};
  request.modules = std::move(modules);
  request.recordTrajectories = true;
  return scorer.evaluate(request);
}

} // namespace

Status DecisionSearchOptions::validate() const {
  if (maxDecisions < 1)
    return makeError("maxDecisions: must be at least 1");
  return Status::ok();
}

Expected<DecisionSearchResult> searchDecisions(evaluators::Scorer& scorer,
                                               std::span<const corpus::ModuleSpec* const> modules,
                                               const DecisionSearchOptions& options) {
  if (Status valid = options.validate(); !valid)
    return makeError("decision search: " + valid.error().message);
  std::unique_ptr<policies::Policy> heuristic = policies::makeHeuristicEchoPolicy();
  evaluators::EvaluationResult start =
      evaluateWith(scorer, *heuristic, {modules.begin(), modules.end()});
  const policies::Trajectory* header = nullptr;
  std::vector<ModuleSearch> results(modules.size());
  std::vector<Frontier> frontier(modules.size());
  for (size_t m = 0; m < modules.size(); ++m) {
    const evaluators::JobResult& job = start.job(0, m);
    results[m].baselineBytes = start.baselineBytes[m];
    if (!job.ok() || !job.trajectory || !start.baselineBytes[m])
      continue;
    results[m].bestBytes = job.sizeBytes;
    results[m].decisions = job.trajectory->decisions();
    frontier[m].trajectory = *job.trajectory;
    frontier[m].active = results[m].decisions > 0;
    header = header ? header : &frontier[m].trajectory;
  }
  if (!header)
    return makeError("decision search: no module compiled at -Oz with a trajectory");
  Expected<policies::FlipSetPolicy> created = policies::FlipSetPolicy::create(header->featureSpecs);
  if (!created)
    return makeError("decision search: " + created.error().message);
  DecisionSearchResult result{created.take(), std::move(results), 0, modules.size()};

  for (size_t round = 0; round < options.maxDecisions; ++round) {
    // Every active module tries its next decision, all in one candidate.
    // A state two modules share is tried by the first only (toggling it
    // twice would undo it); the second moves on past it.
    policies::FlipSetPolicy candidate = result.policy;
    std::vector<size_t> active;
    std::unordered_set<uint64_t> toggled;
    for (size_t m = 0; m < modules.size(); ++m) {
      Frontier& f = frontier[m];
      if (!f.active || f.next >= f.trajectory.decisions() || f.next >= options.maxDecisions)
        continue;
      f.trial = candidate.stateHash({f.trajectory.row(f.next), f.trajectory.width});
      if (!toggled.insert(f.trial).second) {
        ++f.next;
        continue;
      }
      candidate.toggle(f.trial);
      active.push_back(m);
    }
    if (active.empty())
      break;
    std::vector<const corpus::ModuleSpec*> tried;
    for (size_t m : active)
      tried.push_back(modules[m]);
    evaluators::EvaluationResult trial = evaluateWith(scorer, candidate, tried);
    result.compilations += tried.size();
    for (size_t i = 0; i < active.size(); ++i) {
      size_t m = active[i];
      Frontier& f = frontier[m];
      ModuleSearch& r = result.modules[m];
      const evaluators::JobResult& job = trial.job(0, i);
      ++r.tried;
      ++f.next;
      if (job.ok() && job.trajectory && job.sizeBytes < *r.bestBytes) {
        result.policy.toggle(f.trial);
        r.bestBytes = job.sizeBytes;
        ++r.kept;
        f.trajectory = *job.trajectory;
      }
    }
    result.rounds = round + 1;
    if (options.onRound && !options.onRound(round + 1, options.maxDecisions, result.policy))
      break;
  }
  return result;
}

} // namespace mlgo::training
