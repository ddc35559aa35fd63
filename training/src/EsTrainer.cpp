#include "mlgo/training/EsTrainer.h"

#include "mlgo/training/TrainingModules.h"

#include "mlgo/policies/PolicyFile.h"
#include "mlgo/policies/Vocabulary.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace fs = std::filesystem;

namespace mlgo::training {

using namespace es;

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr const char* kTrainerName = "es-train";

double secondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

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

} // namespace

Status EsTrainerOptions::validate() const {
  if (corpus.empty())
    return makeError("corpus: no training corpus given");
  if (validationInterval < 1)
    return makeError("validationInterval: must be at least 1, got " +
                     std::to_string(validationInterval));
  if (modulesPerStep < 1)
    return makeError("modulesPerStep: must be at least 1");
  if (vocabularyQuantiles < 2)
    return makeError("vocabularyQuantiles: must be at least 2, got " +
                     std::to_string(vocabularyQuantiles));
  if (steps < 1)
    return makeError("steps: must be at least 1, got " + std::to_string(steps));
  if (snapshotInterval < 1)
    return makeError("snapshotInterval: must be at least 1, got " +
                     std::to_string(snapshotInterval));
  if (output.empty())
    return makeError("output: no run file given");
  if (Status s = mlp.validate(); !s)
    return makeError("mlp." + s.error().message);
  switch (optimizer) {
  case OptimizerKind::GradientEs:
    if (Status s = gradientEs.validate(); !s)
      return s;
    break;
  case OptimizerKind::TrustRegionEs:
    if (Status s = trustRegion.validate(); !s)
      return s;
    break;
  case OptimizerKind::SepCmaEs:
    if (Status s = sepCma.validate(); !s)
      return s;
    break;
  }
  if (Status s = evaluator.validate(); !s)
    return makeError("evaluator." + s.error().message);
  return Status::ok();
}

struct EsTrainer::Impl {
  EsTrainerOptions options;
  std::unique_ptr<corpus::Corpus> training;
  std::unique_ptr<corpus::Corpus> validation;
  std::unique_ptr<evaluators::Evaluator> evaluator;
  std::vector<const corpus::ModuleSpec*> eligible; // training modules with a baseline
  std::vector<int64_t> eligibleIndex;              // their index in record.moduleNames
  std::vector<const corpus::ModuleSpec*> validationModules;
  std::optional<corpus::ModuleSampler> sampler;
  std::shared_ptr<const policies::MlpStructure> structure;
  std::unique_ptr<BlackboxOptimizer> optimizer;
  results::RunRecord record;
  double elapsedBefore = 0;
  double bestValue = -std::numeric_limits<double>::infinity();

  Status loadData();
  Expected<std::vector<policies::TensorSpec>> probeFeatureSpecs();
  Expected<policies::Vocabulary> vocabularyFromHeuristic();
  Status initialisePolicy(Eigen::VectorXd& parameters);
  Status createOptimizer(const Eigen::VectorXd& parameters);
  policies::MlpPolicy policyAt(const Eigen::VectorXd& point) const {
    return policies::MlpPolicy(structure, point);
  }
  std::string policyJson(const Eigen::VectorXd& point) const;
  void recordFailure(int64_t step, int64_t candidate, const std::string& module,
                     const evaluators::JobResult& job);
  std::optional<double> validate(int64_t step);
  Expected<StepProgress> runStep(Clock::time_point runStart);
  Status save();
};

std::string EsTrainer::Impl::policyJson(const Eigen::VectorXd& point) const {
  Expected<std::string> json = policies::policyToJson(policyAt(point));
  // Parameters are finite by construction (the optimiser never steps to
  // NaN from finite rewards); a failure here is a programmer error.
  return json ? *json : std::string("{}");
}

Status EsTrainer::Impl::loadData() {
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

Expected<std::vector<policies::TensorSpec>> EsTrainer::Impl::probeFeatureSpecs() {
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy();
  for (const corpus::ModuleSpec* module : eligible) {
    evaluators::JobResult job =
        evaluator->compile({.module = module, .policy = echo.get(), .recordTrajectory = true});
    if (job.ok() && job.trajectory)
      return job.trajectory->featureSpecs;
  }
  return makeError(options.corpus.string() +
                   ": no module opened clang's interactive channel; cannot learn the features");
}

Expected<policies::Vocabulary> EsTrainer::Impl::vocabularyFromHeuristic() {
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy();
  evaluators::EvaluationRequest request;
  request.candidates = {echo.get()};
  request.modules = eligible;
  request.recordTrajectories = true;
  evaluators::EvaluationResult result = evaluator->evaluate(request);
  policies::FeatureSamples samples;
  for (const evaluators::JobResult& job : result.jobs) {
    if (!job.ok() || !job.trajectory)
      continue;
    const policies::Trajectory& t = *job.trajectory;
    size_t column = 0;
    for (const policies::TensorSpec& spec : t.featureSpecs) {
      if (spec.elementCount() == 1)
        for (size_t d = 0; d < t.decisions(); ++d)
          samples[spec.name].push_back(t.row(d)[column]);
      column += spec.elementCount();
    }
  }
  policies::VocabularyOptions vocabularyOptions;
  vocabularyOptions.quantiles = options.vocabularyQuantiles;
  return policies::buildVocabulary(samples, vocabularyOptions);
}

Status EsTrainer::Impl::initialisePolicy(Eigen::VectorXd& parameters) {
  if (options.initialPolicy) {
    Expected<policies::MlpPolicy> policy = policies::loadMlpPolicy(*options.initialPolicy);
    if (!policy)
      return policy.error();
    structure = policy->structure();
    parameters = Eigen::Map<const Eigen::VectorXd>(
        policy->parameters().data(), static_cast<Eigen::Index>(policy->parameterCount()));
    record.attributes["initial_policy"] = options.initialPolicy->string();
    return Status::ok();
  }
  Expected<std::vector<policies::TensorSpec>> specs = probeFeatureSpecs();
  if (!specs)
    return specs.error();
  Expected<policies::Vocabulary> vocabulary =
      options.vocabulary ? policies::readVocabularyDirectory(*options.vocabulary)
                         : vocabularyFromHeuristic();
  if (!vocabulary)
    return vocabulary.error();
  record.attributes["vocabulary"] = options.vocabulary
                                        ? options.vocabulary->string()
                                        : "built from the heuristic's decisions on the corpus";
  Expected<std::shared_ptr<const policies::MlpStructure>> created =
      policies::MlpStructure::create(*specs, *vocabulary, options.mlp);
  if (!created)
    return created.error();
  structure = *created;
  parameters = structure->initialParameters(options.seed);
  record.attributes["initial_policy"] = "random (seed " + std::to_string(options.seed) + ")";
  return Status::ok();
}

Status EsTrainer::Impl::createOptimizer(const Eigen::VectorXd& parameters) {
  std::optional<Eigen::VectorXd> scale;
  if (options.scaleByWeights)
    scale = pretrainedScale(parameters);
  switch (options.optimizer) {
  case OptimizerKind::GradientEs: {
    GradientEs::Options o = options.gradientEs;
    o.sampling.seed = options.seed;
    Expected<GradientEs> es = GradientEs::create(o, parameters, scale);
    if (!es)
      return es.error();
    optimizer = std::make_unique<GradientEs>(es.take());
    break;
  }
  case OptimizerKind::TrustRegionEs: {
    TrustRegionEs::Options o = options.trustRegion;
    o.sampling.seed = options.seed;
    Expected<TrustRegionEs> es = TrustRegionEs::create(o, parameters, scale);
    if (!es)
      return es.error();
    optimizer = std::make_unique<TrustRegionEs>(es.take());
    break;
  }
  case OptimizerKind::SepCmaEs: {
    SepCmaEs::Options o = options.sepCma;
    o.seed = options.seed;
    Expected<SepCmaEs> es = SepCmaEs::create(o, parameters);
    if (!es)
      return es.error();
    optimizer = std::make_unique<SepCmaEs>(es.take());
    break;
  }
  }
  return Status::ok();
}

void EsTrainer::Impl::recordFailure(int64_t step, int64_t candidate, const std::string& module,
                                    const evaluators::JobResult& job) {
  record.failures.push_back({step, candidate, module,
                             std::string(evaluators::jobStatusName(job.status)), job.message,
                             job.stderrTail});
}

std::optional<double> EsTrainer::Impl::validate(int64_t step) {
  if (validationModules.empty())
    return std::nullopt;
  policies::MlpPolicy current = policyAt(optimizer->point());
  evaluators::EvaluationRequest request;
  request.candidates = {&current};
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
      recordFailure(step, -1, validationModules[m]->name, job);
  }
  evaluators::CandidateScore score = result.score(0);
  v.meanReward = score.okModules ? score.meanReward : kNaN;
  v.totalReward = score.okModules ? score.totalReward : kNaN;
  record.validations.push_back(v);
  return score.okModules ? std::optional<double>(score.totalReward) : std::nullopt;
}

Expected<StepProgress> EsTrainer::Impl::runStep(Clock::time_point runStart) {
  const auto stepStart = Clock::now();
  const int64_t step = optimizer->step();
  Population population = optimizer->ask();
  const size_t candidateCount = population.size();

  std::vector<size_t> picks = sampler->sample(static_cast<uint64_t>(step), options.modulesPerStep);
  std::vector<const corpus::ModuleSpec*> modules;
  std::vector<int64_t> moduleIndices;
  for (size_t pick : picks) {
    modules.push_back(eligible[pick]);
    moduleIndices.push_back(eligibleIndex[pick]);
  }

  std::vector<policies::MlpPolicy> policies;
  policies.reserve(candidateCount);
  Eigen::VectorXd weights(static_cast<Eigen::Index>(population.dimension()));
  for (size_t c = 0; c < candidateCount; ++c) {
    population.candidate(c, {weights.data(), population.dimension()});
    policies.push_back(policyAt(weights));
  }
  evaluators::EvaluationRequest request;
  for (const policies::MlpPolicy& p : policies)
    request.candidates.push_back(&p);
  request.modules = modules;
  request.seed = options.seed;
  request.step = static_cast<uint64_t>(step);
  evaluators::EvaluationResult result = evaluator->evaluate(request);
  const auto evaluated = Clock::now();

  // A candidate's reward is the mean over the step's modules; a candidate
  // with any failed module has none (its pair is then dropped).
  std::vector<std::optional<double>> rewards(candidateCount);
  std::vector<double> rewardRow(candidateCount, kNaN);
  std::vector<uint64_t> sizeRow(candidateCount * modules.size(), 0);
  size_t failed = 0, wins = 0, regressions = 0, okJobs = 0;
  uint64_t decisions = 0;
  for (size_t c = 0; c < candidateCount; ++c) {
    double sum = 0;
    bool allOk = true;
    for (size_t m = 0; m < modules.size(); ++m) {
      const evaluators::JobResult& job = result.job(c, m);
      decisions += job.decisions;
      if (!job.ok()) {
        allOk = false;
        ++failed;
        recordFailure(step, static_cast<int64_t>(c), modules[m]->name, job);
        continue;
      }
      ++okJobs;
      sizeRow[c * modules.size() + m] = job.sizeBytes;
      sum += job.reward;
      uint64_t baseline = *result.baselineBytes[m];
      wins += job.sizeBytes < baseline;
      regressions += job.sizeBytes > baseline;
    }
    if (allOk) {
      rewards[c] = sum / static_cast<double>(modules.size());
      rewardRow[c] = *rewards[c];
    }
  }

  // Kept before the update: without a validation corpus, the best policy is
  // the point whose neighbourhood scored best.
  const Eigen::VectorXd before = optimizer->point();
  Expected<StepRecord> told = optimizer->tell(rewards);
  if (!told)
    return told.error();
  const auto updated = Clock::now();

  std::vector<double> finite;
  for (const std::optional<double>& r : rewards)
    if (r)
      finite.push_back(*r);
  std::sort(finite.begin(), finite.end());
  auto& s = record.stepScalars;
  auto put = [&](const char* name, double value) { s[name].push_back(value); };
  double mean = finite.empty() ? kNaN : told->meanReward;
  put("reward_mean", mean);
  put("reward_max", finite.empty() ? kNaN : finite.back());
  put("reward_min", finite.empty() ? kNaN : finite.front());
  put("reward_p10", percentile(finite, 10));
  put("reward_p25", percentile(finite, 25));
  put("reward_p50", percentile(finite, 50));
  put("reward_p75", percentile(finite, 75));
  put("reward_p90", percentile(finite, 90));
  put("current_value", told->currentValue);
  put("center_reward", told->centerReward.value_or(kNaN));
  put("win_share", okJobs ? static_cast<double>(wins) / static_cast<double>(okJobs) : kNaN);
  put("regression_share",
      okJobs ? static_cast<double>(regressions) / static_cast<double>(okJobs) : kNaN);
  put("compilations", static_cast<double>(result.jobs.size()));
  put("failed_compilations", static_cast<double>(failed));
  put("decisions", static_cast<double>(decisions));
  // Decision-sequence cache (in-process backend): compilations whose
  // decisions this run had seen before, and the compile time that saved.
  put("cache_lookups", static_cast<double>(result.cacheLookups));
  put("cache_hits", static_cast<double>(result.cacheHits));
  put("cache_seconds_saved", result.cacheSecondsSaved);
  put("skipped", told->skipped ? 1.0 : 0.0);
  put("used_rewards", static_cast<double>(told->usedRewards));
  put("dropped_pairs", static_cast<double>(told->droppedPairs));
  put("gradient_norm", told->gradientNorm);
  put("step_norm", told->stepNorm);
  put("trust_region_radius", told->trustRegionRadius.value_or(kNaN));
  put("cma_sigma", told->cmaSigma.value_or(kNaN));
  put("seconds_evaluate", secondsBetween(stepStart, evaluated));
  put("seconds_update", secondsBetween(evaluated, updated));
  record.candidateRewards.push_back(rewardRow);
  record.stepModules.push_back(moduleIndices);
  record.stepSizes.push_back(sizeRow);

  StepProgress progress;
  progress.step = step;
  progress.steps = options.steps;
  progress.meanReward = mean;
  progress.bestReward = finite.empty() ? kNaN : finite.back();
  progress.failedCompilations = failed;
  progress.skipped = told->skipped;
  progress.cacheLookups = result.cacheLookups;
  progress.cacheHits = result.cacheHits;

  const int64_t done = step + 1;
  const bool last = done >= options.steps;
  if (validationModules.empty()) {
    if (!finite.empty() && told->currentValue > bestValue) {
      bestValue = told->currentValue;
      record.bestPolicy = results::PolicySnapshot{step, policyJson(before)};
      record.bestPolicyMetric = "training: mean reward around the point";
      record.bestPolicyValue = bestValue;
    }
  } else if (done % options.validationInterval == 0 || last) {
    std::optional<double> value = validate(done);
    progress.validationTotalReward = value;
    if (value && *value > bestValue) {
      bestValue = *value;
      record.bestPolicy = results::PolicySnapshot{done, policyJson(optimizer->point())};
      record.bestPolicyMetric = "validation: total reward (1 - sum size / sum -Oz size)";
      record.bestPolicyValue = bestValue;
    }
  }
  std::string currentJson = policyJson(optimizer->point());
  if (done % options.snapshotInterval == 0 || last)
    record.snapshots.push_back({done, currentJson});
  if (last)
    record.finalPolicy = results::PolicySnapshot{done, currentJson};

  const double elapsed = elapsedBefore + secondsBetween(runStart, Clock::now());
  put("seconds_step", secondsBetween(stepStart, Clock::now()));
  put("elapsed_seconds", elapsed);
  results::Checkpoint checkpoint;
  checkpoint.step = done;
  checkpoint.optimizer = std::string(optimizerKindName(optimizer->kind()));
  checkpoint.optimizerState = optimizer->saveState();
  checkpoint.policyJson = std::move(currentJson);
  checkpoint.trainerState.setReal("best_value", bestValue);
  checkpoint.elapsedSeconds = elapsed;
  record.checkpoint = std::move(checkpoint);

  progress.elapsedSeconds = elapsed;
  double stepSeconds = secondsBetween(stepStart, Clock::now());
  progress.evaluationsPerSecond =
      stepSeconds > 0 ? static_cast<double>(result.jobs.size()) / stepSeconds : 0;
  progress.etaSeconds = stepSeconds * static_cast<double>(options.steps - done);
  return progress;
}

Status EsTrainer::Impl::save() {
  return results::writeRunFile(options.output, record);
}

EsTrainer::EsTrainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EsTrainer::EsTrainer(EsTrainer&&) noexcept = default;
EsTrainer& EsTrainer::operator=(EsTrainer&&) noexcept = default;
EsTrainer::~EsTrainer() = default;

const EsTrainerOptions& EsTrainer::options() const {
  return impl_->options;
}
const results::RunRecord& EsTrainer::record() const {
  return impl_->record;
}

Expected<EsTrainer> EsTrainer::create(EsTrainerOptions options) {
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
  Eigen::VectorXd parameters;
  if (Status s = impl->initialisePolicy(parameters); !s)
    return s.error();
  if (Status s = impl->createOptimizer(parameters); !s)
    return s.error();
  r.attributes["compiler"] = impl->evaluator->compilerIdentity();
  r.attributes["corpus"] = impl->options.corpus.string();
  if (impl->options.validationCorpus)
    r.attributes["validation_corpus"] = impl->options.validationCorpus->string();
  r.attributes["policy"] = impl->structure->describe();
  r.attributes["parameters"] = std::to_string(impl->structure->parameterCount());
  r.attributes["optimizer"] = std::string(optimizerKindName(impl->options.optimizer));
  std::error_code ec;
  if (impl->options.output.has_parent_path())
    fs::create_directories(impl->options.output.parent_path(), ec);
  r.snapshots.push_back({0, impl->policyJson(impl->optimizer->point())});
  if (Status s = impl->save(); !s)
    return s.error();
  return EsTrainer(std::move(impl));
}

Expected<EsTrainer> EsTrainer::resume(EsTrainerOptions options) {
  if (Status valid = options.validate(); !valid)
    return valid.error();
  Expected<results::RunRecord> stored = results::readRunFile(options.output);
  if (!stored)
    return stored.error();
  const std::string file = options.output.string();
  if (stored->trainer != kTrainerName)
    return makeError(file + ": written by " + stored->trainer + ", not es-train");
  if (!stored->checkpoint)
    return makeError(file + ": has no checkpoint to resume from");
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  if (Status s = impl->loadData(); !s)
    return s.error();
  if (impl->record.moduleNames != stored->moduleNames)
    return makeError(file + ": the corpus's modules differ from the run's; resume with the "
                            "corpus the run was started on");
  // The policy's structure (features, vocabulary, architecture) comes from
  // the checkpoint, never rebuilt, so the resumed run computes exactly what
  // the original would have.
  const results::Checkpoint& checkpoint = *stored->checkpoint;
  Expected<std::unique_ptr<policies::Policy>> policy =
      policies::policyFromJson(checkpoint.policyJson, file + ": /checkpoint policy");
  if (!policy)
    return policy.error();
  auto* mlp = dynamic_cast<policies::MlpPolicy*>(policy->get());
  if (!mlp)
    return makeError(file + ": the checkpoint's policy is not an MLP");
  impl->structure = mlp->structure();
  Eigen::VectorXd parameters = Eigen::Map<const Eigen::VectorXd>(
      mlp->parameters().data(), static_cast<Eigen::Index>(mlp->parameterCount()));
  if (Status s = impl->createOptimizer(parameters); !s)
    return s.error();
  if (checkpoint.optimizer != optimizerKindName(impl->optimizer->kind()))
    return makeError(file + ": the checkpoint is of optimizer " + checkpoint.optimizer +
                     ", the options say " +
                     std::string(optimizerKindName(impl->optimizer->kind())));
  if (Status s = impl->optimizer->restoreState(checkpoint.optimizerState); !s)
    return makeError(file + ": " + s.error().message);
  impl->record = stored.take();
  impl->elapsedBefore = checkpoint.elapsedSeconds;
  impl->bestValue = checkpoint.trainerState.realOr("best_value", impl->bestValue);
  // Rows a killed run wrote after its checkpoint cannot exist (the file is
  // rewritten whole), but a checkpoint behind the rows would: refuse it.
  if (static_cast<int64_t>(impl->record.steps()) != checkpoint.step)
    return makeError(file + ": the checkpoint (step " + std::to_string(checkpoint.step) +
                     ") disagrees with the " + std::to_string(impl->record.steps()) +
                     " recorded steps");
  return EsTrainer(std::move(impl));
}

Expected<EsTrainerSummary> EsTrainer::run(const ProgressCallback& progress,
                                          std::optional<int64_t> stopAfter) {
  Impl& impl = *impl_;
  const auto runStart = Clock::now();
  EsTrainerSummary summary;
  summary.output = impl.options.output;
  while (impl.optimizer->step() < impl.options.steps) {
    if (stopAfter && summary.stepsRun >= *stopAfter)
      break;
    Expected<StepProgress> step = impl.runStep(runStart);
    if (!step)
      return step.error();
    if (Status saved = impl.save(); !saved)
      return saved.error();
    ++summary.stepsRun;
    summary.compilations += static_cast<uint64_t>(impl.record.stepScalars["compilations"].back());
    summary.failedCompilations +=
        static_cast<uint64_t>(impl.record.stepScalars["failed_compilations"].back());
    summary.skippedSteps += step->skipped;
    summary.cacheLookups += step->cacheLookups;
    summary.cacheHits += step->cacheHits;
    summary.cacheSecondsSaved += impl.record.stepScalars["cache_seconds_saved"].back();
    summary.finalMeanReward = step->meanReward;
    if (progress)
      progress(*step);
  }
  summary.stepsTotal = impl.optimizer->step();
  summary.seconds = secondsBetween(runStart, Clock::now());
  if (!impl.validationModules.empty() && impl.bestValue > -std::numeric_limits<double>::infinity())
    summary.bestValidationTotalReward = impl.bestValue;
  return summary;
}

} // namespace mlgo::training
