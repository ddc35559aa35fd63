#include "mlgo/training/DecisionSearch.h"
#include "mlgo/training/TraceRecording.h"

#include "mlgo/rl/MiniBatches.h"
#include "mlgo/support/Random.h"

#include <unordered_set>

namespace mlgo::training {

namespace {

// One module's place in the search: its current best trajectory and the
// next decision to try.
struct Frontier {
  policies::Trajectory trajectory;
  size_t next = 0;           // positions used up (tried, or skipped as shared or past the end)
  std::vector<size_t> order; // positions to try, in order (SearchOrder::Random)
  bool active = false;
  uint64_t trial = 0;     // the state flipped this round
  size_t position = 0;    // its position in the trajectory
  size_t positions = 0;   // decisions of the -Oz trajectory
  uint64_t bestBytes = 0; // the code size of the best decisions (for tried traces)
};

constexpr uint64_t kOrderTag = 0x5ea7c40d;

// The position a module tries in its next round, if any is left: after a
// kept flip the trajectory can be shorter than the -Oz one it was drawn for.
std::optional<size_t> nextPosition(Frontier& f, const DecisionSearchOptions& options) {
  while (f.next < std::min(f.positions, options.maxDecisions)) {
    size_t position = f.order.empty() ? f.next : f.order[f.next];
    if (position < f.trajectory.decisions())
      return position;
    ++f.next;
  }
  return std::nullopt;
}

evaluators::EvaluationResult evaluateWith(evaluators::Scorer& scorer,
                                          const policies::Policy& policy,
                                          std::vector<const corpus::ModuleSpec*> modules) {
  evaluators::EvaluationRequest request;
  request.candidates = {&policy};
  request.modules = std::move(modules);
  request.recordTrajectories = true;
  return scorer.evaluate(request);
}

// A flip set that makes the compiler follow a policy's recorded
// trajectories: the states where the policy's action was not the
// compiler's (none for -Oz's own).
Expected<policies::FlipSetPolicy> flipsFollowing(const evaluators::EvaluationResult& run,
                                                 const std::string& defaultFeature) {
  std::optional<policies::FlipSetPolicy> flips;
  for (size_t m = 0; m < run.moduleCount; ++m) {
    const evaluators::JobResult& job = run.job(0, m);
    if (!job.ok() || !job.trajectory)
      continue;
    const policies::Trajectory& t = *job.trajectory;
    if (!flips) {
      Expected<policies::FlipSetPolicy> created =
          policies::FlipSetPolicy::create(t.featureSpecs, defaultFeature);
      if (!created)
        return created.error();
      flips.emplace(created.take());
    }
    for (size_t d = 0; d < t.decisions(); ++d) {
      uint64_t state = flips->stateHash({t.row(d), t.width});
      if (t.actions[d] != t.defaultDecisions[d] && !flips->flips(state))
        flips->toggle(state);
    }
  }
  if (!flips)
    return makeError("no module compiled with a trajectory");
  return std::move(*flips);
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
  // A flip is the other of two actions, away from the compiler's own.
  const evaluators::CompilerTask& task = scorer.task();
  if (task.actions != 2 || task.defaultDecisionFeature.empty())
    return makeError("decision search: the task " + task.name +
                     " has no binary decision with the compiler's own on its channel (the "
                     "search flips one decision at a time)");
  std::vector<const corpus::ModuleSpec*> all(modules.begin(), modules.end());
  std::unique_ptr<policies::Policy> heuristic =
      policies::makeHeuristicEchoPolicy(task.defaultDecisionFeature);
  evaluators::EvaluationResult start =
      evaluateWith(scorer, options.start ? *options.start : *heuristic, all);
  size_t compilations = modules.size();
  // The search's policy is a flip set: the start's trajectories as flips
  // (none for -Oz). A start policy's flips are compiled once more so that
  // the trajectories searched are the flip set's own (they differ only
  // where two modules share a state).
  Expected<policies::FlipSetPolicy> startFlips = flipsFollowing(start, task.defaultDecisionFeature);
  if (!startFlips)
    return makeError(std::string("decision search: ") +
                     (options.start ? "the start policy: " : "-Oz: ") + startFlips.error().message);
  if (options.start) {
    start = evaluateWith(scorer, *startFlips, all);
    compilations += modules.size();
  }
  bool searchable = false; // some module has a trajectory to search
  std::vector<ModuleSearch> results(modules.size());
  std::vector<Frontier> frontier(modules.size());
  for (size_t m = 0; m < modules.size(); ++m) {
    const evaluators::JobResult& job = start.job(0, m);
    results[m].baseline = start.baselineMeasure(m);
    if (!job.ok() || !job.trajectory || !results[m].baseline)
      continue;
    results[m].start = start.measured(job);
    results[m].best = start.measured(job);
    frontier[m].bestBytes = job.sizeBytes;
    results[m].decisions = job.trajectory->decisions();
    frontier[m].trajectory = *job.trajectory;
    frontier[m].active = results[m].decisions > 0;
    frontier[m].positions = results[m].decisions;
    if (options.order == SearchOrder::Random)
      frontier[m].order =
          rl::permutation(results[m].decisions, deriveKey({options.seed, kOrderTag, m}));
    searchable = true;
  }
  if (!searchable)
    return makeError(std::string("decision search: no module compiled ") +
                     (options.start ? "with the start policy's flips" : "at -Oz") +
                     " with a trajectory");
  DecisionSearchResult result{startFlips.take(), std::move(results), 0, compilations};

  for (size_t round = 0; round < options.maxDecisions; ++round) {
    // Every active module tries its next decision, all in one candidate.
    // A state two modules share is tried by the first only (toggling it
    // twice would undo it); the second moves on past it.
    policies::FlipSetPolicy candidate = result.policy;
    std::vector<size_t> active;
    std::unordered_set<uint64_t> toggled;
    for (size_t m = 0; m < modules.size(); ++m) {
      Frontier& f = frontier[m];
      std::optional<size_t> position = f.active ? nextPosition(f, options) : std::nullopt;
      if (!position)
        continue;
      f.position = *position;
      f.trial = candidate.stateHash({f.trajectory.row(f.position), f.trajectory.width});
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
      const bool keep = job.ok() && job.trajectory && trial.measured(job) < *r.best;
      if (options.onTried)
        options.onTried({m, f.position, &f.trajectory, *r.best, f.bestBytes, &job, keep});
      if (keep) {
        result.policy.toggle(f.trial);
        r.best = trial.measured(job);
        f.bestBytes = job.sizeBytes;
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

Status TriedDecisionTrace::add(const TriedDecision& tried, const std::string& moduleName) {
  const policies::Trajectory& before = *tried.before;
  if (!writer_) {
    Expected<results::TraceWriter> writer =
        results::TraceWriter::create(path_, before.featureSpecs, attributes_);
    if (!writer)
      return writer.error();
    writer_.emplace(writer.take());
  }
  policies::Trajectory one;
  one.featureSpecs = before.featureSpecs;
  one.width = before.width;
  const double* row = before.row(tried.decision);
  one.observations.assign(row, row + before.width);
  const int64_t taken = before.actions[tried.decision];
  one.defaultDecisions = {before.defaultDecisions[tried.decision]};
  one.actions = {tried.kept ? 1 - taken : taken};
  one.logProbabilities = {0.0};
  results::TraceModule module = traceModule(moduleName, *tried.trial, tried.bytesBefore);
  if (tried.trial->ok() && tried.measuredBefore > 0)
    module.reward = reward_(tried.trial->measured.value_or(0), tried.measuredBefore);
  if (Status added = writer_->addModule(module, &one); !added)
    return added;
  ++rows_;
  return Status::ok();
}

Status TriedDecisionTrace::close() {
  return writer_ ? writer_->close() : Status::ok();
}

} // namespace mlgo::training
