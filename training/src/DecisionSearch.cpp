#include "mlgo/training/DecisionSearch.h"
#include "mlgo/training/TraceRecording.h"

#include "TrainerSupport.h"

#include "mlgo/policies/Mlp.h"
#include "mlgo/rl/Decisions.h"
#include "mlgo/rl/MiniBatches.h"
#include "mlgo/support/Files.h"
#include "mlgo/support/Random.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <sstream>
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
  size_t rounds = 0;      // rounds this module has done
  // The states this module kept flipped, in order, and the last one's trial
  // position: what a checkpoint needs to compile its trajectory again.
  std::vector<uint64_t> toggled;
  size_t lastPosition = 0;
  // While nothing is kept: the cheapest tried flips, the pair phase's first
  // steps, cheapest first (ties: the earlier tried first).
  std::vector<SearchProgress::FirstStep> firsts;
};

constexpr uint64_t kOrderTag = 0x5ea7c40d;
constexpr uint64_t kVisitTag = 0x7151707d;

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
    // A call the callee-consistency rule answers from an earlier call's
    // commitment changes nothing when flipped there: not tried. (Its state,
    // if it also occurs elsewhere, is tried at that position.)
    const std::vector<uint8_t>& follows = f.trajectory.followsCommitment;
    if (position >= f.trajectory.decisions() || (position < follows.size() && follows[position]))
      continue;
    // One way only: a decision already on the other action is passed over.
    if (options.flipsFrom && f.trajectory.actions[position] != *options.flipsFrom)
      continue;
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
  if (pairFirsts > 0 && pairSeconds < 1)
    return makeError("pairSeconds: must be at least 1 with pairs (pairFirsts " +
                     std::to_string(pairFirsts) + ")");
  if (flipsFrom && *flipsFrom != 0 && *flipsFrom != 1)
    return makeError("flipsFrom: must be one of the two actions, 0 or 1 (got " +
                     std::to_string(*flipsFrom) + ")");
  return Status::ok();
}

namespace {

// A round's trials: per batch, the module and what it tries, in the order
// of the search.
struct Round {
  evaluators::TrialRequest request;
  std::vector<size_t> modules;
  std::vector<std::vector<Pending>> pending;

  // Batches [from, from + count): modules are independent, so a round
  // compiled in slices keeps the same flips.
  Round slice(size_t from, size_t count) const {
    const size_t to = std::min(modules.size(), from + count);
    Round part;
    part.request.showProgress = request.showProgress;
    part.request.batches.assign(request.batches.begin() + from, request.batches.begin() + to);
    part.modules.assign(modules.begin() + from, modules.begin() + to);
    part.pending.assign(pending.begin() + from, pending.begin() + to);
    return part;
  }
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
  // Continues from a checkpoint: every module's frontier as saved, its
  // trajectory compiled again from its last kept flip (`compile`; a search
  // that had stopped needs none).
  Status restore(const SearchProgress& saved, bool compile);
  // Round `round`'s trials (modules that have done it already are not in
  // it); empty when no module has decisions left.
  Round plan(size_t round);
  // Takes a round's results in the search's order: per module up to its
  // first kept flip (the rest were drawn from the trajectory before it).
  void take(const Round& round, const evaluators::TrialResults& trials);
  // The pair phase (DecisionSearchOptions::pairFirsts), once.
  Status pairs();
  bool pairsDone() const { return pairsDone_; }
  // The start with every state some module keeps flipped away from it
  // toggled once.
  policies::FlipSetPolicy merged() const;
  SearchProgress progress(uint64_t fingerprint, bool stopped) const;
  // Whether some module has done round `round` (a resumed round).
  bool begun(size_t round) const {
    return std::any_of(frontier_.begin(), frontier_.end(),
                       [&](const Frontier& f) { return f.rounds >= round; });
  }

  DecisionSearchResult& result() { return *result_; }

private:
  evaluators::Scorer& scorer_;
  std::vector<const corpus::ModuleSpec*> modules_;
  const DecisionSearchOptions& options_;
  std::vector<Frontier> frontier_;
  std::optional<DecisionSearchResult> result_;
  std::optional<policies::FlipSetPolicy> start_;
  std::unordered_map<uint64_t, int64_t> keptBy_; // state -> modules keeping it flipped
  bool pairsDone_ = false;

  // A first step of the pair phase and the decisions tried after it.
  struct PairBatch {
    size_t module = 0, first = 0;                  // first: index into the module's firsts
    const evaluators::JobResult* before = nullptr; // the first step alone, with its trajectory
    std::vector<size_t> positions;                 // the second flips', in its trajectory
  };
  // Compiles a round of the pair phase; its trials count as the phase's.
  Expected<evaluators::TrialResults> pairRound(Round& round);
  // The trials of a first step (toggled in `base`): the next pairSeconds
  // decisions of its trajectory, each toggled as well.
  evaluators::TrialBatch pairTrials(PairBatch& plan, const policies::FlipSetPolicy& base) const;
  // Each module keeps its best pair if it is smaller than its start.
  void keepBestPairs(const std::vector<PairBatch>& planned, const Round& pairs,
                     const evaluators::TrialResults& tried);

  // Module m keeps `state` toggled from its base.
  void keepFlip(size_t m, uint64_t state) {
    Frontier& f = frontier_[m];
    f.base->toggle(state);
    keptBy_[state] += f.base->flips(state) != start_->flips(state) ? 1 : -1;
    f.toggled.push_back(state);
  }
  // A tried flip that did not pay, as a first step of module m's pairs.
  void rememberFirst(size_t m, const SearchProgress::FirstStep& step) {
    std::vector<SearchProgress::FirstStep>& firsts = frontier_[m].firsts;
    auto at =
        std::upper_bound(firsts.begin(), firsts.end(), step,
                         [](const auto& a, const auto& b) { return a.measured < b.measured; });
    if (static_cast<size_t>(at - firsts.begin()) >= options_.pairFirsts)
      return;
    firsts.insert(at, step);
    if (firsts.size() > options_.pairFirsts)
      firsts.pop_back();
  }
  void count(const evaluators::TrialResults& trials) {
    DecisionSearchResult& result = *result_;
    result.compilations += trials.trials;
    result.incremental += trials.incremental;
    result.verified += trials.verified;
    for (const auto& [why, n] : trials.fullCompiles)
      result.fullCompiles[why] += n;
  }
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

Round GreedySearch::plan(size_t roundNumber) {
  // With incremental trials one compile answers several decisions of a
  // module; the results are the same as one at a time.
  const size_t perRound = scorer_.incrementalTrials() ? options_.trialsPerRound : 1;
  Round round;
  // Modules in a random order of the round (seeded): a round cut short by a
  // time budget has then searched a sample of every code base, not the
  // first code bases of a merged corpus. Modules are independent, so a
  // whole round keeps the same flips in any order.
  for (size_t m :
       rl::permutation(modules_.size(), deriveKey({options_.seed, kVisitTag, roundNumber}))) {
    Frontier& f = frontier_[m];
    if (!f.active || f.rounds >= roundNumber)
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
  count(trials);
  for (size_t b = 0; b < round.modules.size(); ++b) {
    const size_t m = round.modules[b];
    Frontier& f = frontier_[m];
    ModuleSearch& r = result.modules[m];
    ++f.rounds;
    for (size_t t = 0; t < round.pending[b].size(); ++t) {
      const evaluators::JobResult& job = trials.jobs[b][t];
      ++r.tried;
      f.next = round.pending[b][t].index + 1;
      const bool keep = job.ok() && job.trajectory && job.measured.value_or(0) < *r.best;
      if (options_.onTried)
        options_.onTried(
            {m, round.pending[b][t].position, &f.trajectory, *r.best, f.bestBytes, &job, keep});
      const evaluators::DecisionTrial& trial = round.request.batches[b].trials[t];
      if (!keep) {
        if (options_.pairFirsts > 0 && r.kept == 0 && job.ok() && job.trajectory && job.measured)
          rememberFirst(m, {*job.measured, trial.position, trial.state});
        continue;
      }
      keepFlip(m, trial.state);
      f.firsts.clear();
      f.lastPosition = trial.position;
      r.best = job.measured.value_or(0);
      f.bestBytes = job.sizeBytes;
      ++r.kept;
      f.trajectory = *job.trajectory;
      break;
    }
  }
  result.policy = merged();
}

Expected<evaluators::TrialResults> GreedySearch::pairRound(Round& round) {
  round.request.showProgress = options_.showProgress;
  evaluators::TrialResults trials = scorer_.evaluateTrials(round.request);
  if (trials.problem)
    return *trials.problem;
  count(trials);
  result_->pairTrials += trials.trials;
  return trials;
}

Status GreedySearch::pairs() {
  pairsDone_ = true;
  // The first steps' trajectories: each compiled again as a trial of the
  // module's start (a checkpoint keeps the steps, not their trajectories).
  Round record;
  for (size_t m = 0; m < modules_.size(); ++m) {
    const Frontier& f = frontier_[m];
    if (!f.base || result_->modules[m].kept > 0 || f.firsts.empty())
      continue;
    evaluators::TrialBatch& batch = record.request.batches.emplace_back();
    batch.module = modules_[m];
    batch.base = &*f.base;
    for (const SearchProgress::FirstStep& first : f.firsts)
      batch.trials.push_back({first.position, first.state});
    record.modules.push_back(m);
  }
  if (record.modules.empty())
    return Status::ok();
  MLGO_ASSIGN_OR_RETURN(const evaluators::TrialResults recorded, pairRound(record));

  // Per module and first step, the next pairSeconds decisions of the first
  // step's trajectory, each a trial of both flips.
  std::vector<PairBatch> planned;
  std::vector<policies::FlipSetPolicy> bases;
  size_t firstSteps = 0;
  for (const evaluators::TrialBatch& batch : record.request.batches)
    firstSteps += batch.trials.size();
  bases.reserve(firstSteps); // batches point into it
  Round pairs;
  for (size_t b = 0; b < record.modules.size(); ++b) {
    const Frontier& f = frontier_[record.modules[b]];
    for (size_t k = 0; k < f.firsts.size(); ++k) {
      const evaluators::JobResult& job = recorded.jobs[b][k];
      if (!job.ok() || !job.trajectory)
        continue;
      bases.push_back(*f.base);
      bases.back().toggle(f.firsts[k].state);
      PairBatch plan{record.modules[b], k, &job, {}};
      evaluators::TrialBatch batch = pairTrials(plan, bases.back());
      if (batch.trials.empty())
        continue;
      pairs.request.batches.push_back(std::move(batch));
      pairs.modules.push_back(plan.module);
      planned.push_back(std::move(plan));
    }
  }
  if (planned.empty())
    return Status::ok();
  MLGO_ASSIGN_OR_RETURN(const evaluators::TrialResults tried, pairRound(pairs));
  keepBestPairs(planned, pairs, tried);
  return Status::ok();
}

evaluators::TrialBatch GreedySearch::pairTrials(PairBatch& plan,
                                                const policies::FlipSetPolicy& base) const {
  const SearchProgress::FirstStep& first = frontier_[plan.module].firsts[plan.first];
  const policies::Trajectory& t = *plan.before->trajectory;
  auto stateAt = [&](size_t d) { return base.stateHash({t.row(d), t.width}); };
  evaluators::TrialBatch batch{modules_[plan.module], &base, {}};
  for (size_t d = first.position + 1;
       d < t.decisions() && plan.positions.size() < options_.pairSeconds; ++d) {
    const std::vector<uint8_t>& follows = t.followsCommitment;
    if ((d < follows.size() && follows[d]) ||
        (options_.flipsFrom && t.actions[d] != *options_.flipsFrom))
      continue;
    const uint64_t state = stateAt(d);
    if (state == first.state) // toggled again, it would undo the first step
      continue;
    size_t at = 0; // the trial forks where the state first occurs
    while (stateAt(at) != state)
      ++at;
    batch.trials.push_back({at, state});
    plan.positions.push_back(d);
  }
  return batch;
}

void GreedySearch::keepBestPairs(const std::vector<PairBatch>& planned, const Round& pairs,
                                 const evaluators::TrialResults& tried) {
  DecisionSearchResult& result = *result_;
  // Each module's best pair (ties: the earlier tried), kept if it is
  // smaller than the module's start.
  std::map<size_t, std::pair<size_t, size_t>> best; // module -> (batch, trial)
  for (size_t b = 0; b < planned.size(); ++b)
    for (size_t t = 0; t < planned[b].positions.size(); ++t) {
      const evaluators::JobResult& job = tried.jobs[b][t];
      const size_t m = planned[b].module;
      if (!job.ok() || !job.trajectory || !job.measured || *job.measured >= *result.modules[m].best)
        continue;
      auto found = best.find(m);
      if (found == best.end() ||
          *job.measured < *tried.jobs[found->second.first][found->second.second].measured)
        best[m] = {b, t};
    }
  for (size_t b = 0; b < planned.size(); ++b) {
    const PairBatch& plan = planned[b];
    const auto chosen = best.find(plan.module);
    for (size_t t = 0; t < plan.positions.size(); ++t) {
      ++result.modules[plan.module].tried;
      const bool kept = chosen != best.end() && chosen->second == std::make_pair(b, t);
      if (options_.onTried)
        options_.onTried({plan.module, plan.positions[t], &*plan.before->trajectory,
                          plan.before->measured.value_or(0), plan.before->sizeBytes,
                          &tried.jobs[b][t], kept});
    }
  }
  for (const auto& [m, at] : best) {
    const auto [b, t] = at;
    Frontier& f = frontier_[m];
    ModuleSearch& r = result.modules[m];
    const evaluators::JobResult& job = tried.jobs[b][t];
    const evaluators::DecisionTrial& second = pairs.request.batches[b].trials[t];
    keepFlip(m, f.firsts[planned[b].first].state);
    keepFlip(m, second.state);
    f.lastPosition = second.position;
    f.firsts.clear();
    r.best = *job.measured;
    r.kept += 2;
    f.bestBytes = job.sizeBytes;
    f.trajectory = *job.trajectory;
    ++result.pairModules;
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

SearchProgress GreedySearch::progress(uint64_t fingerprint, bool stopped) const {
  const DecisionSearchResult& result = *result_;
  SearchProgress saved;
  saved.fingerprint = fingerprint;
  saved.stopped = stopped;
  saved.rounds = result.rounds;
  saved.compilations = result.compilations;
  saved.incremental = result.incremental;
  saved.verified = result.verified;
  saved.fullCompiles = result.fullCompiles;
  for (size_t m = 0; m < modules_.size(); ++m) {
    const Frontier& f = frontier_[m];
    const ModuleSearch& r = result.modules[m];
    saved.modules.push_back({f.rounds, f.next, f.active, r.tried, r.start, r.best, f.bestBytes,
                             f.toggled, f.lastPosition, f.firsts});
  }
  saved.pairsDone = pairsDone_;
  saved.pairTrials = result.pairTrials;
  saved.pairModules = result.pairModules;
  return saved;
}

Status GreedySearch::restore(const SearchProgress& saved, bool compile) {
  DecisionSearchResult& result = *result_;
  if (saved.modules.size() != modules_.size())
    return makeError("the checkpoint has " + std::to_string(saved.modules.size()) +
                     " modules, the search " + std::to_string(modules_.size()));
  // Each restored module compiles its base before its last kept flip with
  // that flip as a trial: the compile whose trajectory it continued from.
  std::vector<policies::FlipSetPolicy> bases;
  bases.reserve(modules_.size()); // batches point into it
  Round again;
  for (size_t m = 0; m < modules_.size(); ++m) {
    const SearchProgress::Module& s = saved.modules[m];
    Frontier& f = frontier_[m];
    ModuleSearch& r = result.modules[m];
    if (s.start != r.start)
      return makeError("module " + modules_[m]->name +
                       " does not start where it did when the checkpoint was saved (the "
                       "compiler, the corpus or the start policy changed)");
    f.rounds = s.rounds;
    f.next = s.next;
    f.active = s.active;
    f.bestBytes = s.bestBytes;
    f.lastPosition = s.lastPosition;
    r.tried = s.tried;
    r.kept = s.toggled.size();
    r.best = s.best;
    f.firsts = s.firsts;
    if (s.toggled.empty())
      continue;
    if (!f.base)
      return makeError("module " + modules_[m]->name +
                       " kept flips in the checkpoint but has no trajectory now");
    for (uint64_t state : s.toggled)
      keepFlip(m, state);
    if (!compile)
      continue;
    bases.push_back(*f.base);
    bases.back().toggle(s.toggled.back());
    evaluators::TrialBatch& batch = again.request.batches.emplace_back();
    batch.module = modules_[m];
    batch.base = &bases.back();
    batch.trials.push_back({s.lastPosition, s.toggled.back()});
    again.modules.push_back(m);
  }
  pairsDone_ = saved.pairsDone;
  result.pairTrials = saved.pairTrials;
  result.pairModules = saved.pairModules;
  result.rounds = saved.rounds;
  result.compilations = saved.compilations;
  result.incremental = saved.incremental;
  result.verified = saved.verified;
  result.fullCompiles = saved.fullCompiles;
  result.policy = merged();
  if (again.modules.empty())
    return Status::ok();
  again.request.showProgress = options_.showProgress;
  evaluators::TrialResults trials = scorer_.evaluateTrials(again.request);
  if (trials.problem)
    return *trials.problem;
  result.compilations += trials.trials;
  for (size_t b = 0; b < again.modules.size(); ++b) {
    const size_t m = again.modules[b];
    const evaluators::JobResult& job = trials.jobs[b][0];
    if (!job.ok() || !job.trajectory || job.measured != result.modules[m].best ||
        job.sizeBytes != frontier_[m].bestBytes)
      return makeError("module " + modules_[m]->name +
                       " does not compile with its kept flips to what it measured when the "
                       "checkpoint was saved (the compiler or the corpus changed)");
    frontier_[m].trajectory = *job.trajectory;
  }
  return Status::ok();
}

} // namespace

namespace {

constexpr std::string_view kProgressHeader = "mlgo-search-progress 1";

std::string optionalReal(const std::optional<double>& value) {
  return value ? detail::exactDecimal(*value) : "-";
}

bool parseReal(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

// Reads the whitespace-separated fields of one line.
class Fields {
public:
  explicit Fields(std::string_view line) : in_(std::string(line)) {}
  bool word(std::string& out) { return static_cast<bool>(in_ >> out); }
  template <class T> bool integer(T& out) {
    std::string text;
    if (!word(text))
      return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
  }
  bool real(double& out) {
    std::string text;
    return word(text) && parseReal(text, out);
  }
  // "-" for none; any number, negative too, otherwise.
  bool optionalReal(std::optional<double>& out) {
    std::string text;
    if (!word(text))
      return false;
    out.reset();
    if (text == "-")
      return true;
    double value = 0;
    if (!parseReal(text, value))
      return false;
    out = value;
    return true;
  }
  std::string rest() {
    std::string text;
    std::getline(in_ >> std::ws, text);
    return text;
  }
  bool done() { return !(in_ >> std::ws).good() || in_.peek() == EOF; }

private:
  std::istringstream in_;
};

} // namespace

std::string SearchProgress::text() const {
  std::string out = std::string(kProgressHeader) + "\n";
  char line[160];
  std::snprintf(line, sizeof line, "fingerprint %016llx\nstopped %d\nrounds %zu\n",
                static_cast<unsigned long long>(fingerprint), stopped ? 1 : 0, rounds);
  out += line;
  std::snprintf(line, sizeof line, "counts %zu %zu %zu\n", compilations, incremental, verified);
  out += line;
  for (const auto& [why, count] : fullCompiles)
    out += "full " + std::to_string(count) + " " + why + "\n";
  for (const auto& [name, value] : extra)
    out += "extra " + name + " " + detail::exactDecimal(value) + "\n";
  for (const Module& m : modules) {
    out += "module " + std::to_string(m.rounds) + " " + std::to_string(m.next) + " " +
           (m.active ? "1 " : "0 ") + std::to_string(m.tried) + " " + optionalReal(m.start) + " " +
           optionalReal(m.best) + " " + std::to_string(m.bestBytes) + " " +
           std::to_string(m.lastPosition) + " " + std::to_string(m.toggled.size());
    for (uint64_t state : m.toggled)
      out += " " + std::to_string(state);
    out += "\n";
  }
  // Only when there are any, so that checkpoints without pairs read as
  // before.
  for (size_t i = 0; i < modules.size(); ++i) {
    if (modules[i].firsts.empty())
      continue;
    out += "firsts " + std::to_string(i) + " " + std::to_string(modules[i].firsts.size());
    for (const FirstStep& first : modules[i].firsts)
      out += " " + detail::exactDecimal(first.measured) + " " + std::to_string(first.position) +
             " " + std::to_string(first.state);
    out += "\n";
  }
  if (pairsDone)
    out += "pairs-done " + std::to_string(pairTrials) + " " + std::to_string(pairModules) + "\n";
  return out + "end\n";
}

Expected<SearchProgress> SearchProgress::parse(std::string_view text) {
  SearchProgress progress;
  std::istringstream lines{std::string(text)};
  std::string line;
  size_t number = 0;
  auto bad = [&](std::string_view what) {
    return makeError("line " + std::to_string(number) + ": " + std::string(what));
  };
  if (!std::getline(lines, line) || line != kProgressHeader)
    return makeError("not a decision search checkpoint (no \"" + std::string(kProgressHeader) +
                     "\" line)");
  number = 1;
  bool ended = false;
  while (std::getline(lines, line)) {
    ++number;
    Fields fields(line);
    std::string key;
    if (!fields.word(key))
      return bad("empty");
    bool ok = true;
    if (key == "fingerprint") {
      std::string hex;
      ok = fields.word(hex) && hex.size() == 16;
      if (ok) {
        auto [end, ec] =
            std::from_chars(hex.data(), hex.data() + hex.size(), progress.fingerprint, 16);
        ok = ec == std::errc() && end == hex.data() + hex.size();
      }
    } else if (key == "stopped") {
      int flag = 0;
      ok = fields.integer(flag) && (flag == 0 || flag == 1);
      progress.stopped = flag == 1;
    } else if (key == "rounds") {
      ok = fields.integer(progress.rounds);
    } else if (key == "counts") {
      ok = fields.integer(progress.compilations) && fields.integer(progress.incremental) &&
           fields.integer(progress.verified);
    } else if (key == "full") {
      size_t count = 0;
      ok = fields.integer(count);
      const std::string why = fields.rest();
      ok = ok && !why.empty();
      progress.fullCompiles[why] = count;
    } else if (key == "extra") {
      std::string name;
      double value = 0;
      ok = fields.word(name) && fields.real(value);
      progress.extra[name] = value;
    } else if (key == "module") {
      Module& m = progress.modules.emplace_back();
      int active = 0;
      size_t toggles = 0;
      ok = fields.integer(m.rounds) && fields.integer(m.next) && fields.integer(active) &&
           fields.integer(m.tried) && fields.optionalReal(m.start) && fields.optionalReal(m.best) &&
           fields.integer(m.bestBytes) && fields.integer(m.lastPosition) &&
           fields.integer(toggles) && toggles < (1u << 24);
      m.active = active == 1;
      for (size_t i = 0; ok && i < toggles; ++i)
        ok = fields.integer(m.toggled.emplace_back());
    } else if (key == "firsts") {
      size_t index = 0, count = 0;
      ok = fields.integer(index) && index < progress.modules.size() && fields.integer(count) &&
           count < (1u << 16) && progress.modules[index].firsts.empty();
      for (size_t i = 0; ok && i < count; ++i) {
        FirstStep& first = progress.modules[index].firsts.emplace_back();
        ok = fields.real(first.measured) && fields.integer(first.position) &&
             fields.integer(first.state);
      }
    } else if (key == "pairs-done") {
      progress.pairsDone = true;
      ok = fields.integer(progress.pairTrials) && fields.integer(progress.pairModules);
    } else if (key == "end") {
      ended = true;
    } else {
      return bad("unknown field \"" + key + "\"");
    }
    if (!ok || !fields.done())
      return bad("malformed \"" + key + "\" line");
  }
  // Written in one piece (atomically): a missing end means a damaged file.
  if (!ended)
    return makeError("truncated (no \"end\" line)");
  return progress;
}

uint64_t searchFingerprint(const evaluators::Scorer& scorer,
                           std::span<const corpus::ModuleSpec* const> modules,
                           const DecisionSearchOptions& options) {
  // Trials per round change which trials are drawn only through rounds, but
  // a checkpoint's rounds count them.
  const size_t perRound = scorer.incrementalTrials() ? options.trialsPerRound : 1;
  std::string key = "decision-search 1\n" + scorer.compilerIdentity() + "\n" + scorer.task().name +
                    "\n" + std::to_string(options.maxDecisions) + " " +
                    std::to_string(static_cast<int>(options.order)) + " " +
                    std::to_string(options.seed) + " " + std::to_string(perRound) + " " +
                    std::to_string(options.calleeConsistent) + " " +
                    std::to_string(options.start != nullptr) + "\n";
  // Only when set, so that checkpoints written before the option still match.
  if (options.flipsFrom)
    key += "flips-from " + std::to_string(*options.flipsFrom) + "\n";
  if (options.pairFirsts > 0)
    key += "pairs " + std::to_string(options.pairFirsts) + " " +
           std::to_string(options.pairSeconds) + "\n";
  for (const corpus::ModuleSpec* module : modules)
    key += module->name + "\n";
  return hashBytes(key);
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
  const uint64_t fingerprint = searchFingerprint(scorer, modules, options);
  GreedySearch search(scorer, modules, options);
  MLGO_TRY(search.start());
  size_t round = 1;
  bool exhausted = false; // the rounds ended by running out of decisions
  if (const SearchProgress* saved = options.resume) {
    if (saved->fingerprint != fingerprint)
      return makeError("decision search: the checkpoint is of another search (other modules, "
                       "compiler or options)");
    if (Status restored = search.restore(*saved, !saved->stopped); !restored)
      return makeError("decision search: checkpoint: " + restored.error().message);
    if (saved->stopped)
      return std::move(search.result());
    round = saved->rounds + 1;
  }
  auto checkpoint = [&](bool stopped) {
    return !options.onCheckpoint || options.onCheckpoint(search.progress(fingerprint, stopped));
  };
  for (;; ++round) {
    Round next = search.plan(round);
    // A resumed round may have nothing left but its end (onRound).
    if (next.request.batches.empty() && !search.begun(round)) {
      exhausted = true;
      break;
    }
    next.request.showProgress = options.showProgress;
    const size_t chunk =
        options.checkpointModules ? options.checkpointModules : next.modules.size();
    for (size_t from = 0; from < next.modules.size(); from += chunk) {
      Round part = next.slice(from, chunk);
      evaluators::TrialResults trials = scorer.evaluateTrials(part.request);
      if (trials.problem)
        return makeError("decision search: " + trials.problem->message);
      search.take(part, trials);
      if (from + chunk < next.modules.size() && !checkpoint(false))
        return std::move(search.result());
    }
    search.result().rounds = round;
    const bool more =
        !options.onRound || options.onRound(round, options.maxDecisions, search.result().policy);
    if (!checkpoint(!more) || !more)
      break;
  }
  if (exhausted && options.pairFirsts > 0 && !search.pairsDone()) {
    if (Status paired = search.pairs(); !paired)
      return makeError("decision search: pairs: " + paired.error().message);
    checkpoint(true);
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

Status TriedDecisionTrace::saveCopy(const std::filesystem::path& copy) {
  std::error_code error;
  if (!writer_) {
    std::filesystem::remove(copy, error);
    return Status::ok();
  }
  if (Status flushed = writer_->flush(); !flushed)
    return flushed;
  const std::filesystem::path partial = copy.string() + ".partial";
  std::filesystem::copy_file(path_, partial, std::filesystem::copy_options::overwrite_existing,
                             error);
  if (!error)
    std::filesystem::rename(partial, copy, error);
  if (error)
    return makeError(copy.string() + ": cannot copy the tried decisions: " + error.message());
  return Status::ok();
}

Status TriedDecisionTrace::restore(const std::filesystem::path& copy, size_t rows) {
  if (rows == 0)
    return Status::ok();
  Expected<results::Trace> saved = results::readTrace(copy);
  if (!saved)
    return saved.error();
  if (saved->modules.size() < rows)
    return makeError(copy.string() + ": " + std::to_string(saved->modules.size()) +
                     " tried decisions, the checkpoint counts " + std::to_string(rows));
  Expected<results::TraceWriter> writer =
      results::TraceWriter::create(path_, saved->featureSpecs, attributes_);
  if (!writer)
    return writer.error();
  writer_.emplace(writer.take());
  policies::Trajectory one;
  one.featureSpecs = saved->featureSpecs;
  one.width = saved->width;
  for (size_t r = 0; r < rows; ++r) {
    const results::TraceModule& row = saved->modules[r];
    const size_t first = row.firstDecision, count = row.decisionCount;
    one.observations.assign(saved->row(first), saved->row(first + count));
    one.defaultDecisions.assign(saved->defaultDecisions.begin() + first,
                                saved->defaultDecisions.begin() + first + count);
    one.actions.assign(saved->actions.begin() + first, saved->actions.begin() + first + count);
    one.logProbabilities.assign(saved->logProbabilities.begin() + first,
                                saved->logProbabilities.begin() + first + count);
    if (Status added = writer_->addModule(row, &one); !added)
      return added;
  }
  rows_ = rows;
  return Status::ok();
}

Status TriedDecisionTrace::close() {
  return writer_ ? writer_->close() : Status::ok();
}

} // namespace mlgo::training
