#include "mlgo/training/TrainingLoop.h"

#include "TrainerSupport.h"
#include "mlgo/policies/PolicyFile.h"
#include "mlgo/training/StepColumns.h"
#include "mlgo/training/TrainingCorpus.h"

#include "mlgo/support/Files.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

namespace fs = std::filesystem;

namespace mlgo::training {

using namespace detail;

std::string_view terminationName(Termination termination) {
  switch (termination) {
  case Termination::Completed:
    return "completed";
  case Termination::StepLimit:
    return "step-limit";
  case Termination::StoppedByCallback:
    return "stopped-by-callback";
  case Termination::TimeBudget:
    return "time-budget";
  }
  return "unknown";
}

struct TrainingLoop::State {
  RunOptions run;
  int64_t validationInterval = 1;
  std::unique_ptr<TrainingAlgorithm> algorithm;
  evaluators::Scorer* scorer = nullptr;
  // How the best policy is chosen on validation, in the task's measure.
  std::string validationMetric() const {
    if (!scorer)
      return "validation: total reward";
    const evaluators::CompilerTask& task = scorer->task();
    const std::string measure(evaluators::traitsOf(task.measure).noun);
    return "validation: total reward (1 - sum " + measure + " / sum " + task.baselineName + " " +
           measure + ")";
  }
  std::vector<const corpus::ModuleSpec*> validation;
  results::RunRecord record;
  int64_t stepsDone = 0;
  double elapsedBefore = 0;
  // The best policy so far, as the checkpoint keeps it (bestPolicyKeys()).
  BestPolicyKeys keys;
  double bestValue = 0;
  double bestTieBreak = std::numeric_limits<double>::infinity();
  int64_t bestStep = -1;

  void startBest(const StateArchive* stored);
  bool improves(double value, std::optional<double> tieBreak) const;
  void setBest(const BestCandidate& candidate);
  Expected<std::optional<double>> validate(int64_t done);
  void checkpoint(int64_t done, std::string policyJson, double elapsed);
  // `final`: run it as the run's last step although steps remain (budget).
  Expected<StepProgress> runStep(Clock::time_point runStart, bool final = false);
  Status save() const { return results::writeRunFile(run.output, record); }
  KeptPolicy kept() const;
};

KeptPolicy TrainingLoop::State::kept() const {
  KeptPolicy k;
  k.step = stepsDone;
  for (const results::ValidationRecord& v : record.validations)
    if (v.step == 0 && std::isfinite(v.totalReward))
      k.startValidationTotalReward = v.totalReward;
  if (!validation.empty() && record.bestPolicy) {
    k.validated = true;
    k.step = record.bestPolicy->step;
    k.validationTotalReward = bestValue;
  }
  return k;
}

void TrainingLoop::State::startBest(const StateArchive* stored) {
  keys = algorithm->bestPolicyKeys();
  bestValue = keys.initialValue;
  if (!stored)
    return;
  bestValue = stored->realOr(keys.value, bestValue);
  if (!keys.tieBreak.empty())
    bestTieBreak = stored->realOr(keys.tieBreak, bestTieBreak);
  if (!keys.step.empty())
    if (Expected<int64_t> step = stored->integer(keys.step))
      bestStep = *step;
}

bool TrainingLoop::State::improves(double value, std::optional<double> tieBreak) const {
  return value > bestValue || (tieBreak && value == bestValue && *tieBreak < bestTieBreak);
}

void TrainingLoop::State::setBest(const BestCandidate& candidate) {
  bestValue = candidate.value;
  if (candidate.tieBreak)
    bestTieBreak = *candidate.tieBreak;
  bestStep = candidate.step;
  record.bestPolicy = results::PolicySnapshot{candidate.step, candidate.policyJson};
  record.bestPolicyMetric = candidate.metric;
  record.bestPolicyValue = candidate.value;
}

// The current policy, deterministically, on every validation module.
Expected<std::optional<double>> TrainingLoop::State::validate(int64_t done) {
  const policies::MlpPolicy& current = algorithm->policy();
  evaluators::EvaluationRequest request;
  request.candidates = {&current};
  request.modules = validation;
  request.seed = run.seed;
  request.step = static_cast<uint64_t>(done);
  evaluators::EvaluationResult result = scorer->evaluate(request);
  if (result.problem)
    return *result.problem;
  if (Status fits = detail::checkPolicyFits(result); !fits)
    return fits.error();
  results::ValidationRecord v;
  v.step = done;
  for (size_t m = 0; m < validation.size(); ++m) {
    const evaluators::JobResult& job = result.job(0, m);
    v.sizes.push_back(job.ok() ? job.sizeBytes : 0);
    v.ok.push_back(job.ok() ? 1 : 0);
    if (!job.ok())
      recordFailure(record, done, -1, validation[m]->name, job);
  }
  evaluators::CandidateScore score = result.score(0);
  v.meanReward = score.okModules ? score.meanReward : kNaN;
  v.totalReward = score.okModules ? score.totalReward : kNaN;
  record.validations.push_back(v);
  return score.okModules ? std::optional<double>(score.totalReward) : std::nullopt;
}

void TrainingLoop::State::checkpoint(int64_t done, std::string policyJson, double elapsed) {
  results::Checkpoint c;
  c.step = done;
  c.optimizer = algorithm->optimizerName();
  algorithm->saveState(c.optimizerState, c.trainerState);
  c.trainerState.setReal(keys.value, bestValue);
  if (!keys.tieBreak.empty())
    c.trainerState.setReal(keys.tieBreak, bestTieBreak);
  if (!keys.step.empty())
    c.trainerState.setInteger(keys.step, bestStep);
  c.policyJson = std::move(policyJson);
  c.elapsedSeconds = elapsed;
  record.checkpoint = std::move(c);
}

Expected<StepProgress> TrainingLoop::State::runStep(Clock::time_point runStart, bool final) {
  const auto start = Clock::now();
  const int64_t step = stepsDone;
  Expected<std::optional<BestCandidate>> candidate = algorithm->runStep(step, record);
  if (!candidate)
    return candidate.error();
  const int64_t done = ++stepsDone;
  const bool last = done >= run.steps || final;

  StepProgress progress;
  progress.step = step;
  progress.steps = run.steps;
  if (!validation.empty()) {
    if (done % validationInterval == 0 || last) {
      Expected<std::optional<double>> validated = validate(done);
      if (!validated)
        return validated.error();
      progress.validationTotalReward = *validated;
      if (progress.validationTotalReward && improves(*progress.validationTotalReward, {}))
        setBest({done,
                 policyJson(algorithm->policy()),
                 *progress.validationTotalReward,
                 {},
                 validationMetric()});
    }
  } else if (*candidate && improves((*candidate)->value, (*candidate)->tieBreak)) {
    setBest(**candidate);
  }
  std::string currentJson = policyJson(algorithm->policy());
  if (done % run.snapshotInterval == 0 || last)
    record.snapshots.push_back({done, currentJson});
  if (last)
    record.finalPolicy = results::PolicySnapshot{done, currentJson};

  StepTiming timing{secondsBetween(start, Clock::now()),
                    elapsedBefore + secondsBetween(runStart, Clock::now())};
  timingColumns().append(timing, record);
  checkpoint(done, std::move(currentJson), timing.elapsedSeconds);
  progress.stepSeconds = secondsBetween(start, Clock::now());
  progress.elapsedSeconds = timing.elapsedSeconds;
  progress.etaSeconds = progress.stepSeconds * static_cast<double>(run.steps - done);
  return progress;
}

std::string KeptPolicy::why() const {
  char text[160];
  if (!validated)
    std::snprintf(text, sizeof text,
                  "the final policy (step %lld; no validation corpus to choose on)",
                  static_cast<long long>(step));
  else if (step == 0)
    std::snprintf(text, sizeof text,
                  "the start (step 0): no later policy validated above its total reward %+.5f",
                  startValidationTotalReward.value_or(kNaN));
  else
    std::snprintf(text, sizeof text,
                  "step %lld's, the best on validation: total reward %+.5f, the start's %+.5f",
                  static_cast<long long>(step), validationTotalReward.value_or(kNaN),
                  startValidationTotalReward.value_or(kNaN));
  return text;
}

TrainingLoop::TrainingLoop(std::unique_ptr<State> state) : state_(std::move(state)) {}
TrainingLoop::TrainingLoop(TrainingLoop&&) noexcept = default;
TrainingLoop& TrainingLoop::operator=(TrainingLoop&&) noexcept = default;
TrainingLoop::~TrainingLoop() = default;

const results::RunRecord& TrainingLoop::record() const {
  return state_->record;
}
TrainingAlgorithm& TrainingLoop::algorithm() {
  return *state_->algorithm;
}
int64_t TrainingLoop::stepsDone() const {
  return state_->stepsDone;
}

Expected<TrainingLoop> TrainingLoop::create(RunOptions run, int64_t validationInterval,
                                            std::unique_ptr<TrainingAlgorithm> algorithm,
                                            evaluators::Scorer* scorer) {
  auto s = std::make_unique<State>();
  s->run = std::move(run);
  s->validationInterval = validationInterval;
  s->algorithm = std::move(algorithm);
  s->scorer = scorer;
  results::RunRecord& r = s->record;
  r.trainer = std::string(s->algorithm->trainerName());
  r.configToml = s->run.configToml;
  r.config = s->run.configValues;
  if (Status loaded = s->algorithm->loadData(r); !loaded)
    return loaded.error();
  if (Status initialised = s->algorithm->initialise(r); !initialised)
    return initialised.error();
  const policies::MlpPolicy& policy = s->algorithm->policy();
  r.attributes["policy"] = policy.describe();
  r.attributes["parameters"] = std::to_string(policy.parameterCount());
  r.attributes["optimizer"] = s->algorithm->optimizerName();
  if (scorer) {
    // What the rewards are relative to: the task's measure against its baseline.
    r.attributes["task"] = scorer->task().name;
    r.attributes["measure"] = std::string(evaluators::measureName(scorer->task().measure)) +
                              " vs " + scorer->task().baselineName;
  }
  s->validation = s->algorithm->validationModules();
  s->startBest(nullptr);
  std::error_code ec;
  if (s->run.output.has_parent_path())
    fs::create_directories(s->run.output.parent_path(), ec);
  r.snapshots.push_back({0, policyJson(policy)});
  // The start is the first contender for the best policy: a run keeps a
  // later one only when it validates better.
  if (!s->validation.empty()) {
    MLGO_ASSIGN_OR_RETURN(std::optional<double> start, s->validate(0));
    if (start && s->improves(*start, {}))
      s->setBest({0, policyJson(policy), *start, {}, s->validationMetric()});
  }
  if (Status saved = s->save(); !saved)
    return makeError(saved.error().message + "; no run file was written and no step ran");
  return TrainingLoop(std::move(s));
}

namespace {

// How the data's module list differs from the run's, naming a module:
// "\"b.o\" is missing", "\"x.o\" is new", or the first position that differs.
std::string moduleListDifference(const std::vector<std::string>& run,
                                 const std::vector<std::string>& data) {
  const std::set<std::string> inRun(run.begin(), run.end()), inData(data.begin(), data.end());
  for (const std::string& name : run)
    if (!inData.count(name))
      return "\"" + name + "\" is missing, " + std::to_string(data.size()) +
             " modules instead of " + std::to_string(run.size());
  for (const std::string& name : data)
    if (!inRun.count(name))
      return "\"" + name + "\" is new, " + std::to_string(data.size()) + " modules instead of " +
             std::to_string(run.size());
  for (size_t i = 0; i < run.size() && i < data.size(); ++i)
    if (run[i] != data[i])
      return "module " + std::to_string(i + 1) + " is \"" + data[i] + "\", the run's was \"" +
             run[i] + "\"";
  return std::to_string(data.size()) + " modules instead of " + std::to_string(run.size());
}

// Whether a stored run can be continued by `algorithm`.
Status checkResumable(const results::RunRecord& stored, const TrainingAlgorithm& algorithm,
                      const std::string& file) {
  if (stored.trainer != algorithm.trainerName())
    return makeError(file + ": written by " + stored.trainer + ", not " +
                     std::string(algorithm.trainerName()));
  if (!stored.checkpoint)
    return makeError(file + ": has no checkpoint to resume from");
  if (stored.checkpoint->optimizer != algorithm.optimizerName())
    return makeError(file + ": the checkpoint is of optimizer " + stored.checkpoint->optimizer +
                     ", the options say " + algorithm.optimizerName());
  // Rows a killed run wrote after its checkpoint cannot exist (the file is
  // rewritten whole), but a checkpoint behind the rows would: refuse it.
  if (static_cast<int64_t>(stored.steps()) != stored.checkpoint->step)
    return makeError(file + ": the checkpoint (step " + std::to_string(stored.checkpoint->step) +
                     ") disagrees with the " + std::to_string(stored.steps()) + " recorded steps");
  return Status::ok();
}

} // namespace

Expected<TrainingLoop> TrainingLoop::resume(RunOptions run, int64_t validationInterval,
                                            std::unique_ptr<TrainingAlgorithm> algorithm,
                                            evaluators::Scorer* scorer) {
  Expected<results::RunRecord> stored = results::readRunFile(run.output);
  if (!stored)
    return stored.error();
  const std::string file = run.output.string();
  if (Status resumable = checkResumable(*stored, *algorithm, file); !resumable)
    return resumable.error();
  auto s = std::make_unique<State>();
  s->run = std::move(run);
  s->validationInterval = validationInterval;
  s->algorithm = std::move(algorithm);
  s->scorer = scorer;
  if (Status loaded = s->algorithm->loadData(s->record); !loaded)
    return loaded.error();
  for (auto [now, then, role] :
       {std::tuple{&s->record.moduleNames, &stored->moduleNames, "training"},
        std::tuple{&s->record.validationModuleNames, &stored->validationModuleNames, "validation"}})
    if (*now != *then)
      return makeError(file + ": the " + role + " modules differ from the run's (" +
                       moduleListDifference(*then, *now) +
                       "); resume with the data the run was started on");
  // The same modules must still be the same code: a module whose bitcode
  // changed (its hash; runs before hashes were recorded have none) or that
  // the compiler now compiles to another -Oz size would not give the rewards
  // the run was computing.
  if (!stored->bitcodeHashes.empty() &&
      s->record.bitcodeHashes.size() == stored->bitcodeHashes.size())
    for (size_t m = 0; m < stored->bitcodeHashes.size(); ++m)
      if (s->record.bitcodeHashes[m] != stored->bitcodeHashes[m])
        return makeError(file + ": the bitcode of module \"" + stored->moduleNames[m] +
                         "\" changed since the run started; resume with the data the run was "
                         "started on, or start a new run");
  for (size_t m = 0; m < stored->baselineSizes.size() && m < s->record.baselineSizes.size(); ++m)
    if (s->record.baselineSizes[m] != stored->baselineSizes[m])
      return makeError(
          file + ": module \"" + stored->moduleNames[m] + "\" now compiles to " +
          std::to_string(s->record.baselineSizes[m]) + " bytes at -Oz, the run measured " +
          std::to_string(stored->baselineSizes[m]) +
          ": its bitcode or the compiler changed; resume with the data and clang the run "
          "was started on, or start a new run");
  // The policy's structure (features, vocabulary, architecture) comes from
  // the checkpoint, never rebuilt, so the resumed run computes exactly what
  // the original would have.
  const results::Checkpoint& checkpoint = *stored->checkpoint;
  if (Status restored = s->algorithm->restore(checkpoint, file); !restored)
    return restored.error();
  s->startBest(&checkpoint.trainerState);
  s->elapsedBefore = checkpoint.elapsedSeconds;
  s->stepsDone = checkpoint.step;
  s->validation = s->algorithm->validationModules();
  s->record = stored.take();
  return TrainingLoop(std::move(s));
}

Expected<LoopSummary> TrainingLoop::run(const Callback& callback,
                                        std::optional<int64_t> stopAfter) {
  State& s = *state_;
  const auto runStart = Clock::now();
  LoopSummary summary;
  summary.output = s.run.output;
  summary.validated = !s.validation.empty();
  double lastStepSeconds = 0;
  while (s.stepsDone < s.run.steps) {
    if (stopAfter && summary.stepsRun >= *stopAfter) {
      summary.termination = Termination::StepLimit;
      break;
    }
    // The budget's last step: the one expected to end past it.
    const double elapsed = secondsBetween(runStart, Clock::now());
    const bool budgetEnds = s.run.maxSeconds > 0 && s.stepsDone + 1 < s.run.steps &&
                            elapsed + lastStepSeconds >= s.run.maxSeconds;
    const auto stepStart = Clock::now();
    Expected<StepProgress> progress = s.runStep(runStart, budgetEnds);
    if (!progress)
      return progress.error();
    if (Status saved = s.save(); !saved)
      return makeError(saved.error().message + "; step " + std::to_string(s.stepsDone) +
                       " is lost, " + s.run.output.string() + " holds " +
                       (s.stepsDone == 1 ? std::string("the run's start and no finished step")
                                         : "steps 1-" + std::to_string(s.stepsDone - 1)) +
                       " (continue it with --resume once there is room)");
    lastStepSeconds = secondsBetween(stepStart, Clock::now());
    ++summary.stepsRun;
    if (budgetEnds) {
      summary.termination = Termination::TimeBudget;
      break;
    }
    if (callback && callback(*progress) == CallbackAction::Stop) {
      summary.termination = Termination::StoppedByCallback;
      break;
    }
  }
  summary.stepsTotal = s.stepsDone;
  const bool budgetEnded = summary.termination == Termination::TimeBudget;
  if (s.stepsDone >= s.run.steps || budgetEnded) {
    if (!budgetEnded)
      summary.termination = Termination::Completed;
    summary.kept = s.kept();
    if (s.run.policyOutput) {
      std::error_code ec;
      if (s.run.policyOutput->has_parent_path())
        fs::create_directories(s.run.policyOutput->parent_path(), ec);
      const std::string json = summary.kept->validated ? s.record.bestPolicy->policyJson
                                                       : policyJson(s.algorithm->policy());
      if (Status saved = writeFileAtomically(*s.run.policyOutput, json); !saved)
        return saved.error();
      summary.policyOutput = s.run.policyOutput;
    }
  }
  const std::string resume = " of " + std::to_string(s.run.steps) + " steps; --resume " +
                             s.run.output.string() + " continues it";
  if (summary.termination == Termination::Completed)
    summary.message = "completed " + std::to_string(s.stepsDone) + " steps";
  else if (budgetEnded)
    summary.message = "time budget of " + std::to_string(std::lround(s.run.maxSeconds)) +
                      " s: ended after " + std::to_string(s.stepsDone) + resume;
  else
    summary.message = "stopped after " + std::to_string(s.stepsDone) + resume;
  if (s.record.bestPolicy && s.bestValue > s.keys.initialValue)
    summary.best = BestPolicy{s.record.bestPolicy->step, s.bestValue, s.record.bestPolicyMetric};
  summary.seconds = secondsBetween(runStart, Clock::now());
  return summary;
}

} // namespace mlgo::training
