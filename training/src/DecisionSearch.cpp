#include "mlgo/training/DecisionSearch.h"
#include "mlgo/training/TraceRecording.h"

#include "mlgo/rl/MiniBatches.h"
#include "mlgo/support/Random.h"

#include <unordered_map>
#include <unordered_set>

namespace mlgo::training {

namespace {

// One module's place in the search: its current best trajectory and the
// next decision to try.
struct Frontier {
  // The module's own decisions: the start's flips and the flips this
  // module kept. A module's search never sees another module's flips, so its
  // result does not depend on which modules are searched with it.
  std::optional<policies::FlipSetPolicy> base;
  policies::Trajectory trajectory;
  size_t next = 0;           // positions used up (tried, or skipped as shared or past the end)
  std::vector<size_t> order; // positions to try, in order (SearchOrder::Random)
  bool active = false;
  size_t positions = 0;   // decisions of the -Oz trajectory
  uint64_t bestBytes = 0; // the code size of the best decisions (for tried traces)
};

constexpr uint64_t kOrderTag = 0x5ea7c40d;

// A decision a module tries: its index in the search's order (Frontier::next
// counts them) and its position in the current trajectory.
struct Pending {
  size_t index = 0;
  size_t position = 0;
};

// The decisions a module tries next, at most `count`, in the search's order,
// all indexing the current trajectory. Positions past its end are passed over
// (after a kept flip the trajectory can be shorter than the -Oz one the order
// was drawn for). Trying them one at a time gives the same sequence: the
// trajectory changes only at a kept flip, after which the rest are drawn
// again.
std::vector<Pending> nextDecisions(const Frontier& f, const DecisionSearchOptions& options,
                                   size_t count) {
  std::vector<Pending> pending;
  const size_t end = std::min(f.positions, options.maxDecisions);
  for (size_t index = f.next; index < end && pending.size() < count; ++index) {
    const size_t position = f.order.empty() ? index : f.order[index];
    if (position < f.trajectory.decisions())
      pending.push_back({index, position});
  }
  return pending;
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
  if (trialsPerRound < 1)
    return makeError("trialsPerRound: must be at least 1");
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
  DecisionSearchResult result{startFlips.take(), std::move(results), 0, compilations, 0, 0, {}};
  for (Frontier& f : frontier)
    if (f.active)
      f.base = result.policy;
  const policies::FlipSetPolicy startPolicy = result.policy;
  // States some module keeps flipped away from the start; the result is the
  // start with each of them toggled once.
  std::unordered_map<uint64_t, int64_t> keptBy;
  auto merged = [&] {
    policies::FlipSetPolicy policy = startPolicy;
    for (const auto& [state, modules] : keptBy)
      if (modules > 0)
        policy.toggle(state);
    return policy;
  };
  // With incremental trials one compile answers several decisions of a
  // module; the results are the same as one at a time.
  const size_t perRound = scorer.incrementalTrials() ? options.trialsPerRound : 1;

  for (size_t round = 0;; ++round) {
    evaluators::TrialRequest request;
    std::vector<size_t> batchModule;
    std::vector<std::vector<Pending>> pending;
    for (size_t m = 0; m < modules.size(); ++m) {
      Frontier& f = frontier[m];
      if (!f.active)
        continue;
      std::vector<Pending> next = nextDecisions(f, options, perRound);
      if (next.empty()) {
        f.active = false;
        continue;
      }
      evaluators::TrialBatch& batch = request.batches.emplace_back();
      batch.module = modules[m];
      batch.base = &*f.base;
      for (const Pending& p : next) {
        // The trial toggles a state: its compile leaves the base's decisions
        // where that state first occurs, which is where it is forked.
        const uint64_t state =
            f.base->stateHash({f.trajectory.row(p.position), f.trajectory.width});
        size_t first = 0;
        while (f.base->stateHash({f.trajectory.row(first), f.trajectory.width}) != state)
          ++first;
        batch.trials.push_back({first, state});
      }
      batchModule.push_back(m);
      pending.push_back(std::move(next));
    }
    if (request.batches.empty())
      break;
    evaluators::TrialResults trials = scorer.evaluateTrials(request);
    if (trials.problem)
      return makeError("decision search: " + trials.problem->message);
    result.compilations += trials.trials;
    result.incremental += trials.incremental;
    result.verified += trials.verified;
    for (const auto& [why, count] : trials.fullCompiles)
      result.fullCompiles[why] += count;
    for (size_t b = 0; b < batchModule.size(); ++b) {
      const size_t m = batchModule[b];
      Frontier& f = frontier[m];
      ModuleSearch& r = result.modules[m];
      for (size_t t = 0; t < pending[b].size(); ++t) {
        const evaluators::JobResult& job = trials.jobs[b][t];
        const size_t position = pending[b][t].position;
        ++r.tried;
        f.next = pending[b][t].index + 1;
        const bool keep = job.ok() && job.trajectory && job.measured.value_or(0) < *r.best;
        if (options.onTried)
          options.onTried({m, position, &f.trajectory, *r.best, f.bestBytes, &job, keep});
        if (!keep)
          continue;
        const uint64_t state = request.batches[b].trials[t].state;
        f.base->toggle(state);
        const bool differs = f.base->flips(state) != startPolicy.flips(state);
        keptBy[state] += differs ? 1 : -1;
        r.best = job.measured.value_or(0);
        f.bestBytes = job.sizeBytes;
        ++r.kept;
        f.trajectory = *job.trajectory;
        break; // the rest were drawn from the trajectory before this flip
      }
    }
    result.rounds = round + 1;
    result.policy = merged();
    if (options.onRound && !options.onRound(round + 1, options.maxDecisions, result.policy))
      break;
  }
  result.policy = merged();
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
