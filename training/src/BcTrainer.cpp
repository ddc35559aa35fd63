#include "mlgo/training/BcTrainer.h"

#include "mlgo/support/OptionSchema.h"

#include "TrainerSupport.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/policies/PolicyFile.h"
#include "mlgo/policies/PolicyLocation.h"
#include "mlgo/policies/Vocabulary.h"
#include "mlgo/results/TraceFile.h"
#include "mlgo/rl/Decisions.h"
#include "mlgo/rl/MiniBatches.h"
#include "mlgo/support/Random.h"
#include "mlgo/training/TraceRecording.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace fs = std::filesystem;

namespace mlgo::training {

using namespace detail;

namespace {

constexpr uint64_t kSplitTag = 0x73706c6974; // "split"
constexpr uint64_t kShuffleTag = 0x6263;     // "bc"

fs::path defaultRecordedTrace(const fs::path& output) {
  return output.parent_path() / (output.stem().string() + ".trace.h5");
}

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

// Behavioural cloning on the trainer skeleton: a step is one epoch.
class BcAlgorithm final : public TrainingAlgorithm {
public:
  BcAlgorithm(const BcTrainerOptions& options, evaluators::Scorer* scorer)
      : options_(options), scorer_(scorer), parallel_(options.run.threads) {}

  std::string_view trainerName() const override { return "bc-train"; }
  std::string optimizerName() const override { return "adam"; }
  BestPolicyKeys bestPolicyKeys() const override {
    return {"best_heldout_accuracy", "best_heldout_loss", "best_epoch", -1};
  }
  Status loadData(results::RunRecord& record) override;
  Status initialise(results::RunRecord& record) override;
  Status restore(const results::Checkpoint& checkpoint, const std::string& origin) override;
  void saveState(StateArchive& optimizer, StateArchive&) const override { adam_.saveTo(optimizer); }
  const policies::MlpPolicy& policy() const override { return *policy_; }
  Expected<std::optional<BestCandidate>> runStep(int64_t step, results::RunRecord& record) override;

  const BcEpoch& lastEpoch() const { return last_; }
  const rl::DecisionSet& training() const { return training_; }
  const rl::DecisionSet& heldout() const { return heldout_; }

private:
  Status readTrace(const fs::path& path);
  Status loadTraces(results::RunRecord& record);
  Status recordCorpus(const fs::path& recording);
  void split();
  Expected<policies::Vocabulary> trainingVocabulary() const;
  // The first trace's attribute (TraceRecording's taskAttributes), or "".
  std::string traceAttribute(std::string_view name) const {
    if (traces_.empty())
      return "";
    auto it = traces_.front().attributes.find(name);
    return it == traces_.front().attributes.end() ? "" : it->second;
  }
  // The task that recorded the traces, as far as the policy needs it; older
  // traces, without these attributes, are the inliner's.
  evaluators::CompilerTask tracesTask() const {
    evaluators::CompilerTask task = evaluators::CompilerTask::inliningForSize();
    if (!traces_.empty() && traces_.front().attributes.count("default_feature")) {
      task.defaultDecisionFeature = traceAttribute("default_feature");
      task.candidateMask = traceAttribute("candidate_mask");
    }
    return task;
  }
  // The policy's options: the task's, and for imitated tried decisions of a
  // one-way search the compiler's other decisions kept (kFlipsFromAttribute).
  Expected<policies::MlpOptions> policyOptions(results::RunRecord& record) const;
  Status gatherDecisions();
  // A decision's loss weight (deviationWeight, outcomeWeights).
  double decisionWeight(const results::TraceModule& module, bool deviates) const;

  const BcTrainerOptions& options_;
  evaluators::Scorer* scorer_;
  rl::RowParallelism parallel_;
  std::vector<results::Trace> traces_;
  std::vector<std::string> traceNames_; // file of each trace, for errors
  // Module names of each set, sorted: record.moduleNames / validationModuleNames.
  std::vector<std::string> trainingModules_;
  std::vector<std::string> heldoutModules_;
  rl::DecisionSet training_;
  rl::DecisionSet heldout_;
  std::vector<size_t> trainingRows_; // 0..training_.rows()-1
  std::vector<size_t> heldoutRows_;
  std::optional<policies::MlpPolicy> policy_;
  rl::AdamState adam_;
  BcEpoch last_;
};

Status BcAlgorithm::readTrace(const fs::path& path) {
  Expected<results::Trace> trace = results::readTrace(path);
  if (!trace)
    return trace.error();
  traces_.push_back(trace.take());
  traceNames_.push_back(path.string());
  return Status::ok();
}

// Compiles every module of the corpus under the heuristic and writes the
// decisions to `recording`.
Status BcAlgorithm::recordCorpus(const fs::path& recording) {
  if (!scorer_)
    return makeError("corpus: recording " + options_.corpus->string() +
                     " needs an evaluator, and none was given");
  if (scorer_->task().defaultDecisionFeature.empty())
    return makeError("bc-train: the task " + scorer_->task().name +
                     " sends no decision of the compiler's own to learn from (LLVM 22 has no "
                     "include-default flag for it)");
  Expected<corpus::Corpus> loaded = corpus::Corpus::load(*options_.corpus);
  if (!loaded)
    return loaded.error();
  std::vector<const corpus::ModuleSpec*> modules;
  for (const corpus::ModuleSpec& m : loaded->modules())
    modules.push_back(&m);
  evaluators::EvaluationResult result = recordHeuristic(*scorer_, modules, true);
  std::error_code ec;
  if (recording.has_parent_path())
    fs::create_directories(recording.parent_path(), ec);
  results::TraceAttributes attributes{{"policy", "heuristic"},
                                      {"corpus", options_.corpus->string()},
                                      {"compiler", scorer_->compilerIdentity()}};
  attributes.merge(taskAttributes(scorer_->task()));
  return writeTrace(recording, result, 0, modules, attributes);
}

Status BcAlgorithm::loadTraces(results::RunRecord& record) {
  for (const fs::path& path : options_.traces)
    if (Status read = readTrace(path); !read)
      return read;
  if (!options_.corpus)
    return Status::ok();
  const fs::path recording =
      options_.recordedTrace.value_or(defaultRecordedTrace(options_.run.output));
  // A resumed run (or a rerun) reuses the recording: the heuristic's
  // decisions on an unchanged corpus do not change.
  if (fs::exists(recording)) {
    Expected<results::Trace> trace = results::readTrace(recording);
    if (trace && trace->attributes.count("corpus") &&
        trace->attributes.at("corpus") == options_.corpus->string()) {
      traces_.push_back(trace.take());
      traceNames_.push_back(recording.string());
      record.attributes["recorded_trace"] = recording.string() + " (reused)";
      return Status::ok();
    }
  }
  if (Status recorded = recordCorpus(recording); !recorded)
    return recorded;
  record.attributes["recorded_trace"] = recording.string();
  return readTrace(recording);
}

void BcAlgorithm::split() {
  std::set<std::string> names;
  for (const results::Trace& trace : traces_)
    for (const results::TraceModule& module : trace.modules)
      if (module.ok())
        names.insert(module.name);
  std::vector<std::string> sorted(names.begin(), names.end());
  size_t held = 0;
  if (options_.heldoutFraction > 0 && sorted.size() >= 2)
    held = std::clamp<size_t>(
        static_cast<size_t>(std::llround(options_.heldoutFraction * double(sorted.size()))), 1,
        sorted.size() - 1);
  std::vector<size_t> order =
      rl::permutation(sorted.size(), deriveKey({options_.run.seed, kSplitTag}));
  trainingModules_.clear();
  heldoutModules_.clear();
  for (size_t i = 0; i < order.size(); ++i)
    (i < held ? heldoutModules_ : trainingModules_).push_back(sorted[order[i]]);
  std::sort(trainingModules_.begin(), trainingModules_.end());
  std::sort(heldoutModules_.begin(), heldoutModules_.end());
}

Status BcAlgorithm::loadData(results::RunRecord& record) {
  if (Status loaded = loadTraces(record); !loaded)
    return loaded;
  for (size_t t = 1; t < traces_.size(); ++t)
    if (traces_[t].featureSpecs != traces_[0].featureSpecs)
      return makeError(traceNames_[t] + ": its features differ from " + traceNames_[0] + "'s");
  split();
  describeModules(traces_, trainingModules_, record.moduleNames, record.baselineSizes);
  describeModules(traces_, heldoutModules_, record.validationModuleNames,
                  record.validationBaselineSizes);
  std::string traceList;
  for (const std::string& name : traceNames_)
    traceList += (traceList.empty() ? "" : ", ") + name;
  record.attributes["traces"] = traceList;
  if (options_.corpus)
    record.attributes["corpus"] = options_.corpus->string();
  record.attributes["label"] =
      options_.teacher ? "the decisions of the teacher " + options_.teacher->string()
      : options_.imitateActions
          ? "actions (the decisions the traces' policies took)"
          : tracesTask().defaultDecisionFeature + " (the compiler's own decision)";
  return Status::ok();
}

// From the training decisions only: held-out code stays unseen.
Expected<policies::Vocabulary> BcAlgorithm::trainingVocabulary() const {
  if (options_.policy.vocabulary)
    return policies::readVocabularyDirectory(*options_.policy.vocabulary);
  std::set<std::string, std::less<>> train(trainingModules_.begin(), trainingModules_.end());
  policies::FeatureSamples samples;
  const std::string mask = traceAttribute("candidate_mask");
  for (const results::Trace& trace : traces_)
    for (size_t d = 0; d < trace.decisions(); ++d) {
      const results::TraceModule& module =
          trace.modules[static_cast<size_t>(trace.decisionModules[d])];
      if (module.ok() && train.count(module.name))
        addDecisionSamples(trace.featureSpecs, trace.row(d), mask, samples);
    }
  policies::VocabularyOptions vocabularyOptions;
  vocabularyOptions.quantiles = options_.policy.vocabularyQuantiles;
  return policies::buildVocabulary(samples, vocabularyOptions);
}

Expected<policies::MlpOptions> BcAlgorithm::policyOptions(results::RunRecord& record) const {
  policies::MlpOptions mlp = tracesTask().policyOptions(options_.policy.mlp);
  if (!options_.imitateActions)
    return mlp; // the labels are the compiler's or a teacher's, both ways
  // One way only if every trace comes from a search of the same direction:
  // one trace of both ways (e.g. -Oz's own decisions) shows the policy both.
  std::optional<std::string> from;
  for (const results::Trace& trace : traces_) {
    auto it = trace.attributes.find(kFlipsFromAttribute);
    if (it == trace.attributes.end() || (from && *from != it->second))
      return mlp;
    from = it->second;
  }
  if (*from != "0" && *from != "1")
    return makeError(traceNames_.front() + ": " + kFlipsFromAttribute + " is \"" + *from +
                     "\", not one of the two actions 0 and 1");
  const int kept = *from == "0" ? 1 : 0;
  if (mlp.residualMargin <= 0)
    return makeError("the traces (" + traceNames_.front() + (traces_.size() > 1 ? ", …" : "") +
                     ") are a one-way search's tried decisions (flips from " + *from +
                     "): their labels never show the compiler's decision " + std::to_string(kept) +
                     ", so the policy must keep it: give it a residual margin (--residual-margin)");
  if (!mlp.residualKept.empty() && mlp.residualKept != std::vector<int>{kept})
    return makeError("residual.kept: the traces are one-way (flips from " + *from +
                     "), so only the compiler's decision " + std::to_string(kept) + " can be kept");
  mlp.residualKept = {kept};
  record.attributes["kept"] =
      std::to_string(kept) + " (the traces' search flips from " + *from + " only)";
  return mlp;
}

Status BcAlgorithm::initialise(results::RunRecord& record) {
  Expected<policies::Vocabulary> vocabulary = trainingVocabulary();
  if (!vocabulary)
    return vocabulary.error();
  record.attributes["vocabulary"] = options_.policy.vocabulary
                                        ? options_.policy.vocabulary->string()
                                        : "built from the training decisions";
  Expected<policies::MlpOptions> mlp = policyOptions(record);
  if (!mlp)
    return mlp.error();
  Expected<std::shared_ptr<const policies::MlpStructure>> structure =
      policies::MlpStructure::create(traces_.front().featureSpecs, *vocabulary, *mlp);
  if (!structure)
    return structure.error();
  policy_.emplace(policies::MlpPolicy::initialised(*structure, options_.run.seed));
  if (Status gathered = gatherDecisions(); !gathered)
    return gathered;
  adam_ = rl::AdamState::zeros(policy_->parameterCount());
  record.attributes["initial_policy"] = "random (seed " + std::to_string(options_.run.seed) + ")";
  record.attributes["training_decisions"] = std::to_string(training_.rows());
  record.attributes["heldout_decisions"] = std::to_string(heldout_.rows());
  return Status::ok();
}

Status BcAlgorithm::restore(const results::Checkpoint& checkpoint, const std::string& origin) {
  Expected<policies::MlpPolicy> policy =
      mlpFromJson(checkpoint.policyJson, origin + ": /checkpoint");
  if (!policy)
    return policy.error();
  policy_.emplace(policy.take());
  if (Status gathered = gatherDecisions(); !gathered)
    return gathered;
  Expected<rl::AdamState> adam =
      rl::AdamState::restore(checkpoint.optimizerState, policy_->parameterCount());
  if (!adam)
    return makeError(origin + ": " + adam.error().message);
  adam_ = adam.take();
  return Status::ok();
}

double BcAlgorithm::decisionWeight(const results::TraceModule& module, bool deviates) const {
  double weight = deviates ? options_.deviationWeight : 1.0;
  if (options_.outcomeWeights) {
    const double bytes = std::abs(static_cast<double>(module.sizeBytes) -
                                  static_cast<double>(*module.baselineBytes));
    weight *= std::max(bytes, options_.outcomeWeightFloor);
  }
  return weight;
}

Status BcAlgorithm::gatherDecisions() {
  std::set<std::string, std::less<>> held(heldoutModules_.begin(), heldoutModules_.end());
  std::map<std::string, int64_t, std::less<>> trainIndex, heldIndex;
  for (size_t i = 0; i < trainingModules_.size(); ++i)
    trainIndex[trainingModules_[i]] = static_cast<int64_t>(i);
  for (size_t i = 0; i < heldoutModules_.size(); ++i)
    heldIndex[heldoutModules_[i]] = static_cast<int64_t>(i);
  const size_t actions = policy_->structure()->logitCount();
  std::unique_ptr<policies::Policy> teacher;
  if (options_.teacher) {
    // A file, or a shipped policy's name (--teacher inlining-oz).
    Expected<std::filesystem::path> file = policies::policyFileFor(options_.teacher->string());
    if (!file)
      return makeError("teacher: " + options_.teacher->string() + ": " + file.error().message);
    Expected<std::unique_ptr<policies::Policy>> loaded = policies::loadPolicy(*file);
    if (!loaded)
      return makeError("teacher: " + loaded.error().message);
    teacher = loaded.take();
  }
  std::vector<double> teacherInputs;
  RandomStream unused(0); // deterministic decisions draw nothing
  for (rl::DecisionSet* set : {&training_, &heldout_}) {
    *set = rl::DecisionSet();
    set->width = policy_->structure()->featureCount();
  }
  for (size_t t = 0; t < traces_.size(); ++t) {
    const results::Trace& trace = traces_[t];
    Expected<rl::FeatureGather> gather =
        rl::FeatureGather::create(trace.featureSpecs, policy_->inputs());
    if (!gather)
      return makeError(traceNames_[t] + ": " + gather.error().message);
    std::optional<rl::FeatureGather> teacherGather;
    if (teacher) {
      Expected<rl::FeatureGather> made =
          rl::FeatureGather::create(trace.featureSpecs, teacher->inputs());
      if (!made)
        return makeError(traceNames_[t] + ": teacher " + options_.teacher->string() + ": " +
                         made.error().message);
      teacherGather.emplace(made.take());
      teacherInputs.resize(teacherGather->width());
    }
    for (size_t d = 0; d < trace.decisions(); ++d) {
      const results::TraceModule& module =
          trace.modules[static_cast<size_t>(trace.decisionModules[d])];
      int64_t label = options_.imitateActions ? trace.actions[d] : trace.defaultDecisions[d];
      if (teacher && module.ok()) {
        teacherGather->gather(trace.row(d), teacherInputs.data());
        label =
            teacher->decide(teacherInputs, policies::DecisionMode::Deterministic, unused).advice;
      }
      if (!module.ok() || label < 0 || static_cast<size_t>(label) >= actions)
        continue;
      if (options_.outcomeWeights && !module.baselineBytes)
        continue;
      const bool isHeld = held.count(module.name) > 0;
      rl::DecisionSet& set = isHeld ? heldout_ : training_;
      const size_t first = set.features.size();
      set.features.resize(first + set.width);
      gather->gather(trace.row(d), set.features.data() + first);
      set.actions.push_back(label);
      if (options_.deviationWeight != 1 || options_.outcomeWeights) // then every row has one
        set.weights.push_back(decisionWeight(module, label != trace.defaultDecisions[d]));
      set.modules.push_back(isHeld ? heldIndex.at(module.name) : trainIndex.at(module.name));
    }
  }
  if (training_.rows() == 0)
    return makeError("no training decisions: the traces have no ok module with decisions "
                     "and a label");
  if (options_.outcomeWeights) {
    // Bytes as weights, scaled to a mean of 1 over the training rows so the
    // loss and its gradient keep the scale the optimiser's settings assume.
    double mean = 0;
    for (double w : training_.weights)
      mean += w / static_cast<double>(training_.rows());
    if (mean > 0)
      for (rl::DecisionSet* set : {&training_, &heldout_})
        for (double& w : set->weights)
          w /= mean;
  }
  trainingRows_.resize(training_.rows());
  std::iota(trainingRows_.begin(), trainingRows_.end(), size_t{0});
  heldoutRows_.resize(heldout_.rows());
  std::iota(heldoutRows_.begin(), heldoutRows_.end(), size_t{0});
  return Status::ok();
}

Expected<std::optional<BestCandidate>> BcAlgorithm::runStep(int64_t step,
                                                            results::RunRecord& record) {
  const auto start = Clock::now();
  std::vector<size_t> order = rl::permutation(
      training_.rows(), deriveKey({options_.run.seed, static_cast<uint64_t>(step), kShuffleTag}));
  last_ = BcEpoch{};
  last_.update = rl::bcEpoch(*policy_, training_, order, options_.update, adam_, parallel_);
  const auto trained = Clock::now();
  last_.train = rl::crossEntropy(*policy_, training_, trainingRows_, {}, parallel_);
  last_.heldout = rl::crossEntropy(*policy_, heldout_, heldoutRows_, {}, parallel_);
  last_.secondsTrain = secondsBetween(start, trained);
  last_.secondsEvaluate = secondsBetween(trained, Clock::now());
  bcStepColumns().append(last_, record);
  record.candidateRewards.emplace_back(); // BC compiles nothing: no candidates

  if (last_.heldout.rows == 0)
    return std::optional<BestCandidate>();
  if (options_.outcomeWeights)
    return std::optional<BestCandidate>(
        BestCandidate{step + 1, policyJson(*policy_), last_.heldout.weightedAccuracy(),
                      last_.heldout.loss, "held-out bytes decided right (weighted agreement)"});
  return std::optional<BestCandidate>(
      BestCandidate{step + 1, policyJson(*policy_), last_.heldout.accuracy(), last_.heldout.loss,
                    "held-out agreement with the heuristic (accuracy)"});
}

// What the summary says about the data and how well the policy clones it.
void describeData(const BcAlgorithm& bc, const results::RunRecord& record,
                  BcTrainerSummary& summary) {
  summary.trainingModules = record.moduleNames.size();
  summary.heldoutModules = record.validationModuleNames.size();
  summary.trainingDecisions = bc.training().rows();
  summary.heldoutDecisions = bc.heldout().rows();
  const auto& s = record.stepScalars;
  if (auto it = s.find("train_accuracy"); it != s.end() && !it->second.empty())
    summary.finalTrainAccuracy = it->second.back();
  if (const rl::DecisionSet& held = bc.heldout(); held.rows() > 0) {
    if (auto it = s.find("heldout_accuracy"); it != s.end() && !it->second.empty())
      summary.finalHeldoutAccuracy = it->second.back();
    // Always answering the most frequent held-out label (any number of actions).
    std::map<int64_t, size_t> counts;
    size_t majority = 0;
    for (int64_t label : held.actions)
      majority = std::max(majority, ++counts[label]);
    summary.heldoutMajorityAccuracy =
        static_cast<double>(majority) / static_cast<double>(held.rows());
  }
  if (summary.best) {
    summary.bestHeldoutAccuracy = summary.best->value;
    summary.bestEpoch = summary.best->step;
  }
}

} // namespace

Status BcTrainerOptions::validate() const {
  if (traces.empty() && !corpus)
    return makeError("traces: no trace file and no corpus given");
  if (!(outcomeWeightFloor >= 0) || !std::isfinite(outcomeWeightFloor))
    return makeError("outcomeWeightFloor: must be a finite number >= 0, got " +
                     std::to_string(outcomeWeightFloor));
  if (!(deviationWeight > 0) || !std::isfinite(deviationWeight))
    return makeError("deviationWeight: must be a finite number > 0, got " +
                     std::to_string(deviationWeight));
  if (!(heldoutFraction >= 0 && heldoutFraction < 1))
    return makeError("heldoutFraction: must be in [0, 1), got " + std::to_string(heldoutFraction));
  if (policy.initialPolicy)
    return makeError("policy.initialPolicy: behavioural cloning starts from random weights");
  if (teacher && (imitateActions || outcomeWeights))
    return makeError("teacher: the labels are the teacher's decisions; not with imitateActions "
                     "or outcomeWeights");
  return validateGroups({{"policy", policy.validate()},
                         {"update", update.validate()},
                         {"run", run.validate(/*policyFile=*/true)}});
}

const ColumnTable<BcEpoch>& bcStepColumns() {
  using Table = ColumnTable<BcEpoch>;
  using E = BcEpoch;
  auto perBatch = [](double rl::BcEpochStats::*sum) {
    return [sum](const E& e) {
      return e.update.batches ? e.update.*sum / static_cast<double>(e.update.batches) : kNoValue;
    };
  };
  // A held-out statistic; NaN without held-out decisions.
  auto heldout = [](double (*of)(const rl::ClassificationStats&)) {
    return [of](const E& e) { return e.heldout.rows ? of(e.heldout) : kNoValue; };
  };
  static const Table table{
      {"minibatch_loss_mean", perBatch(&rl::BcEpochStats::lossSum)},
      {"gradient_norm", perBatch(&rl::BcEpochStats::gradientNormSum)},
      {"updates", [](const E& e) { return static_cast<double>(e.update.batches); }},
      {"train_loss", [](const E& e) { return e.train.loss; }},
      {"train_accuracy", [](const E& e) { return e.train.accuracy(); }},
      {"heldout_loss", heldout([](const rl::ClassificationStats& s) { return s.loss; })},
      {"heldout_accuracy", heldout([](const rl::ClassificationStats& s) { return s.accuracy(); })},
      {"train_predicted_inline_share",
       [](const E& e) { return share(e.train.predictedPositive, e.train.rows); }},
      {"heldout_predicted_inline_share",
       [](const E& e) { return share(e.heldout.predictedPositive, e.heldout.rows); }},
      {"heldout_inline_share",
       [](const E& e) { return share(e.heldout.labelledPositive, e.heldout.rows); }},
      Table::field("seconds_train", &E::secondsTrain),
      Table::field("seconds_evaluate", &E::secondsEvaluate),
  };
  return table;
}

std::unique_ptr<TrainingAlgorithm> BcTrainer::makeAlgorithm(const BcTrainerOptions& options,
                                                            evaluators::Scorer* scorer) {
  return std::make_unique<BcAlgorithm>(options, scorer);
}

Expected<BcTrainerSummary> BcTrainer::run(const ProgressCallback& progress,
                                          std::optional<int64_t> stopAfter) {
  const BcAlgorithm& bc = algorithm<BcAlgorithm>();
  Expected<BcTrainerSummary> summary = runTyped<BcTrainerSummary>(
      progress, stopAfter, [&bc](const StepProgress& p, BcTrainerSummary& summary) {
        summary.epochs.push_back(bc.lastEpoch());
        return BcProgress{p, bc.lastEpoch()};
      });
  if (summary)
    describeData(bc, record(), *summary);
  return summary;
}

const OptionSchema<BcTrainerOptions>& BcTrainerOptions::schema() {
  static const OptionSchema<BcTrainerOptions> schema = [] {
    const StepNames names{"", "epochs", "Passes over the training decisions", "epoch",
                          "Seeds the split, the initial weights and the order"};
    OptionSchema<BcTrainerOptions> s;
    s.group("Data");
    s.value(
        "trace",
        "Trace file(s) of the heuristic's decisions (mlgo-eval run heuristic CORPUS --trace "
        "FILE); repeat for several",
        [](auto& o) -> auto& { return o.traces; });
    s.value(
        "corpus", "Record the heuristic's decisions on this corpus first (used like a trace)",
        [](auto& o) -> auto& { return o.corpus; });
    s.value(
        "recorded-trace",
        "Where the recording goes (default: beside the run file, <stem>.trace.h5; reused when "
        "it exists)",
        [](auto& o) -> auto& { return o.recordedTrace; });
    s.flag(
        "imitate-actions",
        "Imitate the actions the traces' policies took (e.g. a trace of mlgo-eval search's "
        "flip-set policy) instead of the heuristic's decisions",
        [](auto& o) -> auto& { return o.imitateActions; });
    s.value(
         "deviation-weight",
         "With --imitate-actions: loss weight of decisions whose label differs from the "
         "heuristic's (others: 1)",
         [](auto& o) -> auto& { return o.deviationWeight; })
        .positive();
    s.flag(
        "outcome-weights",
        "Weigh each decision by the bytes its trace row's size differs from its baseline "
        "(traces of mlgo-eval search --tried: the bytes the flip saved or cost)",
        [](auto& o) -> auto& { return o.outcomeWeights; });
    s.value(
        "outcome-weight-floor",
        "With --outcome-weights: the least weight of a decision (0: flips that changed "
        "nothing are not learned from)",
        [](auto& o) -> auto& { return o.outcomeWeightFloor; });
    s.value(
        "teacher",
        "Distil this policy (a file or a shipped policy's name): label every recorded decision "
        "with the teacher's decision "
        "on its features (not with --imitate-actions or --outcome-weights)",
        [](auto& o) -> auto& { return o.teacher; });
    s.value(
        "heldout-fraction", "Share of the modules held out (split by module, seeded)",
        [](auto& o) -> auto& { return o.heldoutFraction; });
    s.group("Policy").include(
        PolicyStartOptions::schema(false), [](auto& o) -> auto& { return o.policy; });
    s.group("Optimiser")
        .include(
            rl::BcUpdateOptions::schema(), [](auto& o) -> auto& { return o.update; });
    s.group("Run").include(
        RunOptions::schema(names, true), [](auto& o) -> auto& { return o.run; });
    return s;
  }();
  return schema;
}

} // namespace mlgo::training
