#include "mlgo/training/EsTrainer.h"

#include "mlgo/support/OptionSchema.h"

#include "TrainerSupport.h"
#include "mlgo/training/CandidateFamilies.h"
#include "mlgo/training/TrainingCorpus.h"

#include <algorithm>
#include <cmath>

namespace mlgo::training {

using namespace detail;

namespace {

// numpy.percentile's default (linear interpolation) over sorted values.
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty())
    return kNaN;
  double position = p / 100.0 * static_cast<double>(sorted.size() - 1);
  size_t lower = static_cast<size_t>(std::floor(position));
  size_t upper = std::min(lower + 1, sorted.size() - 1);
  double fraction = position - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

Eigen::VectorXd parametersOf(const policies::MlpPolicy& policy) {
  return Eigen::Map<const Eigen::VectorXd>(policy.parameters().data(),
                                           static_cast<Eigen::Index>(policy.parameterCount()));
}

// ES on the trainer skeleton: a step is ask → compile every candidate on
// the step's modules → tell.
class EsAlgorithm final : public TrainingAlgorithm {
public:
  EsAlgorithm(const EsTrainerOptions& options, evaluators::Scorer* scorer)
      : options_(options), scorer_(*scorer) {}

  std::string_view trainerName() const override { return "es-train"; }
  std::string optimizerName() const override {
    return std::string(es::optimizerKindName(es::kindOf(options_.optimizer)));
  }
  Status loadData(results::RunRecord& record) override;
  Status initialise(results::RunRecord& record) override;
  Status restore(const results::Checkpoint& checkpoint, const std::string& origin) override;
  void saveState(StateArchive& optimizer, StateArchive&) const override {
    optimizer = optimizer_->saveState();
  }
  const policies::MlpPolicy& policy() const override { return *current_; }
  std::vector<const corpus::ModuleSpec*> validationModules() const override {
    return corpus_->validation();
  }
  Expected<std::optional<BestCandidate>> runStep(int64_t step, results::RunRecord& record) override;

  const EsStep& lastStep() const { return last_; }

private:
  Status start(const policies::MlpPolicy& policy);
  // Each candidate's reward: its mean over the step's modules, none if any
  // module failed (its antithetic pair is then dropped).
  std::vector<std::optional<double>> candidateRewards(const evaluators::EvaluationResult& result);
  void describeRewards(const std::vector<std::optional<double>>& rewards,
                       const es::StepRecord& told);

  const EsTrainerOptions& options_;
  evaluators::Scorer& scorer_;
  std::optional<TrainingCorpus> corpus_;
  std::optional<policies::MlpPolicy> current_; // the optimiser's point as a policy
  std::unique_ptr<es::BlackboxOptimizer> optimizer_;
  EsStep last_;
};

Status EsAlgorithm::loadData(results::RunRecord& record) {
  Expected<TrainingCorpus> loaded =
      TrainingCorpus::load(options_.data, options_.run.seed, scorer_, record);
  if (!loaded)
    return loaded.error();
  corpus_.emplace(loaded.take());
  record.attributes["compiler"] = scorer_.compilerIdentity();
  return Status::ok();
}

Status EsAlgorithm::start(const policies::MlpPolicy& policy) {
  current_.emplace(policy);
  const Eigen::VectorXd parameters = parametersOf(policy);
  std::optional<Eigen::VectorXd> scale;
  if (options_.scaleByWeights)
    scale = es::pretrainedScale(parameters);
  Expected<std::unique_ptr<es::BlackboxOptimizer>> optimizer =
      es::createOptimizer(options_.optimizer, parameters, scale, options_.run.seed);
  if (!optimizer)
    return optimizer.error();
  optimizer_ = optimizer.take();
  return Status::ok();
}

Status EsAlgorithm::initialise(results::RunRecord& record) {
  Expected<policies::MlpPolicy> policy =
      startingPolicy(options_.policy, options_.run.seed, scorer_, *corpus_, record);
  if (!policy)
    return policy.error();
  return start(*policy);
}

Status EsAlgorithm::restore(const results::Checkpoint& checkpoint, const std::string& origin) {
  Expected<policies::MlpPolicy> policy =
      mlpFromJson(checkpoint.policyJson, origin + ": /checkpoint");
  if (!policy)
    return policy.error();
  if (Status started = start(*policy); !started)
    return started;
  if (Status s = optimizer_->restoreState(checkpoint.optimizerState); !s)
    return makeError(origin + ": " + s.error().message);
  return Status::ok();
}

std::vector<std::optional<double>>
EsAlgorithm::candidateRewards(const evaluators::EvaluationResult& result) {
  std::vector<std::optional<double>> rewards(result.candidateCount);
  for (size_t c = 0; c < result.candidateCount; ++c) {
    double sum = 0;
    bool allOk = true;
    for (size_t m = 0; m < result.moduleCount; ++m) {
      const evaluators::JobResult& job = result.job(c, m);
      allOk = allOk && job.ok();
      if (job.ok())
        sum += job.reward;
    }
    if (allOk)
      rewards[c] = options_.candidateReward == EsTrainerOptions::CandidateReward::Total
                       ? result.score(c).totalReward
                       : sum / static_cast<double>(result.moduleCount);
  }
  return rewards;
}

void EsAlgorithm::describeRewards(const std::vector<std::optional<double>>& rewards,
                                  const es::StepRecord& told) {
  std::vector<double> finite;
  for (const std::optional<double>& r : rewards)
    if (r)
      finite.push_back(*r);
  std::sort(finite.begin(), finite.end());
  EsStep& s = last_;
  if (!finite.empty()) {
    s.rewardMean = told.meanReward;
    s.rewardMax = finite.back();
    s.rewardMin = finite.front();
  }
  s.rewardP10 = percentile(finite, 10);
  s.rewardP25 = percentile(finite, 25);
  s.rewardP50 = percentile(finite, 50);
  s.rewardP75 = percentile(finite, 75);
  s.rewardP90 = percentile(finite, 90);
  s.currentValue = told.currentValue;
  s.centerReward = told.centerReward;
  s.skipped = told.skipped;
  s.usedRewards = told.usedRewards;
  s.droppedPairs = told.droppedPairs;
  s.gradientNorm = told.gradientNorm;
  s.stepNorm = told.stepNorm;
  s.optimizerColumns.clear();
  for (std::string_view column : es::optimizerStepColumns())
    s.optimizerColumns.push_back(told.diagnostic(column));
}

Expected<std::optional<BestCandidate>> EsAlgorithm::runStep(int64_t step,
                                                            results::RunRecord& record) {
  const auto start = Clock::now();
  es::Population population = optimizer_->ask();
  StepModules modules = corpus_->sample(step);
  std::vector<policies::MlpPolicy> candidates;
  candidates.reserve(population.size());
  Eigen::VectorXd weights(static_cast<Eigen::Index>(population.dimension()));
  for (size_t c = 0; c < population.size(); ++c) {
    population.candidate(c, {weights.data(), population.dimension()});
    candidates.push_back(current_->withParameters({weights.data(), population.dimension()}));
  }
  evaluators::EvaluationRequest request;
  for (const policies::MlpPolicy& candidate : candidates)
    request.candidates.push_back(&candidate);
  // MPI ranks rebuild the candidates from the population: one description
  // per rank instead of every candidate's weights.
  Expected<evaluators::CandidateFamily> family = describePopulation(population, *current_);
  if (family)
    request.family = &*family;
  request.modules = modules.modules;
  request.seed = options_.run.seed;
  request.step = static_cast<uint64_t>(step);
  evaluators::EvaluationResult result = scorer_.evaluate(request);
  const auto evaluated = Clock::now();

  last_ = EsStep{};
  if (result.problem)
    return *result.problem;
  if (Status fits = detail::checkPolicyFits(result); !fits)
    return fits.error();
  last_.compile = recordEvaluation(result, modules, step, record);
  std::vector<std::optional<double>> rewards = candidateRewards(result);
  // Kept before the update: without a validation corpus, the best policy is
  // the point whose neighbourhood scored best.
  const policies::MlpPolicy before = *current_;
  Expected<es::StepRecord> told = optimizer_->tell(rewards);
  if (!told)
    return told.error();
  const Eigen::VectorXd& point = optimizer_->point();
  current_->setParameters({point.data(), static_cast<size_t>(point.size())});
  last_.secondsEvaluate = secondsBetween(start, evaluated);
  last_.secondsUpdate = secondsBetween(evaluated, Clock::now());
  describeRewards(rewards, *told);
  esStepColumns().append(last_, record);
  std::vector<double> rewardRow;
  for (const std::optional<double>& r : rewards)
    rewardRow.push_back(r.value_or(kNaN));
  record.candidateRewards.push_back(std::move(rewardRow));

  if (std::isnan(last_.rewardMean) || !corpus_->validation().empty())
    return std::optional<BestCandidate>();
  return std::optional<BestCandidate>(BestCandidate{
      step, policyJson(before), told->currentValue, {}, "training: mean reward around the point"});
}

} // namespace

Status EsTrainerOptions::validate() const {
  // The optimiser's own validation names its fields ("sampling.sigma: …").
  Status optimizerValid = es::validateOptimizer(optimizer);
  if (!optimizerValid)
    return optimizerValid;
  return validateGroups(
      {{"data", data.validate()}, {"policy", policy.validate()}, {"run", run.validate()}});
}

const ColumnTable<EsStep>& esStepColumns() {
  using Table = ColumnTable<EsStep>;
  static const Table table = [] {
    Table t{
        Table::field("reward_mean", &EsStep::rewardMean),
        Table::field("reward_max", &EsStep::rewardMax),
        Table::field("reward_min", &EsStep::rewardMin),
        Table::field("reward_p10", &EsStep::rewardP10),
        Table::field("reward_p25", &EsStep::rewardP25),
        Table::field("reward_p50", &EsStep::rewardP50),
        Table::field("reward_p75", &EsStep::rewardP75),
        Table::field("reward_p90", &EsStep::rewardP90),
        Table::field("current_value", &EsStep::currentValue),
        Table::field("center_reward", &EsStep::centerReward),
        Table::field("skipped", &EsStep::skipped),
        Table::field("used_rewards", &EsStep::usedRewards),
        Table::field("dropped_pairs", &EsStep::droppedPairs),
        Table::field("gradient_norm", &EsStep::gradientNorm),
        Table::field("step_norm", &EsStep::stepNorm),
    };
    const std::vector<std::string_view>& optimizerColumns = es::optimizerStepColumns();
    for (size_t i = 0; i < optimizerColumns.size(); ++i)
      t.add({std::string(optimizerColumns[i]),
             [i](const EsStep& s) { return columnValue(s.optimizerColumns[i]); }});
    t.add(Table::field("seconds_evaluate", &EsStep::secondsEvaluate));
    t.add(Table::field("seconds_update", &EsStep::secondsUpdate));
    t.include(&EsStep::compile, compileColumns());
    return t;
  }();
  return table;
}

std::unique_ptr<TrainingAlgorithm> EsTrainer::makeAlgorithm(const EsTrainerOptions& options,
                                                            evaluators::Scorer* scorer) {
  return std::make_unique<EsAlgorithm>(options, scorer);
}

Expected<EsTrainerSummary> EsTrainer::run(const ProgressCallback& progress,
                                          std::optional<int64_t> stopAfter) {
  return runTyped<EsTrainerSummary>(
      progress, stopAfter, [this](const StepProgress& p, EsTrainerSummary& summary) {
        EsProgress typed{p, algorithm<EsAlgorithm>().lastStep(), 0};
        const CompileStats& c = typed.record.compile;
        typed.evaluationsPerSecond =
            p.stepSeconds > 0 ? static_cast<double>(c.compilations) / p.stepSeconds : 0;
        summary.steps.push_back(typed.record);
        summary.compiles += c;
        summary.skippedSteps += typed.record.skipped;
        summary.finalMeanReward = typed.record.rewardMean;
        return typed;
      });
}

es::OptimizerOptions EsTrainerOptions::defaultOptimizer() {
  // Measured from the residual start (margin 1) on the inlining split's
  // training code, validated on its validation code (configs/
  // sweep-es-defaults.toml; docs/training.md, "Defaults"): σ ≤ 0.03 flips
  // none of the compiler's decisions (no gradient at all), σ 0.05 almost
  // none; σ 0.3 and 1 make the step's candidates 13-20 % larger on average;
  // a step size of 0.03 moved the policy below -Oz on validation within 16
  // steps, 0.003 and 0.01 never did; 32 directions found candidates 1.4 %
  // below -Oz where 8 found 0.1 %, at 1.6× the time (replay answers most).
  es::GradientEs::Options o;
  o.sampling.sigma = 0.1;
  o.sampling.directions = 32;
  o.stepRule.learningRate = 0.003;
  return o;
}

const OptionSchema<EsTrainerOptions>& EsTrainerOptions::schema() {
  static const OptionSchema<EsTrainerOptions> schema = [] {
    const StepNames names{"modules-per-step", "steps", "Training steps", "step",
                          "Seeds perturbations, module sampling, initial policy"};
    OptionSchema<EsTrainerOptions> s;
    s.group("Data").include(
        CorpusOptions::schema(names), [](auto& o) -> auto& { return o.data; });
    s.group("Policy").include(
        PolicyStartOptions::schema(true), [](auto& o) -> auto& { return o.policy; });
    s.flag(
         "scale-by-weights", "Perturb each weight by |w| + 0.01 (for a pretrained start)",
         [](auto& o) -> auto& { return o.scaleByWeights; })
        .negatable();
    s.group("Optimiser");
    s.choice(
        "candidate-reward",
        "A candidate's reward over the step's modules: the mean of the modules' relative "
        "rewards (each module alike), or the relative reward of their total size or score "
        "(large modules weigh more)",
        [](auto& o) -> auto& { return o.candidateReward; },
        {CandidateReward::Mean, CandidateReward::Total},
        [](CandidateReward r) -> std::string_view {
          return r == CandidateReward::Total ? "total" : "mean";
        });
    s.include(
        es::optimizerSchema(), [](auto& o) -> auto& { return o.optimizer; });
    s.group("Run").include(
        RunOptions::schema(names, true), [](auto& o) -> auto& { return o.run; });
    return s;
  }();
  return schema;
}

} // namespace mlgo::training
