#include "mlgo/training/BcTrainer.h"

#include "TrainerSupport.h"

#include "mlgo/corpus/Corpus.h"
#include "mlgo/policies/PolicyFile.h"
#include "mlgo/policies/Vocabulary.h"
#include "mlgo/results/TraceFile.h"
#include "mlgo/rl/Decisions.h"
#include "mlgo/rl/Losses.h"
#include "mlgo/rl/MiniBatches.h"
#include "mlgo/support/Random.h"
#include "mlgo/training/TraceRecording.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace mlgo::training {

using namespace detail;
using namespace rl;

namespace {

constexpr const char* kTrainerName = "bc-train";
constexpr const char* kOptimizerName = "adam";
constexpr const char* kBestAccuracy = "best_heldout_accuracy";
constexpr const char* kBestLoss = "best_heldout_loss";
constexpr const char* kBestEpoch = "best_epoch";
constexpr uint64_t kSplitTag = 0x73706c6974; // "split"
constexpr uint64_t kShuffleTag = 0x6263;     // "bc"

fs::path defaultRecordedTrace(const fs::path& output) {
  return output.parent_path() / (output.stem().string() + ".trace.h5");
}

} // namespace

Status BcTrainerOptions::validate() const {
  if (traces.empty() && !corpus)
    return makeError("traces: no trace file and no corpus given");
  if (!(heldoutFraction >= 0 && heldoutFraction < 1))
    return makeError("heldoutFraction: must be in [0, 1), got " + std::to_string(heldoutFraction));
  if (vocabularyQuantiles < 2)
    return makeError("vocabularyQuantiles: must be at least 2, got " +
                     std::to_string(vocabularyQuantiles));
  if (Status s = mlp.validate(); !s)
    return makeError("mlp." + s.error().message);
  if (Status s = adam.validate("adam"); !s)
    return s;
  if (minibatchSize < 1)
    return makeError("minibatchSize: must be at least 1");
  if (!(l2 >= 0) || !std::isfinite(l2))
    return makeError("l2: must be finite and non-negative, got " + std::to_string(l2));
  if (epochs < 1)
    return makeError("epochs: must be at least 1, got " + std::to_string(epochs));
  if (snapshotInterval < 1)
    return makeError("snapshotInterval: must be at least 1, got " +
                     std::to_string(snapshotInterval));
  if (output.empty())
    return makeError("output: no run file given");
  if (policyOutput.empty())
    return makeError("policyOutput: no policy file given");
  if (corpus)
    if (Status s = evaluator.validate(); !s)
      return makeError("evaluator." + s.error().message);
  return Status::ok();
}

struct BcTrainer::Impl {
  BcTrainerOptions options;
  std::vector<results::Trace> traces;
  std::vector<std::string> traceNames; // file of each trace, for errors
  // Module names of each set, sorted; record.moduleNames / validationModuleNames.
  std::vector<std::string> trainingModules;
  std::vector<std::string> heldoutModules;
  DecisionSet training;
  DecisionSet heldout;
  std::vector<size_t> heldoutRows; // 0..heldout.rows()-1
  std::vector<size_t> trainingRows;
  std::optional<policies::MlpPolicy> policy;
  Eigen::VectorXd parameters;
  AdamState adam;
  RowParallelism parallel;
  results::RunRecord record;
  int64_t epoch = 0; // epochs completed
  double elapsedBefore = 0;
  double bestAccuracy = -1;
  double bestLoss = std::numeric_limits<double>::infinity();
  int64_t bestEpoch = -1;

  Status loadTraces();
  void split();
  Status createPolicy();
  Status gatherDecisions();
  Expected<BcProgress> runEpoch(Clock::time_point runStart);
  void checkpoint(double elapsed);
  Status save() { return results::writeRunFile(options.output, record); }
};

Status BcTrainer::Impl::loadTraces() {
  for (const fs::path& path : options.traces) {
    Expected<results::Trace> trace = results::readTrace(path);
    if (!trace)
      return trace.error();
    traces.push_back(trace.take());
    traceNames.push_back(path.string());
  }
  if (!options.corpus)
    return Status::ok();
  const fs::path recording = options.recordedTrace.value_or(defaultRecordedTrace(options.output));
  // A resumed run (or a rerun) reuses the recording: the heuristic's
  // decisions on an unchanged corpus do not change.
  if (fs::exists(recording)) {
    Expected<results::Trace> trace = results::readTrace(recording);
    if (trace && trace->attributes.count("corpus") &&
        trace->attributes.at("corpus") == options.corpus->string()) {
      traces.push_back(trace.take());
      traceNames.push_back(recording.string());
      record.attributes["recorded_trace"] = recording.string() + " (reused)";
      return Status::ok();
    }
  }
  Expected<corpus::Corpus> loaded = corpus::Corpus::load(*options.corpus);
  if (!loaded)
    return loaded.error();
  Expected<std::unique_ptr<evaluators::Evaluator>> evaluator =
      evaluators::Evaluator::create(options.evaluator, evaluators::CompilerTask::inliningForSize());
  if (!evaluator)
    return evaluator.error();
  std::vector<const corpus::ModuleSpec*> modules;
  for (const corpus::ModuleSpec& m : loaded->modules())
    modules.push_back(&m);
  evaluators::EvaluationResult result = recordHeuristic(**evaluator, modules, true);
  std::error_code ec;
  if (recording.has_parent_path())
    fs::create_directories(recording.parent_path(), ec);
  Status written = writeTrace(recording, result, 0, modules,
                              {{"policy", "heuristic"},
                               {"corpus", options.corpus->string()},
                               {"compiler", (*evaluator)->compilerIdentity()}});
  if (!written)
    return written.error();
  Expected<results::Trace> trace = results::readTrace(recording);
  if (!trace)
    return trace.error();
  traces.push_back(trace.take());
  traceNames.push_back(recording.string());
  record.attributes["recorded_trace"] = recording.string();
  return Status::ok();
}

void BcTrainer::Impl::split() {
  std::set<std::string> names;
  for (const results::Trace& trace : traces)
    for (const results::TraceModule& module : trace.modules)
      if (module.ok())
        names.insert(module.name);
  std::vector<std::string> sorted(names.begin(), names.end());
  size_t held = 0;
  if (options.heldoutFraction > 0 && sorted.size() >= 2)
    held = std::clamp<size_t>(
        static_cast<size_t>(std::llround(options.heldoutFraction * double(sorted.size()))), 1,
        sorted.size() - 1);
  std::vector<size_t> order = permutation(sorted.size(), deriveKey({options.seed, kSplitTag}));
  trainingModules.clear();
  heldoutModules.clear();
  for (size_t i = 0; i < order.size(); ++i)
    (i < held ? heldoutModules : trainingModules).push_back(sorted[order[i]]);
  std::sort(trainingModules.begin(), trainingModules.end());
  std::sort(heldoutModules.begin(), heldoutModules.end());
}

Status BcTrainer::Impl::createPolicy() {
  const std::vector<policies::TensorSpec>& specs = traces.front().featureSpecs;
  Expected<policies::Vocabulary> vocabulary = [&]() -> Expected<policies::Vocabulary> {
    if (options.vocabulary)
      return policies::readVocabularyDirectory(*options.vocabulary);
    // From the training decisions only: held-out code stays unseen.
    std::set<std::string, std::less<>> train(trainingModules.begin(), trainingModules.end());
    policies::FeatureSamples samples;
    for (const results::Trace& trace : traces) {
      size_t column = 0;
      for (const policies::TensorSpec& spec : trace.featureSpecs) {
        if (spec.elementCount() == 1)
          for (size_t d = 0; d < trace.decisions(); ++d) {
            const results::TraceModule& module =
                trace.modules[static_cast<size_t>(trace.decisionModules[d])];
            if (module.ok() && train.count(module.name))
              samples[spec.name].push_back(trace.row(d)[column]);
          }
        column += spec.elementCount();
      }
    }
    policies::VocabularyOptions vocabularyOptions;
    vocabularyOptions.quantiles = options.vocabularyQuantiles;
    return policies::buildVocabulary(samples, vocabularyOptions);
  }();
  if (!vocabulary)
    return vocabulary.error();
  record.attributes["vocabulary"] =
      options.vocabulary ? options.vocabulary->string() : "built from the training decisions";
  Expected<std::shared_ptr<const policies::MlpStructure>> structure =
      policies::MlpStructure::create(specs, *vocabulary, options.mlp);
  if (!structure)
    return structure.error();
  policy.emplace(policies::MlpPolicy::initialised(*structure, options.seed));
  return Status::ok();
}

Status BcTrainer::Impl::gatherDecisions() {
  std::set<std::string, std::less<>> held(heldoutModules.begin(), heldoutModules.end());
  std::map<std::string, int64_t, std::less<>> trainIndex, heldIndex;
  for (size_t i = 0; i < trainingModules.size(); ++i)
    trainIndex[trainingModules[i]] = static_cast<int64_t>(i);
  for (size_t i = 0; i < heldoutModules.size(); ++i)
    heldIndex[heldoutModules[i]] = static_cast<int64_t>(i);
  const size_t actions = policy->structure()->actionCount();
  for (DecisionSet* set : {&training, &heldout}) {
    *set = DecisionSet();
    set->width = policy->structure()->featureCount();
  }
  for (size_t t = 0; t < traces.size(); ++t) {
    const results::Trace& trace = traces[t];
    Expected<FeatureGather> gather = FeatureGather::create(trace.featureSpecs, policy->inputs());
    if (!gather)
      return makeError(traceNames[t] + ": " + gather.error().message);
    for (size_t d = 0; d < trace.decisions(); ++d) {
      const results::TraceModule& module =
          trace.modules[static_cast<size_t>(trace.decisionModules[d])];
      const int64_t label = trace.defaultDecisions[d];
      if (!module.ok() || label < 0 || static_cast<size_t>(label) >= actions)
        continue;
      const bool isHeld = held.count(module.name) > 0;
      DecisionSet& set = isHeld ? heldout : training;
      const size_t first = set.features.size();
      set.features.resize(first + set.width);
      gather->gather(trace.row(d), set.features.data() + first);
      set.actions.push_back(label);
      set.modules.push_back(isHeld ? heldIndex.at(module.name) : trainIndex.at(module.name));
    }
  }
  if (training.rows() == 0)
    return makeError("no training decisions: the traces have no ok module with decisions "
                     "labelled by the heuristic");
  trainingRows.resize(training.rows());
  for (size_t r = 0; r < trainingRows.size(); ++r)
    trainingRows[r] = r;
  heldoutRows.resize(heldout.rows());
  for (size_t r = 0; r < heldoutRows.size(); ++r)
    heldoutRows[r] = r;
  return Status::ok();
}

void BcTrainer::Impl::checkpoint(double elapsed) {
  results::Checkpoint c;
  c.step = epoch;
  c.optimizer = kOptimizerName;
  adam.saveTo(c.optimizerState);
  c.policyJson = policyJson(*policy);
  c.trainerState.setReal(kBestAccuracy, bestAccuracy);
  c.trainerState.setReal(kBestLoss, bestLoss);
  c.trainerState.setInteger(kBestEpoch, bestEpoch);
  c.elapsedSeconds = elapsed;
  record.checkpoint = std::move(c);
}

Expected<BcProgress> BcTrainer::Impl::runEpoch(Clock::time_point runStart) {
  const auto start = Clock::now();
  const int64_t current = epoch;
  std::vector<size_t> order = permutation(
      training.rows(), deriveKey({options.seed, static_cast<uint64_t>(current), kShuffleTag}));
  std::vector<double> gradient(policy->parameterCount());
  double batchLossSum = 0, gradientNormSum = 0;
  size_t batches = 0;
  for (const std::vector<size_t>& batch : miniBatches(order, options.minibatchSize)) {
    std::fill(gradient.begin(), gradient.end(), 0.0);
    ClassificationStats stats = crossEntropy(*policy, training, batch, gradient, parallel);
    double penalty = l2Penalty(*policy, options.l2, gradient);
    AdamUpdate update = adamStep(options.adam, adam, gradient,
                                 {parameters.data(), static_cast<size_t>(parameters.size())});
    policy->setParameters({parameters.data(), static_cast<size_t>(parameters.size())});
    batchLossSum += stats.loss + penalty;
    gradientNormSum += update.gradientNorm;
    ++batches;
  }
  ++epoch;
  const auto trained = Clock::now();

  ClassificationStats train = crossEntropy(*policy, training, trainingRows, {}, parallel);
  ClassificationStats held = crossEntropy(*policy, heldout, heldoutRows, {}, parallel);
  const bool hasHeldout = held.rows > 0;
  auto& s = record.stepScalars;
  auto put = [&](const char* name, double value) { s[name].push_back(value); };
  auto share = [](size_t part, size_t whole) {
    return whole ? static_cast<double>(part) / static_cast<double>(whole) : kNaN;
  };
  put("minibatch_loss_mean", batches ? batchLossSum / double(batches) : kNaN);
  put("gradient_norm", batches ? gradientNormSum / double(batches) : kNaN);
  put("updates", static_cast<double>(batches));
  put("train_loss", train.loss);
  put("train_accuracy", train.accuracy());
  put("heldout_loss", hasHeldout ? held.loss : kNaN);
  put("heldout_accuracy", hasHeldout ? held.accuracy() : kNaN);
  put("train_predicted_inline_share", share(train.predictedPositive, train.rows));
  put("heldout_predicted_inline_share", share(held.predictedPositive, held.rows));
  put("heldout_inline_share", share(held.labelledPositive, held.rows));
  put("seconds_train", secondsBetween(start, trained));
  put("seconds_evaluate", secondsBetween(trained, Clock::now()));
  record.candidateRewards.emplace_back(); // BC compiles nothing: no candidates

  const int64_t done = epoch;
  const bool last = done >= options.epochs;
  std::string currentJson = policyJson(*policy);
  if (hasHeldout && (held.accuracy() > bestAccuracy ||
                     (held.accuracy() == bestAccuracy && held.loss < bestLoss))) {
    bestAccuracy = held.accuracy();
    bestLoss = held.loss;
    bestEpoch = done;
    record.bestPolicy = results::PolicySnapshot{done, currentJson};
    record.bestPolicyMetric = "held-out agreement with the heuristic (accuracy)";
    record.bestPolicyValue = bestAccuracy;
  }
  if (done % options.snapshotInterval == 0 || last)
    record.snapshots.push_back({done, currentJson});
  if (last)
    record.finalPolicy = results::PolicySnapshot{done, currentJson};
  const double elapsed = elapsedBefore + secondsBetween(runStart, Clock::now());
  put("seconds_step", secondsBetween(start, Clock::now()));
  put("elapsed_seconds", elapsed);
  checkpoint(elapsed);

  BcProgress progress;
  progress.epoch = current;
  progress.epochs = options.epochs;
  progress.trainLoss = train.loss;
  progress.trainAccuracy = train.accuracy();
  if (hasHeldout) {
    progress.heldoutLoss = held.loss;
    progress.heldoutAccuracy = held.accuracy();
  }
  progress.elapsedSeconds = elapsed;
  progress.etaSeconds =
      secondsBetween(start, Clock::now()) * static_cast<double>(options.epochs - done);
  return progress;
}

BcTrainer::BcTrainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BcTrainer::BcTrainer(BcTrainer&&) noexcept = default;
BcTrainer& BcTrainer::operator=(BcTrainer&&) noexcept = default;
BcTrainer::~BcTrainer() = default;

const BcTrainerOptions& BcTrainer::options() const {
  return impl_->options;
}
const results::RunRecord& BcTrainer::record() const {
  return impl_->record;
}
const policies::MlpPolicy& BcTrainer::policy() const {
  return *impl_->policy;
}

namespace {

// The module tables of the record: names and the -Oz sizes the traces know.
void describeModules(const std::vector<results::Trace>& traces,
                     const std::vector<std::string>& names, std::vector<std::string>& outNames,
                     std::vector<uint64_t>& outBaselines) {
  std::map<std::string, uint64_t, std::less<>> baselines;
  for (const results::Trace& trace : traces)
    for (const results::TraceModule& module : trace.modules)
      if (module.baselineBytes)
        baselines.emplace(module.name, *module.baselineBytes);
  outNames = names;
  outBaselines.clear();
  for (const std::string& name : names) {
    auto it = baselines.find(name);
    outBaselines.push_back(it == baselines.end() ? 0 : it->second);
  }
}

} // namespace

Expected<BcTrainer> BcTrainer::create(BcTrainerOptions options) {
  if (Status valid = options.validate(); !valid)
    return valid.error();
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  impl->parallel = RowParallelism(impl->options.evaluator.workers);
  results::RunRecord& r = impl->record;
  r.trainer = kTrainerName;
  r.configToml = impl->options.configToml;
  r.config = impl->options.configValues;
  if (Status s = impl->loadTraces(); !s)
    return s.error();
  for (size_t t = 1; t < impl->traces.size(); ++t)
    if (impl->traces[t].featureSpecs != impl->traces[0].featureSpecs)
      return makeError(impl->traceNames[t] + ": its features differ from " + impl->traceNames[0] +
                       "'s");
  impl->split();
  if (Status s = impl->createPolicy(); !s)
    return s.error();
  if (Status s = impl->gatherDecisions(); !s)
    return s.error();
  const policies::MlpPolicy& policy = *impl->policy;
  impl->parameters = Eigen::Map<const Eigen::VectorXd>(
      policy.parameters().data(), static_cast<Eigen::Index>(policy.parameterCount()));
  impl->adam = AdamState::zeros(policy.parameterCount());
  describeModules(impl->traces, impl->trainingModules, r.moduleNames, r.baselineSizes);
  describeModules(impl->traces, impl->heldoutModules, r.validationModuleNames,
                  r.validationBaselineSizes);
  std::string traceList;
  for (const std::string& name : impl->traceNames)
    traceList += (traceList.empty() ? "" : ", ") + name;
  r.attributes["traces"] = traceList;
  if (impl->options.corpus)
    r.attributes["corpus"] = impl->options.corpus->string();
  r.attributes["policy"] = policy.describe();
  r.attributes["parameters"] = std::to_string(policy.parameterCount());
  r.attributes["optimizer"] = kOptimizerName;
  r.attributes["initial_policy"] = "random (seed " + std::to_string(impl->options.seed) + ")";
  r.attributes["training_decisions"] = std::to_string(impl->training.rows());
  r.attributes["heldout_decisions"] = std::to_string(impl->heldout.rows());
  r.attributes["label"] = "inlining_default (the heuristic's decision)";
  std::error_code ec;
  if (impl->options.output.has_parent_path())
    fs::create_directories(impl->options.output.parent_path(), ec);
  r.snapshots.push_back({0, policyJson(policy)});
  if (Status s = impl->save(); !s)
    return s.error();
  return BcTrainer(std::move(impl));
}

Expected<BcTrainer> BcTrainer::resume(BcTrainerOptions options) {
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
    return makeError(file + ": the checkpoint (epoch " + std::to_string(checkpoint.step) +
                     ") disagrees with the " + std::to_string(stored->steps()) +
                     " recorded epochs");
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  impl->parallel = RowParallelism(impl->options.evaluator.workers);
  if (Status s = impl->loadTraces(); !s)
    return s.error();
  impl->split();
  if (impl->trainingModules != stored->moduleNames ||
      impl->heldoutModules != stored->validationModuleNames)
    return makeError(file + ": the traces' modules split differently from the run's; resume "
                            "with the traces the run was started on");
  Expected<policies::MlpPolicy> policy = mlpFromJson(checkpoint.policyJson, file + ": /checkpoint");
  if (!policy)
    return policy.error();
  impl->policy.emplace(policy.take());
  if (Status s = impl->gatherDecisions(); !s)
    return s.error();
  impl->parameters = Eigen::Map<const Eigen::VectorXd>(
      impl->policy->parameters().data(), static_cast<Eigen::Index>(impl->policy->parameterCount()));
  Expected<AdamState> adam =
      AdamState::restore(checkpoint.optimizerState, impl->policy->parameterCount());
  if (!adam)
    return makeError(file + ": " + adam.error().message);
  impl->adam = adam.take();
  impl->bestAccuracy = checkpoint.trainerState.realOr(kBestAccuracy, -1);
  impl->bestLoss =
      checkpoint.trainerState.realOr(kBestLoss, std::numeric_limits<double>::infinity());
  if (Expected<int64_t> bestEpoch = checkpoint.trainerState.integer(kBestEpoch))
    impl->bestEpoch = *bestEpoch;
  impl->epoch = checkpoint.step;
  impl->elapsedBefore = checkpoint.elapsedSeconds;
  impl->record = stored.take();
  return BcTrainer(std::move(impl));
}

Expected<BcTrainerSummary> BcTrainer::run(const ProgressCallback& progress,
                                          std::optional<int64_t> stopAfter) {
  Impl& impl = *impl_;
  const auto runStart = Clock::now();
  BcTrainerSummary summary;
  summary.output = impl.options.output;
  summary.trainingModules = impl.trainingModules.size();
  summary.heldoutModules = impl.heldoutModules.size();
  summary.trainingDecisions = impl.training.rows();
  summary.heldoutDecisions = impl.heldout.rows();
  while (impl.epoch < impl.options.epochs) {
    if (stopAfter && summary.epochsRun >= *stopAfter)
      break;
    Expected<BcProgress> step = impl.runEpoch(runStart);
    if (!step)
      return step.error();
    if (Status saved = impl.save(); !saved)
      return saved.error();
    ++summary.epochsRun;
    if (progress)
      progress(*step);
  }
  summary.epochsTotal = impl.epoch;
  const auto& s = impl.record.stepScalars;
  if (auto it = s.find("train_accuracy"); it != s.end() && !it->second.empty())
    summary.finalTrainAccuracy = it->second.back();
  if (impl.heldout.rows() > 0) {
    if (auto it = s.find("heldout_accuracy"); it != s.end() && !it->second.empty())
      summary.finalHeldoutAccuracy = it->second.back();
    size_t positive = 0;
    for (int64_t label : impl.heldout.actions)
      positive += label == 1;
    summary.heldoutMajorityAccuracy =
        static_cast<double>(std::max(positive, impl.heldout.rows() - positive)) /
        static_cast<double>(impl.heldout.rows());
  }
  if (impl.bestEpoch >= 0) {
    summary.bestHeldoutAccuracy = impl.bestAccuracy;
    summary.bestEpoch = impl.bestEpoch;
  }
  if (impl.epoch >= impl.options.epochs) {
    std::error_code ec;
    if (impl.options.policyOutput.has_parent_path())
      fs::create_directories(impl.options.policyOutput.parent_path(), ec);
    if (Status saved = policies::savePolicy(*impl.policy, impl.options.policyOutput); !saved)
      return saved.error();
    summary.policyOutput = impl.options.policyOutput;
  }
  summary.seconds = secondsBetween(runStart, Clock::now());
  return summary;
}

} // namespace mlgo::training
