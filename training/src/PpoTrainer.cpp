#include "mlgo/training/PpoTrainer.h"

#include "mlgo/support/OptionSchema.h"

#include "TrainerSupport.h"
#include "mlgo/rl/Decisions.h"
#include "mlgo/training/TrainingCorpus.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mlgo::training {

using namespace detail;

namespace {

constexpr const char* kMovingAverages = "moving_average_sizes";
constexpr const char* kKlBeta = "kl_beta";

// What one iteration's compilations give the update: the decisions, and the
// per-module statistics of the sampling policy.
struct Collected {
  rl::DecisionSet data;
  size_t okModules = 0;
  double totalSize = 0, totalBaseline = 0; // in the task's measure
  double rewardSum = 0, trainingRewardSum = 0;
  double rewardMin = std::numeric_limits<double>::infinity();
  double rewardMax = -std::numeric_limits<double>::infinity();
};

// PPO on the trainer skeleton: a step is one iteration, collect (compile the
// sampled modules with the sampling policy, recording every decision) then
// update (rl::ppoUpdate).
class PpoAlgorithm final : public TrainingAlgorithm {
public:
  PpoAlgorithm(const PpoTrainerOptions& options, evaluators::Scorer* scorer)
      : options_(options), scorer_(*scorer), parallel_(options.run.threads) {}

  std::string_view trainerName() const override { return "ppo-train"; }
  std::string optimizerName() const override { return "adam"; }
  Status loadData(results::RunRecord& record) override;
  Status initialise(results::RunRecord& record) override;
  Status restore(const results::Checkpoint& checkpoint, const std::string& origin) override;
  void saveState(StateArchive& optimizer, StateArchive& trainer) const override {
    adam_.saveTo(optimizer);
    trainer.setVector(kMovingAverages, movingAverages_);
    trainer.setReal(kKlBeta, klBeta_);
  }
  const policies::MlpPolicy& policy() const override { return *policy_; }
  std::vector<const corpus::ModuleSpec*> validationModules() const override {
    return corpus_->validation();
  }
  Expected<std::optional<BestCandidate>> runStep(int64_t step, results::RunRecord& record) override;

  const PpoIteration& lastIteration() const { return last_; }

private:
  Expected<Collected> collect(const evaluators::EvaluationResult& result,
                              const StepModules& modules);
  // Adds the module's decisions to `data`, each with the module's reward.
  Status gather(const policies::Trajectory& trajectory, const std::string& module,
                int64_t moduleIndex, double reward, rl::DecisionSet& data);
  void describe(const Collected& collected);

  const PpoTrainerOptions& options_;
  evaluators::Scorer& scorer_;
  rl::RowParallelism parallel_;
  std::optional<TrainingCorpus> corpus_;
  size_t moduleCount_ = 0;
  std::optional<policies::MlpPolicy> policy_;
  rl::AdamState adam_;
  double klBeta_ = 0;
  std::vector<double> movingAverages_; // per module of the record; NaN: not compiled yet
  // The recorded features the gather was built for (clang's header).
  std::vector<policies::TensorSpec> gatherSpecs_;
  std::optional<rl::FeatureGather> gather_;
  PpoIteration last_;
};

Status PpoAlgorithm::loadData(results::RunRecord& record) {
  Expected<TrainingCorpus> loaded =
      TrainingCorpus::load(options_.data, options_.run.seed, scorer_, record);
  if (!loaded)
    return loaded.error();
  corpus_.emplace(loaded.take());
  moduleCount_ = record.moduleNames.size();
  record.attributes["compiler"] = scorer_.compilerIdentity();
  return Status::ok();
}

Status PpoAlgorithm::initialise(results::RunRecord& record) {
  Expected<policies::MlpPolicy> policy =
      startingPolicy(options_.policy, options_.run.seed, scorer_, *corpus_, record);
  if (!policy)
    return policy.error();
  policy_.emplace(policy.take());
  adam_ = rl::AdamState::zeros(policy_->parameterCount());
  klBeta_ = options_.update.loss.initialKlBeta;
  movingAverages_.assign(moduleCount_, kNaN);
  return Status::ok();
}

Status PpoAlgorithm::restore(const results::Checkpoint& checkpoint, const std::string& origin) {
  Expected<policies::MlpPolicy> policy =
      mlpFromJson(checkpoint.policyJson, origin + ": /checkpoint");
  if (!policy)
    return policy.error();
  policy_.emplace(policy.take());
  Expected<rl::AdamState> adam =
      rl::AdamState::restore(checkpoint.optimizerState, policy_->parameterCount());
  if (!adam)
    return makeError(origin + ": " + adam.error().message);
  adam_ = adam.take();
  Expected<std::vector<double>> averages =
      checkpoint.trainerState.vector(kMovingAverages, moduleCount_);
  if (!averages)
    return makeError(origin + ": the checkpoint's moving baselines are missing or do not match "
                              "the modules");
  movingAverages_ = averages.take();
  klBeta_ = checkpoint.trainerState.realOr(kKlBeta, options_.update.loss.initialKlBeta);
  return Status::ok();
}

Status PpoAlgorithm::gather(const policies::Trajectory& t, const std::string& module,
                            int64_t moduleIndex, double reward, rl::DecisionSet& data) {
  if (!gather_ || t.featureSpecs != gatherSpecs_) {
    Expected<rl::FeatureGather> created =
        rl::FeatureGather::create(t.featureSpecs, policy_->inputs());
    if (!created)
      return makeError("module \"" + module + "\": " + created.error().message);
    gather_.emplace(created.take());
    gatherSpecs_ = t.featureSpecs;
  }
  const size_t first = data.features.size();
  data.features.resize(first + t.decisions() * data.width);
  for (size_t d = 0; d < t.decisions(); ++d) {
    gather_->gather(t.row(d), data.features.data() + first + d * data.width);
    data.actions.push_back(t.actions[d]);
    data.logProbabilities.push_back(t.logProbabilities[d]);
    data.defaults.push_back(d < t.defaultDecisions.size() ? t.defaultDecisions[d] : -1);
    data.rewards.push_back(reward);
    data.modules.push_back(moduleIndex);
  }
  return Status::ok();
}

Expected<Collected> PpoAlgorithm::collect(const evaluators::EvaluationResult& result,
                                          const StepModules& modules) {
  Collected c;
  c.data.width = policy_->structure()->featureCount();
  for (size_t m = 0; m < modules.modules.size(); ++m) {
    const evaluators::JobResult& job = result.job(0, m);
    if (!job.ok())
      continue;
    ++c.okModules;
    // In the task's measure (bytes, or the RegAllocScore).
    const double baseline = *result.baselineMeasure(m);
    const double measured = result.measured(job);
    c.totalSize += measured;
    c.totalBaseline += baseline;
    c.rewardSum += job.reward;
    c.rewardMin = std::min(c.rewardMin, job.reward);
    c.rewardMax = std::max(c.rewardMax, job.reward);
    // ml-compiler-opt's reward: against the module's moving average, which
    // starts at -Oz and is updated after scoring this compile.
    double& average = movingAverages_[static_cast<size_t>(modules.indices[m])];
    const double reference = std::isnan(average) ? baseline : average;
    const double trainingReward = scorer_.task().reward(measured, reference);
    average = rl::nextMovingAverage(reference, measured, options_.movingAverageDecay);
    c.trainingRewardSum += trainingReward;
    if (job.trajectory && job.trajectory->decisions() > 0)
      if (Status s = gather(*job.trajectory, modules.modules[m]->name, modules.indices[m],
                            trainingReward, c.data);
          !s)
        return s.error();
  }
  return c;
}

void PpoAlgorithm::describe(const Collected& c) {
  PpoIteration& s = last_;
  if (c.okModules) {
    s.rewardMean = c.rewardSum / static_cast<double>(c.okModules);
    s.rewardMin = c.rewardMin;
    s.rewardMax = c.rewardMax;
    if (c.totalBaseline)
      s.rewardTotal = scorer_.task().reward(c.totalSize, c.totalBaseline);
    s.trainingRewardMean = c.trainingRewardSum / static_cast<double>(c.okModules);
  }
  const size_t rows = c.data.rows();
  size_t inlined = 0, agreeing = 0, withDefault = 0;
  for (size_t r = 0; r < rows; ++r) {
    inlined += c.data.actions[r] == 1;
    if (c.data.defaults[r] >= 0) {
      ++withDefault;
      agreeing += c.data.actions[r] == c.data.defaults[r];
    }
  }
  s.trainingDecisions = rows;
  s.inlineShare = share(inlined, rows);
  s.heuristicAgreement = share(agreeing, withDefault);
}

Expected<std::optional<BestCandidate>> PpoAlgorithm::runStep(int64_t step,
                                                             results::RunRecord& record) {
  const auto start = Clock::now();
  StepModules modules = corpus_->sample(step);
  evaluators::EvaluationRequest request;
  request.candidates = {&*policy_};
  request.modules = modules.modules;
  request.mode = policies::DecisionMode::Sampling;
  request.seed = options_.run.seed;
  request.step = static_cast<uint64_t>(step);
  request.recordTrajectories = true;
  evaluators::EvaluationResult result = scorer_.evaluate(request);
  const auto collected = Clock::now();

  last_ = PpoIteration{};
  if (result.problem)
    return *result.problem;
  if (Status fits = detail::checkPolicyFits(result); !fits)
    return fits.error();
  last_.compile = recordEvaluation(result, modules, step, record);
  Expected<Collected> c = collect(result, modules);
  if (!c)
    return c.error();
  describe(*c);
  std::optional<BestCandidate> candidate;
  if (c->okModules && corpus_->validation().empty())
    candidate = BestCandidate{step,
                              policyJson(*policy_),
                              last_.rewardMean,
                              {},
                              "training: mean reward of the sampling policy"};

  last_.update = rl::ppoUpdate(*policy_, c->data, options_.update, adam_, klBeta_,
                               options_.run.seed, static_cast<uint64_t>(step), parallel_);
  last_.adaptiveKlBeta = klBeta_;
  last_.secondsCollect = secondsBetween(start, collected);
  last_.secondsUpdate = secondsBetween(collected, Clock::now());
  ppoStepColumns().append(last_, record);
  record.candidateRewards.push_back({last_.rewardMean});
  return candidate;
}

} // namespace

Status PpoTrainerOptions::validate() const {
  // PPO learns from every decision's features and action; a program's job
  // is a whole build whose decisions are not returned.
  if (data.trainsOnPrograms())
    return makeError("data.programs: PPO learns from each decision's trajectory, and a "
                     "program's job returns none; train on programs with es-train");
  if (!(movingAverageDecay >= 0 && movingAverageDecay <= 1))
    return makeError("movingAverageDecay: must be in [0, 1], got " +
                     std::to_string(movingAverageDecay));
  return validateGroups({{"data", data.validate()},
                         {"policy", policy.validate()},
                         {"update", update.validate()},
                         {"run", run.validate(/*policyFile=*/true)}});
}

const ColumnTable<PpoIteration>& ppoStepColumns() {
  using Table = ColumnTable<PpoIteration>;
  using I = PpoIteration;
  auto perUpdate = [](double rl::PpoLossTerms::*term) {
    return [term](const I& i) { return i.perUpdate(i.update.sums.*term); };
  };
  auto drift = [](rl::PolicyDrift rl::PpoUpdateStats::*when, double rl::PolicyDrift::*what) {
    return [when, what](const I& i) {
      return i.trainingDecisions ? (i.update.*when).*what : kNoValue;
    };
  };
  static const Table table = [&] {
    Table t{
        Table::field("reward_mean", &I::rewardMean),
        Table::field("reward_min", &I::rewardMin),
        Table::field("reward_max", &I::rewardMax),
        Table::field("reward_total", &I::rewardTotal),
        Table::field("training_reward_mean", &I::trainingRewardMean),
        Table::field("training_decisions", &I::trainingDecisions),
        Table::field("inline_share", &I::inlineShare),
        Table::field("heuristic_agreement", &I::heuristicAgreement),
        {"updates", [](const I& i) { return static_cast<double>(i.update.updates); }},
        {"loss_total", perUpdate(&rl::PpoLossTerms::total)},
        {"loss_policy_gradient", perUpdate(&rl::PpoLossTerms::policyGradient)},
        {"loss_entropy", perUpdate(&rl::PpoLossTerms::entropy)},
        {"loss_kl_penalty", perUpdate(&rl::PpoLossTerms::klPenalty)},
        {"loss_l2", perUpdate(&rl::PpoLossTerms::l2)},
        {"importance_ratio_mean", perUpdate(&rl::PpoLossTerms::meanRatio)},
        {"clip_fraction", perUpdate(&rl::PpoLossTerms::clipFraction)},
        {"gradient_norm", [](const I& i) { return i.perUpdate(i.update.gradientNormSum); }},
        {"entropy_before", drift(&rl::PpoUpdateStats::before, &rl::PolicyDrift::meanEntropy)},
        {"entropy_after", drift(&rl::PpoUpdateStats::after, &rl::PolicyDrift::meanEntropy)},
        {"kl_old_new", drift(&rl::PpoUpdateStats::after, &rl::PolicyDrift::meanKl)},
        Table::field("adaptive_kl_beta", &I::adaptiveKlBeta),
        Table::field("seconds_collect", &I::secondsCollect),
        Table::field("seconds_update", &I::secondsUpdate),
    };
    t.include(&I::compile, compileColumns());
    return t;
  }();
  return table;
}

std::unique_ptr<TrainingAlgorithm> PpoTrainer::makeAlgorithm(const PpoTrainerOptions& options,
                                                             evaluators::Scorer* scorer) {
  return std::make_unique<PpoAlgorithm>(options, scorer);
}

Expected<PpoTrainerSummary> PpoTrainer::run(const ProgressCallback& progress,
                                            std::optional<int64_t> stopAfter) {
  return runTyped<PpoTrainerSummary>(
      progress, stopAfter, [this](const StepProgress& p, PpoTrainerSummary& summary) {
        PpoProgress typed{p, algorithm<PpoAlgorithm>().lastIteration(), 0};
        const CompileStats& c = typed.record.compile;
        typed.compilationsPerSecond =
            p.stepSeconds > 0 ? static_cast<double>(c.compilations) / p.stepSeconds : 0;
        summary.iterations.push_back(typed.record);
        summary.compiles += c;
        summary.decisions += typed.record.trainingDecisions;
        summary.updates += typed.record.update.updates;
        summary.finalMeanReward = typed.record.rewardMean;
        return typed;
      });
}

const OptionSchema<PpoTrainerOptions>& PpoTrainerOptions::schema() {
  static const OptionSchema<PpoTrainerOptions> schema = [] {
    const StepNames names{"modules-per-iteration", "iterations",
                          "Policy iterations (collect, then update)", "iteration",
                          "Seeds sampling, mini-batch order and the initial policy"};
    OptionSchema<PpoTrainerOptions> s;
    s.group("Data").include(
        CorpusOptions::schema(names), [](auto& o) -> auto& { return o.data; });
    s.group("Policy").include(
        PolicyStartOptions::schema(true), [](auto& o) -> auto& { return o.policy; });
    s.group("Reward").value(
        "moving-average-decay",
        "Per-module baseline: reward against a moving average of the module's "
        "sizes (starting at -Oz) with this decay; 1: always against -Oz",
        [](auto& o) -> auto& { return o.movingAverageDecay; });
    s.include(
        rl::PpoUpdateOptions::schema(), [](auto& o) -> auto& { return o.update; });
    s.group("Run").include(
        RunOptions::schema(names, true), [](auto& o) -> auto& { return o.run; });
    return s;
  }();
  return schema;
}

} // namespace mlgo::training
