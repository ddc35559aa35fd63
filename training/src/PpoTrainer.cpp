#include "mlgo/training/PpoTrainer.h"

#include "mlgo/training/TrainingModules.h"

#include "TrainerSupport.h"

#include "mlgo/policies/PolicyFile.h"
#include "mlgo/rl/Decisions.h"
#include "mlgo/rl/MiniBatches.h"
#include "mlgo/support/Random.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fs = std::filesystem;

namespace mlgo::training {

using namespace detail;
using namespace rl;

namespace {

constexpr const char* kTrainerName = "ppo-train";
constexpr const char* kOptimizerName = "adam";
constexpr const char* kMovingAverages = "moving_average_sizes";
constexpr const char* kKlBeta = "kl_beta";
constexpr const char* kBestValue = "best_value";
constexpr uint64_t kShuffleTag = 0x70706f; // "ppo"

} // namespace

Status PpoTrainerOptions::validate() const {
  if (corpus.empty())
    return makeError("corpus: no training corpus given");
  if (validationInterval < 1)
    return makeError("validationInterval: must be at least 1, got " +
                     std::to_string(validationInterval));
  if (modulesPerIteration < 1)
    return makeError("modulesPerIteration: must be at least 1");
  if (vocabularyQuantiles < 2)
    return makeError("vocabularyQuantiles: must be at least 2, got " +
                     std::to_string(vocabularyQuantiles));
  if (Status s = mlp.validate(); !s)
    return makeError("mlp." + s.error().message);
  if (!(movingAverageDecay >= 0 && movingAverageDecay <= 1))
    return makeError("movingAverageDecay: must be in [0, 1], got " +
                     std::to_string(movingAverageDecay));
  if (Status s = loss.validate("loss"); !s)
    return s;
  if (Status s = adam.validate("adam"); !s)
    return s;
  if (minibatchSize < 1)
    return makeError("minibatchSize: must be at least 1");
  if (epochs < 1)
    return makeError("epochs: must be at least 1, got " + std::to_string(epochs));
  if (updatesPerIteration && *updatesPerIteration < 1)
    return makeError("updatesPerIteration: must be at least 1, got " +
                     std::to_string(*updatesPerIteration));
  if (iterations < 1)
    return makeError("iterations: must be at least 1, got " + std::to_string(iterations));
  if (snapshotInterval < 1)
    return makeError("snapshotInterval: must be at least 1, got " +
                     std::to_string(snapshotInterval));
  if (output.empty())
    return makeError("output: no run file given");
  if (policyOutput.empty())
    return makeError("policyOutput: no policy file given");
  if (Status s = evaluator.validate(); !s)
    return makeError("evaluator." + s.error().message);
  return Status::ok();
}

struct PpoTrainer::Impl {
  PpoTrainerOptions options;
  std::unique_ptr<corpus::Corpus> training;
  std::unique_ptr<corpus::Corpus> validation;
  std::unique_ptr<evaluators::Evaluator> evaluator;
  std::vector<const corpus::ModuleSpec*> eligible; // training modules with a baseline
  std::vector<int64_t> eligibleIndex;              // their index in record.moduleNames
  std::vector<const corpus::ModuleSpec*> validationModules;
  std::optional<corpus::ModuleSampler> sampler;
  std::optional<policies::MlpPolicy> policy;
  Eigen::VectorXd parameters; // the policy's, updated in place then copied in
  AdamState adam;
  double klBeta = 0;
  std::vector<double> movingAverages; // per record.moduleNames; NaN: not compiled yet
  RowParallelism parallel;
  results::RunRecord record;
  int64_t iteration = 0; // iterations completed
  double elapsedBefore = 0;
  double bestValue = -std::numeric_limits<double>::infinity();
  // The recorded features the gather was built for (clang's header).
  std::vector<policies::TensorSpec> gatherSpecs;
  std::optional<FeatureGather> gather;

  Status loadData();
  Status initialisePolicy();
  Status bindFeatures(const std::vector<policies::TensorSpec>& recorded);
  std::optional<double> validate(int64_t step);
  Expected<PpoProgress> runIteration(Clock::time_point runStart);
  void checkpoint(double elapsed);
  Status save() { return results::writeRunFile(options.output, record); }
};

Status PpoTrainer::Impl::loadData() {
  Expected<corpus::Corpus> loaded = corpus::Corpus::load(options.corpus);
  if (!loaded)
    return loaded.error();
  training = std::make_unique<corpus::Corpus>(loaded.take());
  if (options.validationCorpus) {
    Expected<corpus::Corpus> v = corpus::Corpus::load(*options.validationCorpus);
    if (!v)
      return v.error();
    validation = std::make_unique<corpus::Corpus>(v.take());
  }
  Expected<std::unique_ptr<evaluators::Evaluator>> created =
      evaluators::Evaluator::create(options.evaluator, evaluators::CompilerTask::inliningForSize());
  if (!created)
    return created.error();
  evaluator = created.take();
  parallel = RowParallelism(options.evaluator.workers);

  Expected<TrainingModules> modules =
      prepareTrainingModules(*evaluator, *training, validation.get(), record);
  if (!modules)
    return modules.error();
  eligible = modules->eligible;
  eligibleIndex = modules->eligibleIndex;
  validationModules = modules->validation;
  sampler.emplace(options.sampling, modules->eligibleBitcodeBytes, options.seed);
  return Status::ok();
}

Status PpoTrainer::Impl::initialisePolicy() {
  if (options.initialPolicy) {
    Expected<policies::MlpPolicy> loaded = policies::loadMlpPolicy(*options.initialPolicy);
    if (!loaded)
      return loaded.error();
    policy.emplace(loaded.take());
    record.attributes["initial_policy"] = options.initialPolicy->string();
    return Status::ok();
  }
  Expected<std::vector<policies::TensorSpec>> specs =
      probeFeatureSpecs(*evaluator, eligible, options.corpus.string());
  if (!specs)
    return specs.error();
  Expected<policies::Vocabulary> vocabulary =
      options.vocabulary ? policies::readVocabularyDirectory(*options.vocabulary)
                         : vocabularyFromJobs(recordHeuristic(*evaluator, eligible, false).jobs,
                                              options.vocabularyQuantiles);
  if (!vocabulary)
    return vocabulary.error();
  record.attributes["vocabulary"] = options.vocabulary
                                        ? options.vocabulary->string()
                                        : "built from the heuristic's decisions on the corpus";
  Expected<std::shared_ptr<const policies::MlpStructure>> structure =
      policies::MlpStructure::create(*specs, *vocabulary, options.mlp);
  if (!structure)
    return structure.error();
  policy.emplace(policies::MlpPolicy::initialised(*structure, options.seed));
  record.attributes["initial_policy"] = "random (seed " + std::to_string(options.seed) + ")";
  return Status::ok();
}

Status PpoTrainer::Impl::bindFeatures(const std::vector<policies::TensorSpec>& recorded) {
  if (gather && recorded == gatherSpecs)
    return Status::ok();
  Expected<FeatureGather> created = FeatureGather::create(recorded, policy->inputs());
  if (!created)
    return created.error();
  gather.emplace(created.take());
  gatherSpecs = recorded;
  return Status::ok();
}

std::optional<double> PpoTrainer::Impl::validate(int64_t step) {
  if (validationModules.empty())
    return std::nullopt;
  evaluators::EvaluationRequest request;
  request.candidates = {&*policy};
  request.modules = validationModules;
  request.seed = options.seed;
  request.step = static_cast<uint64_t>(step);
  evaluators::EvaluationResult result = evaluator->evaluate(request);
  results::ValidationRecord v;
  v.step = step;
  for (size_t m = 0; m < validationModules.size(); ++m) {
    const evaluators::JobResult& job = result.job(0, m);
    v.sizes.push_back(job.ok() ? job.sizeBytes : 0);
    v.ok.push_back(job.ok() ? 1 : 0);
    if (!job.ok())
      recordFailure(record, step, -1, validationModules[m]->name, job);
  }
  evaluators::CandidateScore score = result.score(0);
  v.meanReward = score.okModules ? score.meanReward : kNaN;
  v.totalReward = score.okModules ? score.totalReward : kNaN;
  record.validations.push_back(v);
  return score.okModules ? std::optional<double>(score.totalReward) : std::nullopt;
}

void PpoTrainer::Impl::checkpoint(double elapsed) {
  results::Checkpoint c;
  c.step = iteration;
  c.optimizer = kOptimizerName;
  adam.saveTo(c.optimizerState);
  c.policyJson = policyJson(*policy);
  c.trainerState.setVector(kMovingAverages, movingAverages);
  c.trainerState.setReal(kKlBeta, klBeta);
  c.trainerState.setReal(kBestValue, bestValue);
  c.elapsedSeconds = elapsed;
  record.checkpoint = std::move(c);
}

Expected<PpoProgress> PpoTrainer::Impl::runIteration(Clock::time_point runStart) {
  const auto start = Clock::now();
  const int64_t step = iteration;

  // --- collect: compile the iteration's modules with the sampling policy.
  std::vector<size_t> picks =
      sampler->sample(static_cast<uint64_t>(step), options.modulesPerIteration);
  std::vector<const corpus::ModuleSpec*> modules;
  std::vector<int64_t> moduleIndices;
  for (size_t pick : picks) {
    modules.push_back(eligible[pick]);
    moduleIndices.push_back(eligibleIndex[pick]);
  }
  evaluators::EvaluationRequest request;
  request.candidates = {&*policy};
  request.modules = modules;
  request.mode = policies::DecisionMode::Sampling;
  request.seed = options.seed;
  request.step = static_cast<uint64_t>(step);
  request.recordTrajectories = true;
  evaluators::EvaluationResult result = evaluator->evaluate(request);
  const auto collected = Clock::now();
  const std::string sampledJson = policyJson(*policy);

  DecisionSet data;
  data.width = policy->structure()->featureCount();
  std::vector<uint64_t> sizeRow(modules.size(), 0);
  size_t failed = 0, okModules = 0, wins = 0, regressions = 0;
  uint64_t decisions = 0, totalSize = 0, totalBaseline = 0;
  double rewardSum = 0, trainingRewardSum = 0;
  double rewardMin = std::numeric_limits<double>::infinity(), rewardMax = -rewardMin;
  std::vector<double> recorded;
  for (size_t m = 0; m < modules.size(); ++m) {
    const evaluators::JobResult& job = result.job(0, m);
    decisions += job.decisions;
    if (!job.ok()) {
      ++failed;
      recordFailure(record, step, 0, modules[m]->name, job);
      continue;
    }
    ++okModules;
    const uint64_t baseline = *result.baselineBytes[m];
    sizeRow[m] = job.sizeBytes;
    totalSize += job.sizeBytes;
    totalBaseline += baseline;
    rewardSum += job.reward;
    rewardMin = std::min(rewardMin, job.reward);
    rewardMax = std::max(rewardMax, job.reward);
    wins += job.sizeBytes < baseline;
    regressions += job.sizeBytes > baseline;

    // ml-compiler-opt's reward: against the module's moving average, which
    // starts at -Oz and is updated after scoring this compile.
    double& average = movingAverages[static_cast<size_t>(moduleIndices[m])];
    const double reference = std::isnan(average) ? static_cast<double>(baseline) : average;
    const double trainingReward = rewardAgainst(static_cast<double>(job.sizeBytes), reference);
    average = nextMovingAverage(reference, static_cast<double>(job.sizeBytes),
                                options.movingAverageDecay);
    trainingRewardSum += trainingReward;

    if (!job.trajectory || job.trajectory->decisions() == 0)
      continue;
    const policies::Trajectory& t = *job.trajectory;
    if (Status bound = bindFeatures(t.featureSpecs); !bound)
      return makeError("module \"" + modules[m]->name + "\": " + bound.error().message);
    const size_t first = data.features.size();
    data.features.resize(first + t.decisions() * data.width);
    for (size_t d = 0; d < t.decisions(); ++d) {
      gather->gather(t.row(d), data.features.data() + first + d * data.width);
      data.actions.push_back(t.actions[d]);
      data.logProbabilities.push_back(t.logProbabilities[d]);
      data.defaults.push_back(d < t.defaultDecisions.size() ? t.defaultDecisions[d] : -1);
      data.rewards.push_back(trainingReward);
      data.modules.push_back(moduleIndices[m]);
    }
  }
  const size_t rows = data.rows();
  size_t inlined = 0, agreeing = 0, withDefault = 0;
  for (size_t r = 0; r < rows; ++r) {
    inlined += data.actions[r] == 1;
    if (data.defaults[r] >= 0) {
      ++withDefault;
      agreeing += data.actions[r] == data.defaults[r];
    }
  }

  // --- update: Adam on mini-batches of the decisions.
  PpoLossTerms sums;
  double gradientNormSum = 0;
  int64_t updates = 0;
  PolicyDrift before, after;
  if (rows > 0) {
    data.oldLogDistributions = logDistributions(*policy, data, parallel);
    std::vector<size_t> all(rows);
    for (size_t r = 0; r < rows; ++r)
      all[r] = r;
    before = policyDrift(*policy, data, all, parallel);
    std::vector<double> advantages = data.rewards;
    if (options.advantageNormalization == AdvantageNormalization::Iteration)
      advantages = normalizeAdvantages(advantages);
    const int64_t batchesPerPass =
        static_cast<int64_t>((rows + options.minibatchSize - 1) / options.minibatchSize);
    const int64_t total = options.updatesPerIteration.value_or(options.epochs * batchesPerPass);
    std::vector<std::vector<size_t>> batches;
    size_t next = 0;
    uint64_t pass = 0;
    std::vector<double> gradient(policy->parameterCount());
    std::vector<double> batchAdvantages;
    for (; updates < total; ++updates) {
      if (next == batches.size()) {
        batches =
            miniBatches(permutation(rows, deriveKey({options.seed, static_cast<uint64_t>(step),
                                                     pass++, kShuffleTag})),
                        options.minibatchSize);
        next = 0;
      }
      const std::vector<size_t>& batch = batches[next++];
      batchAdvantages.clear();
      for (size_t r : batch)
        batchAdvantages.push_back(advantages[r]);
      if (options.advantageNormalization == AdvantageNormalization::MiniBatch)
        batchAdvantages = normalizeAdvantages(batchAdvantages);
      std::fill(gradient.begin(), gradient.end(), 0.0);
      PpoLossTerms terms =
          ppoLoss(*policy, data, batch, batchAdvantages, klBeta, options.loss, gradient, parallel);
      AdamUpdate update = adamStep(options.adam, adam, gradient,
                                   {parameters.data(), static_cast<size_t>(parameters.size())});
      policy->setParameters({parameters.data(), static_cast<size_t>(parameters.size())});
      gradientNormSum += update.gradientNorm;
      sums.policyGradient += terms.policyGradient;
      sums.entropy += terms.entropy;
      sums.klPenalty += terms.klPenalty;
      sums.l2 += terms.l2;
      sums.total += terms.total;
      sums.meanRatio += terms.meanRatio;
      sums.clipFraction += terms.clipFraction;
      // tf_agents adapts β after each train() call, on that call's batch
      // under the updated policy.
      if (options.loss.initialKlBeta > 0)
        klBeta =
            adaptKlBeta(klBeta, policyDrift(*policy, data, batch, parallel).meanKl, options.loss);
    }
    after = policyDrift(*policy, data, all, parallel);
  }
  ++iteration;
  const auto updated = Clock::now();

  // --- record.
  auto& s = record.stepScalars;
  auto put = [&](const char* name, double value) { s[name].push_back(value); };
  auto perUpdate = [&](double sum) { return updates ? sum / static_cast<double>(updates) : kNaN; };
  auto share = [](size_t part, size_t whole) {
    return whole ? static_cast<double>(part) / static_cast<double>(whole) : kNaN;
  };
  const double meanReward = okModules ? rewardSum / static_cast<double>(okModules) : kNaN;
  put("reward_mean", meanReward);
  put("reward_min", okModules ? rewardMin : kNaN);
  put("reward_max", okModules ? rewardMax : kNaN);
  put("reward_total", okModules && totalBaseline ? 1.0 - static_cast<double>(totalSize) /
                                                             static_cast<double>(totalBaseline)
                                                 : kNaN);
  put("training_reward_mean",
      okModules ? trainingRewardSum / static_cast<double>(okModules) : kNaN);
  put("win_share", share(wins, okModules));
  put("regression_share", share(regressions, okModules));
  put("compilations", static_cast<double>(result.jobs.size()));
  put("failed_compilations", static_cast<double>(failed));
  put("decisions", static_cast<double>(decisions));
  put("cache_lookups", static_cast<double>(result.cacheLookups));
  put("cache_hits", static_cast<double>(result.cacheHits));
  put("cache_seconds_saved", result.cacheSecondsSaved);
  put("training_decisions", static_cast<double>(rows));
  put("inline_share", share(inlined, rows));
  put("heuristic_agreement", share(agreeing, withDefault));
  put("updates", static_cast<double>(updates));
  put("loss_total", perUpdate(sums.total));
  put("loss_policy_gradient", perUpdate(sums.policyGradient));
  put("loss_entropy", perUpdate(sums.entropy));
  put("loss_kl_penalty", perUpdate(sums.klPenalty));
  put("loss_l2", perUpdate(sums.l2));
  put("importance_ratio_mean", perUpdate(sums.meanRatio));
  put("clip_fraction", perUpdate(sums.clipFraction));
  put("gradient_norm", perUpdate(gradientNormSum));
  put("entropy_before", rows ? before.meanEntropy : kNaN);
  put("entropy_after", rows ? after.meanEntropy : kNaN);
  put("kl_old_new", rows ? after.meanKl : kNaN);
  put("adaptive_kl_beta", klBeta);
  put("seconds_collect", secondsBetween(start, collected));
  put("seconds_update", secondsBetween(collected, updated));
  record.candidateRewards.push_back({meanReward});
  record.stepModules.push_back(moduleIndices);
  record.stepSizes.push_back(sizeRow);

  PpoProgress progress;
  progress.iteration = step;
  progress.iterations = options.iterations;
  progress.meanReward = meanReward;
  progress.failedCompilations = failed;
  progress.decisions = rows;
  progress.updates = updates;
  progress.loss = perUpdate(sums.total);
  progress.entropy = rows ? after.meanEntropy : kNaN;
  progress.kl = rows ? after.meanKl : kNaN;
  progress.klBeta = klBeta;

  const int64_t done = iteration;
  const bool last = done >= options.iterations;
  if (validationModules.empty()) {
    // Without held-out code, "best" is the sampling policy that scored best
    // on its own (noisy, optimistic) training modules.
    if (okModules && meanReward > bestValue) {
      bestValue = meanReward;
      record.bestPolicy = results::PolicySnapshot{step, sampledJson};
      record.bestPolicyMetric = "training: mean reward of the sampling policy";
      record.bestPolicyValue = bestValue;
    }
  } else if (done % options.validationInterval == 0 || last) {
    std::optional<double> value = validate(done);
    progress.validationTotalReward = value;
    if (value && *value > bestValue) {
      bestValue = *value;
      record.bestPolicy = results::PolicySnapshot{done, policyJson(*policy)};
      record.bestPolicyMetric = "validation: total reward (1 - sum size / sum -Oz size)";
      record.bestPolicyValue = bestValue;
    }
  }
  std::string currentJson = policyJson(*policy);
  if (done % options.snapshotInterval == 0 || last)
    record.snapshots.push_back({done, currentJson});
  if (last)
    record.finalPolicy = results::PolicySnapshot{done, currentJson};

  const double elapsed = elapsedBefore + secondsBetween(runStart, Clock::now());
  put("seconds_step", secondsBetween(start, Clock::now()));
  put("elapsed_seconds", elapsed);
  checkpoint(elapsed);

  const double stepSeconds = secondsBetween(start, Clock::now());
  progress.elapsedSeconds = elapsed;
  progress.compilationsPerSecond =
      stepSeconds > 0 ? static_cast<double>(result.jobs.size()) / stepSeconds : 0;
  progress.etaSeconds = stepSeconds * static_cast<double>(options.iterations - done);
  return progress;
}

PpoTrainer::PpoTrainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PpoTrainer::PpoTrainer(PpoTrainer&&) noexcept = default;
PpoTrainer& PpoTrainer::operator=(PpoTrainer&&) noexcept = default;
PpoTrainer::~PpoTrainer() = default;

const PpoTrainerOptions& PpoTrainer::options() const {
  return impl_->options;
}
const results::RunRecord& PpoTrainer::record() const {
  return impl_->record;
}
const policies::MlpPolicy& PpoTrainer::policy() const {
  return *impl_->policy;
}

Expected<PpoTrainer> PpoTrainer::create(PpoTrainerOptions options) {
  if (Status valid = options.validate(); !valid)
    return valid.error();
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  results::RunRecord& r = impl->record;
  r.trainer = kTrainerName;
  r.configToml = impl->options.configToml;
  r.config = impl->options.configValues;
  if (Status s = impl->loadData(); !s)
    return s.error();
  if (Status s = impl->initialisePolicy(); !s)
    return s.error();
  const policies::MlpPolicy& policy = *impl->policy;
  impl->parameters = Eigen::Map<const Eigen::VectorXd>(
      policy.parameters().data(), static_cast<Eigen::Index>(policy.parameterCount()));
  impl->adam = AdamState::zeros(policy.parameterCount());
  impl->klBeta = impl->options.loss.initialKlBeta;
  impl->movingAverages.assign(r.moduleNames.size(), kNaN);
  r.attributes["compiler"] = impl->evaluator->compilerIdentity();
  r.attributes["corpus"] = impl->options.corpus.string();
  if (impl->options.validationCorpus)
    r.attributes["validation_corpus"] = impl->options.validationCorpus->string();
  r.attributes["policy"] = policy.describe();
  r.attributes["parameters"] = std::to_string(policy.parameterCount());
  r.attributes["optimizer"] = kOptimizerName;
  std::error_code ec;
  if (impl->options.output.has_parent_path())
    fs::create_directories(impl->options.output.parent_path(), ec);
  r.snapshots.push_back({0, policyJson(policy)});
  if (Status s = impl->save(); !s)
    return s.error();
  return PpoTrainer(std::move(impl));
}

Expected<PpoTrainer> PpoTrainer::resume(PpoTrainerOptions options) {
  if (Status valid = options.validate(); !valid)
    return valid.error();
  Expected<results::RunRecord> stored = results::readRunFile(options.output);
  if (!stored)
    return stored.error();
  const std::string file = options.output.string();
  if (stored->trainer != kTrainerName)
    return makeError(file + ": written by " + stored->trainer + ", not " + kTrainerName);
  if (!stored->checkpoint)
    return makeError(file + ": has no checkpoint to resume from");
  const results::Checkpoint& checkpoint = *stored->checkpoint;
  if (checkpoint.optimizer != kOptimizerName)
    return makeError(file + ": the checkpoint is of optimizer " + checkpoint.optimizer + ", not " +
                     kOptimizerName);
  if (static_cast<int64_t>(stored->steps()) != checkpoint.step)
    return makeError(file + ": the checkpoint (iteration " + std::to_string(checkpoint.step) +
                     ") disagrees with the " + std::to_string(stored->steps()) +
                     " recorded iterations");
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  if (Status s = impl->loadData(); !s)
    return s.error();
  if (impl->record.moduleNames != stored->moduleNames)
    return makeError(file + ": the corpus's modules differ from the run's; resume with the "
                            "corpus the run was started on");
  // The structure (features, vocabulary, architecture) comes from the
  // checkpoint, never rebuilt, so the resumed run computes what the original
  // would have.
  Expected<policies::MlpPolicy> policy = mlpFromJson(checkpoint.policyJson, file + ": /checkpoint");
  if (!policy)
    return policy.error();
  impl->policy.emplace(policy.take());
  impl->parameters = Eigen::Map<const Eigen::VectorXd>(
      impl->policy->parameters().data(), static_cast<Eigen::Index>(impl->policy->parameterCount()));
  Expected<AdamState> adam =
      AdamState::restore(checkpoint.optimizerState, impl->policy->parameterCount());
  if (!adam)
    return makeError(file + ": " + adam.error().message);
  impl->adam = adam.take();
  Expected<std::vector<double>> averages =
      checkpoint.trainerState.vector(kMovingAverages, stored->moduleNames.size());
  if (!averages)
    return makeError(file + ": the checkpoint's moving baselines are missing or do not match the "
                            "modules");
  impl->movingAverages = averages.take();
  impl->klBeta = checkpoint.trainerState.realOr(kKlBeta, impl->options.loss.initialKlBeta);
  impl->bestValue =
      checkpoint.trainerState.realOr(kBestValue, -std::numeric_limits<double>::infinity());
  impl->iteration = checkpoint.step;
  impl->elapsedBefore = checkpoint.elapsedSeconds;
  impl->record = stored.take();
  return PpoTrainer(std::move(impl));
}

Expected<PpoTrainerSummary> PpoTrainer::run(const ProgressCallback& progress,
                                            std::optional<int64_t> stopAfter) {
  Impl& impl = *impl_;
  const auto runStart = Clock::now();
  PpoTrainerSummary summary;
  summary.output = impl.options.output;
  while (impl.iteration < impl.options.iterations) {
    if (stopAfter && summary.iterationsRun >= *stopAfter)
      break;
    Expected<PpoProgress> step = impl.runIteration(runStart);
    if (!step)
      return step.error();
    if (Status saved = impl.save(); !saved)
      return saved.error();
    ++summary.iterationsRun;
    auto& s = impl.record.stepScalars;
    summary.compilations += static_cast<uint64_t>(s["compilations"].back());
    summary.failedCompilations += static_cast<uint64_t>(s["failed_compilations"].back());
    summary.decisions += static_cast<uint64_t>(s["training_decisions"].back());
    summary.updates += step->updates;
    summary.finalMeanReward = step->meanReward;
    if (progress)
      progress(*step);
  }
  summary.iterationsTotal = impl.iteration;
  if (impl.iteration >= impl.options.iterations) {
    std::error_code ec;
    if (impl.options.policyOutput.has_parent_path())
      fs::create_directories(impl.options.policyOutput.parent_path(), ec);
    if (Status saved = policies::savePolicy(*impl.policy, impl.options.policyOutput); !saved)
      return saved.error();
    summary.policyOutput = impl.options.policyOutput;
  }
  summary.seconds = secondsBetween(runStart, Clock::now());
  if (!impl.validationModules.empty() && impl.bestValue > -std::numeric_limits<double>::infinity())
    summary.bestValidationTotalReward = impl.bestValue;
  return summary;
}

} // namespace mlgo::training
