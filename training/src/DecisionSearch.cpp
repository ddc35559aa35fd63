#include "mlgo/training/DecisionSearch.h"
#include "mlgo/training/TraceRecording.h"

#include "mlgo/policies/Mlp.h"
#include "mlgo/rl/Decisions.h"
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
  std::vector<size_t> order; // positions to try, in order (Random, Guided)
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
                                          std::vector<const corpus::ModuleSpec*> modules,
                                          bool showProgress) {
  evaluators::EvaluationRequest request;
  request.candidates = {&policy};
  request.modules = std::move(modules);
  request.recordTrajectories = true;
  request.showProgress = showProgress;
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

// |z1 - z0| of a binary MLP at every decision of `t`, or nothing when the
// guide has no logits (not an MLP, or its inputs are not recorded).
std::vector<double> logitMargins(const policies::Trajectory& t, const policies::Policy* guide) {
  const auto* mlp = dynamic_cast<const policies::MlpPolicy*>(guide);
  if (!mlp || t.decisions() == 0)
    return {};
  Expected<rl::FeatureGather> gather = rl::FeatureGather::create(t.featureSpecs, mlp->inputs());
  if (!gather)
    return {};
  std::vector<double> margins(t.decisions()), row(gather->width());
  for (size_t d = 0; d < t.decisions(); ++d) {
    gather->gather(t.row(d), row.data());
    margins[d] = std::abs(mlp->logProbability(row, 1) - mlp->logProbability(row, 0));
  }
  return margins;
}

} // namespace

std::vector<size_t> guidedOrder(const policies::Trajectory& start, const policies::Policy* guide) {
  const std::vector<double> margins = logitMargins(start, guide);
  auto overruled = [&](size_t d) {
    return d < start.defaultDecisions.size() && start.actions[d] != start.defaultDecisions[d];
  };
  std::vector<size_t> order(start.decisions());
  for (size_t d = 0; d < order.size(); ++d)
    order[d] = d;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (overruled(a) != overruled(b))
      return overruled(a);
    return !margins.empty() && margins[a] < margins[b];
  });
  return order;
}

Status DecisionSearchOptions::validate() const {
  if (trialsPerRound < 1)
    return makeError("trialsPerRound: must be at least 1");
  return Status::ok();
}

namespace {

// A round's trials: per batch, the module and what it tries, in the order
// of the search.
struct Round {
  evaluators::TrialRequest request;
  std::vector<size_t> modules;
  std::vector<std::vector<Pending>> pending;
};

// One search in progress: every module's frontier and the result so far.
class GreedySearch {
public:
  GreedySearch(evaluators::Scorer& scorer, std::span<const corpus::ModuleSpec* const> modules,
               const DecisionSearchOptions& options)
      : scorer_(scorer), modules_(modules.begin(), modules.end()), options_(options),
        frontier_(modules.size()) {}

  // Compiles the start (-Oz or the start policy's flips) with trajectories.
  Status start();
  // The next round's trials; empty when no module has decisions left.
  Round plan();
  // Takes a round's results in the search's order: per module up to its
  // first kept flip (the rest were drawn from the trajectory before it).
  void take(const Round& round, const evaluators::TrialResults& trials);
  // The start with every state some module keeps flipped away from it
  // toggled once.
  policies::FlipSetPolicy merged() const;

  DecisionSearchResult& result() { return *result_; }

private:
  evaluators::Scorer& scorer_;
  std::vector<const corpus::ModuleSpec*> modules_;
  const DecisionSearchOptions& options_;
  std::vector<Frontier> frontier_;
  std::optional<DecisionSearchResult> result_;
  std::optional<policies::FlipSetPolicy> start_;
  std::unordered_map<uint64_t, int64_t> keptBy_; // state -> modules keeping it flipped
};

Status GreedySearch::start() {
  const std::string& defaultFeature = scorer_.task().defaultDecisionFeature;
  std::unique_ptr<policies::Policy> heuristic = policies::makeHeuristicEchoPolicy(defaultFeature);
  evaluators::EvaluationResult start = evaluateWith(
      scorer_, options_.start ? *options_.start : *heuristic, modules_, options_.showProgress);
  size_t compilations = modules_.size();
  // The search's policy is a flip set: the start's trajectories as flips
  // (none for -Oz). A start policy's flips are compiled once more so that
  // the trajectories searched are the flip set's own (they differ only
  // where two modules share a state).
  Expected<policies::FlipSetPolicy> startFlips = flipsFollowing(start, defaultFeature);
  if (!startFlips)
    return makeError(std::string("decision search: ") +
                     (options_.start ? "the start policy: " : "-Oz: ") +
                     startFlips.error().message);
  // Consistent flip sets reproduce a start's decisions only if they were
  // consistent already: a start policy's are compiled again below.
  startFlips->setCalleeConsistent(options_.calleeConsistent);
  if (options_.start) {
    start = evaluateWith(scorer_, *startFlips, modules_, options_.showProgress);
    compilations += modules_.size();
  }
  bool searchable = false; // some module has a trajectory to search
  std::vector<ModuleSearch> results(modules_.size());
  for (size_t m = 0; m < modules_.size(); ++m) {
    const evaluators::JobResult& job = start.job(0, m);
    results[m].baseline = start.baselineMeasure(m);
    if (!job.ok() || !job.trajectory || !results[m].baseline)
      continue;
    Frontier& f = frontier_[m];
    results[m].start = start.measured(job);
    results[m].best = start.measured(job);
    results[m].decisions = job.trajectory->decisions();
    f.base = *startFlips;
    f.bestBytes = job.sizeBytes;
    f.trajectory = *job.trajectory;
    f.active = results[m].decisions > 0;
    f.positions = results[m].decisions;
    if (options_.order == SearchOrder::Random)
      f.order = rl::permutation(results[m].decisions, deriveKey({options_.seed, kOrderTag, m}));
    if (options_.order == SearchOrder::Guided)
      f.order = guidedOrder(f.trajectory, options_.guide ? options_.guide : options_.start);
    searchable = true;
  }
  if (!searchable)
    return makeError(std::string("decision search: no module compiled ") +
                     (options_.start ? "with the start policy's flips" : "at -Oz") +
                     " with a trajectory");
  start_ = *startFlips;
  result_.emplace(
      DecisionSearchResult{startFlips.take(), std::move(results), 0, compilations, 0, 0, {}});
  return Status::ok();
}

Round GreedySearch::plan() {
  // With incremental trials one compile answers several decisions of a
  // module; the results are the same as one at a time.
  const size_t perRound = scorer_.incrementalTrials() ? options_.trialsPerRound : 1;
  Round round;
  for (size_t m = 0; m < modules_.size(); ++m) {
    Frontier& f = frontier_[m];
    if (!f.active)
      continue;
    std::vector<Pending> next = nextDecisions(f, options_, perRound);
    if (next.empty()) {
      f.active = false;
      continue;
    }
    evaluators::TrialBatch& batch = round.request.batches.emplace_back();
    batch.module = modules_[m];
    batch.base = &*f.base;
    auto stateAt = [&](size_t d) {
      return f.base->stateHash({f.trajectory.row(d), f.trajectory.width});
    };
    for (const Pending& p : next) {
      // The trial toggles a state: its compile leaves the base's decisions
      // where that state first occurs, which is where it is forked.
      const uint64_t state = stateAt(p.position);
      size_t first = 0;
      while (stateAt(first) != state)
        ++first;
      batch.trials.push_back({first, state});
    }
    round.modules.push_back(m);
    round.pending.push_back(std::move(next));
  }
  return round;
}

void GreedySearch::take(const Round& round, const evaluators::TrialResults& trials) {
  DecisionSearchResult& result = *result_;
  result.compilations += trials.trials;
  result.incremental += trials.incremental;
  result.verified += trials.verified;
  for (const auto& [why, count] : trials.fullCompiles)
    result.fullCompiles[why] += count;
  for (size_t b = 0; b < round.modules.size(); ++b) {
    const size_t m = round.modules[b];
    Frontier& f = frontier_[m];
    ModuleSearch& r = result.modules[m];
    for (size_t t = 0; t < round.pending[b].size(); ++t) {
      const evaluators::JobResult& job = trials.jobs[b][t];
      ++r.tried;
      f.next = round.pending[b][t].index + 1;
      const bool keep = job.ok() && job.trajectory && job.measured.value_or(0) < *r.best;
      if (options_.onTried)
        options_.onTried(
            {m, round.pending[b][t].position, &f.trajectory, *r.best, f.bestBytes, &job, keep});
      if (!keep)
        continue;
      const uint64_t state = round.request.batches[b].trials[t].state;
      f.base->toggle(state);
      keptBy_[state] += f.base->flips(state) != start_->flips(state) ? 1 : -1;
      r.best = job.measured.value_or(0);
      f.bestBytes = job.sizeBytes;
      ++r.kept;
      f.trajectory = *job.trajectory;
      break;
    }
  }
  result.policy = merged();
}

policies::FlipSetPolicy GreedySearch::merged() const {
  policies::FlipSetPolicy policy = *start_;
  for (const auto& [state, modules] : keptBy_)
    if (modules > 0)
      policy.toggle(state);
  return policy;
}

} // namespace

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
  GreedySearch search(scorer, modules, options);
  MLGO_TRY(search.start());
  for (size_t round = 1;; ++round) {
    Round next = search.plan();
    if (next.request.batches.empty())
      break;
    next.request.showProgress = options.showProgress;
    evaluators::TrialResults trials = scorer.evaluateTrials(next.request);
    if (trials.problem)
      return makeError("decision search: " + trials.problem->message);
    search.take(next, trials);
    search.result().rounds = round;
    if (options.onRound && !options.onRound(round, options.maxDecisions, search.result().policy))
      break;
  }
  return std::move(search.result());
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
