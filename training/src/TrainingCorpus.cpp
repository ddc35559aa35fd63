#include "mlgo/training/TrainingCorpus.h"
#include "mlgo/support/Files.h"

namespace mlgo::training {

namespace {

Expected<std::unique_ptr<corpus::Corpus>> loadCorpus(const std::filesystem::path& directory) {
  Expected<corpus::Corpus> loaded = corpus::Corpus::load(directory);
  if (!loaded)
    return loaded.error();
  return std::make_unique<corpus::Corpus>(loaded.take());
}

std::vector<const corpus::ModuleSpec*> modulesOf(const corpus::Corpus& corpus) {
  std::vector<const corpus::ModuleSpec*> modules;
  for (const corpus::ModuleSpec& m : corpus.modules())
    modules.push_back(&m);
  return modules;
}

} // namespace

Expected<TrainingCorpus> TrainingCorpus::load(const CorpusOptions& options, uint64_t seed,
                                              evaluators::Scorer& scorer,
                                              results::RunRecord& record) {
  TrainingCorpus data;
  data.modulesPerStep_ = options.modulesPerStep;
  Expected<std::unique_ptr<corpus::Corpus>> training = loadCorpus(options.corpus);
  if (!training)
    return training.error();
  data.training_ = training.take();
  if (options.validationCorpus) {
    Expected<std::unique_ptr<corpus::Corpus>> validation = loadCorpus(*options.validationCorpus);
    if (!validation)
      return validation.error();
    data.validationCorpus_ = validation.take();
  }

  // A corpus of the other -O level is trained on, with a warning (printed
  // with the run's first line, kept in the run file's failure table).
  for (const corpus::Corpus* loaded : {data.training_.get(), data.validationCorpus_.get()})
    if (loaded)
      if (std::optional<std::string> warning =
              evaluators::optimisationLevelWarning(*loaded, scorer.task()))
        record.failures.push_back({-1, -1, "", "corpus-opt-level", *warning, ""});
  std::vector<const corpus::ModuleSpec*> all = modulesOf(*data.training_);
  std::vector<evaluators::BaselineResult> baselines = scorer.baselines(all);
  std::vector<uint64_t> bitcodeBytes;
  std::vector<int> languages; // corpus::SourceLanguage, for LanguageStratified
  record.moduleNames.clear();
  record.baselineSizes.clear();
  record.bitcodeHashes.clear();
  for (size_t i = 0; i < all.size(); ++i) {
    record.moduleNames.push_back(all[i]->name);
    record.baselineSizes.push_back(baselines[i].sizeBytes.value_or(0));
    // The baselines just read every bitcode file, so this one is cached.
    Expected<std::string> bitcode = readFileBytes(all[i]->bitcode);
    if (!bitcode)
      return bitcode.error();
    record.bitcodeHashes.push_back(hashBytes(*bitcode));
    if (!baselines[i].sizeBytes) {
      record.failures.push_back(
          {-1, -1, all[i]->name, "baseline-unavailable", baselines[i].message, ""});
      continue;
    }
    data.eligible_.push_back(all[i]);
    data.eligibleIndex_.push_back(static_cast<int64_t>(i));
    bitcodeBytes.push_back(all[i]->bitcodeBytes);
    languages.push_back(static_cast<int>(corpus::moduleLanguage(*all[i])));
  }
  if (data.eligible_.empty())
    return makeError(options.corpus.string() + ": no module has a working -Oz baseline");
  // (With replacement, more picks than modules is a choice, not a shortfall.)
  if (options.modulesPerStep > data.eligible_.size() &&
      options.sampling != corpus::SamplingStrategy::WithReplacement)
    record.failures.push_back({-1, -1, "", "modules-per-step",
                               "modules per step (" + std::to_string(options.modulesPerStep) +
                                   ") is more than the " + std::to_string(data.eligible_.size()) +
                                   " modules " + options.corpus.string() +
                                   " can train on: every step compiles those",
                               ""});
  data.sampler_.emplace(options.sampling, std::move(bitcodeBytes), seed, size_t{20},
                        std::move(languages));

  record.validationModuleNames.clear();
  record.validationBaselineSizes.clear();
  if (data.validationCorpus_) {
    data.validation_ = modulesOf(*data.validationCorpus_);
    std::vector<evaluators::BaselineResult> vb = scorer.baselines(data.validation_);
    for (size_t i = 0; i < data.validation_.size(); ++i) {
      record.validationModuleNames.push_back(data.validation_[i]->name);
      record.validationBaselineSizes.push_back(vb[i].sizeBytes.value_or(0));
    }
  }
  record.attributes["corpus"] = options.corpus.string();
  if (options.validationCorpus)
    record.attributes["validation_corpus"] = options.validationCorpus->string();
  return data;
}

StepModules TrainingCorpus::sample(int64_t step) const {
  StepModules chosen;
  for (size_t pick : sampler_->sample(static_cast<uint64_t>(step), modulesPerStep_)) {
    chosen.modules.push_back(eligible_[pick]);
    chosen.indices.push_back(eligibleIndex_[pick]);
  }
  return chosen;
}

void recordFailure(results::RunRecord& record, int64_t step, int64_t candidate,
                   const std::string& module, const evaluators::JobResult& job) {
  record.failures.push_back({step, candidate, module,
                             std::string(evaluators::jobStatusName(job.status)), job.message,
                             job.stderrTail});
}

CompileStats recordEvaluation(const evaluators::EvaluationResult& result,
                              const StepModules& modules, int64_t step,
                              results::RunRecord& record) {
  CompileStats stats;
  stats.compilations = result.jobs.size();
  stats.cacheLookups = result.cacheLookups;
  stats.cacheHits = result.cacheHits;
  stats.cacheSecondsSaved = result.cacheSecondsSaved;
  stats.replays = result.replays;
  stats.replaySecondsSaved = result.replaySecondsSaved;
  stats.replaysVerified = result.replaysVerified;
  std::vector<uint64_t> sizes(result.jobs.size(), 0);
  for (size_t c = 0; c < result.candidateCount; ++c)
    for (size_t m = 0; m < result.moduleCount; ++m) {
      const evaluators::JobResult& job = result.job(c, m);
      stats.decisions += job.decisions;
      stats.fullCompiles += !job.replayed && !job.cacheHit &&
                            job.status != evaluators::JobStatus::BaselineUnavailable;
      if (!job.ok()) {
        ++stats.failed;
        recordFailure(record, step, static_cast<int64_t>(c), modules.modules[m]->name, job);
        continue;
      }
      ++stats.okJobs;
      sizes[c * result.moduleCount + m] = job.sizeBytes;
      const double baseline = *result.baselineMeasure(m);
      stats.wins += result.measured(job) < baseline;
      stats.regressions += result.measured(job) > baseline;
    }
  record.stepModules.push_back(modules.indices);
  record.stepSizes.push_back(std::move(sizes));
  return stats;
}

} // namespace mlgo::training
