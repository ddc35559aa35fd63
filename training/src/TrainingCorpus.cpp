#include "mlgo/training/TrainingCorpus.h"
#include "mlgo/support/Files.h"
#include "mlgo/training/ProgramScorer.h"

namespace mlgo::training {

namespace {

Expected<std::unique_ptr<corpus::Corpus>> loadCorpus(const std::filesystem::path& directory) {
  Expected<corpus::Corpus> loaded = corpus::Corpus::load(directory);
  if (!loaded)
    return loaded.error();
  return std::make_unique<corpus::Corpus>(loaded.take());
}

std::vector<const corpus::ModuleSpec*> modulesOf(const std::vector<corpus::ModuleSpec>& specs) {
  std::vector<const corpus::ModuleSpec*> modules;
  for (const corpus::ModuleSpec& m : specs)
    modules.push_back(&m);
  return modules;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names)
    text += (text.empty() ? "" : ",") + name;
  return text;
}

// What identifies a module's input for --resume's check: its bitcode's
// hash, or for a program its name (its sources are the recipe's).
Expected<uint64_t> inputHash(const corpus::ModuleSpec& module, bool program) {
  if (program)
    return hashBytes("program:" + module.name);
  // The baselines just read every bitcode file, so this one is cached.
  Expected<std::string> bitcode = readFileBytes(module.bitcode);
  if (!bitcode)
    return bitcode.error();
  return hashBytes(*bitcode);
}

} // namespace

Expected<TrainingCorpus> TrainingCorpus::load(const CorpusOptions& options, uint64_t seed,
                                              evaluators::Scorer& scorer,
                                              results::RunRecord& record) {
  TrainingCorpus data;
  data.modulesPerStep_ = options.modulesPerStep;
  if (options.trainsOnPrograms()) {
    data.programs_ =
        std::make_unique<std::vector<corpus::ModuleSpec>>(programModules(options.programs));
    data.validationPrograms_ = std::make_unique<std::vector<corpus::ModuleSpec>>(
        programModules(options.validationPrograms));
    data.source_ = "programs " + joined(options.programs);
  } else {
    Expected<std::unique_ptr<corpus::Corpus>> training = loadCorpus(options.corpus);
    if (!training)
      return training.error();
    data.training_ = training.take();
    data.source_ = options.corpus.string();
  }
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
  const bool programs = data.programs();
  std::vector<const corpus::ModuleSpec*> all =
      modulesOf(programs ? *data.programs_ : data.training_->modules());
  std::vector<evaluators::BaselineResult> baselines = scorer.baselines(all);
  std::vector<uint64_t> bitcodeBytes;
  std::vector<int> languages; // corpus::SourceLanguage, for LanguageStratified
  record.moduleNames.clear();
  record.baselineSizes.clear();
  record.bitcodeHashes.clear();
  for (size_t i = 0; i < all.size(); ++i) {
    record.moduleNames.push_back(all[i]->name);
    record.baselineSizes.push_back(baselines[i].sizeBytes.value_or(0));
    Expected<uint64_t> hash = inputHash(*all[i], programs);
    if (!hash)
      return hash.error();
    record.bitcodeHashes.push_back(*hash);
    // A program's baseline is its run cost alone (no object size).
    if (!baselines[i].sizeBytes && !baselines[i].measured) {
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
    return makeError(data.source_ + (programs ? ": no program has a working plain build (" +
                                                    record.failures.back().message + ")"
                                              : ": no module has a working -Oz baseline"));
  // (With replacement, more picks than modules is a choice, not a shortfall.)
  // (A few programs are all trained on every step: no shortfall either.)
  if (options.modulesPerStep > data.eligible_.size() && !programs &&
      options.sampling != corpus::SamplingStrategy::WithReplacement)
    record.failures.push_back({-1, -1, "", "modules-per-step",
                               "modules per step (" + std::to_string(options.modulesPerStep) +
                                   ") is more than the " + std::to_string(data.eligible_.size()) +
                                   " modules " + data.source_ +
                                   " can train on: every step compiles those",
                               ""});
  data.sampler_.emplace(options.sampling, std::move(bitcodeBytes), seed, size_t{20},
                        std::move(languages));

  record.validationModuleNames.clear();
  record.validationBaselineSizes.clear();
  if (data.validationCorpus_ || (programs && !data.validationPrograms_->empty())) {
    data.validation_ =
        modulesOf(programs ? *data.validationPrograms_ : data.validationCorpus_->modules());
    std::vector<evaluators::BaselineResult> vb = scorer.baselines(data.validation_);
    for (size_t i = 0; i < data.validation_.size(); ++i) {
      record.validationModuleNames.push_back(data.validation_[i]->name);
      record.validationBaselineSizes.push_back(vb[i].sizeBytes.value_or(0));
    }
  }
  record.attributes["corpus"] = data.source_;
  if (options.validationCorpus)
    record.attributes["validation_corpus"] = options.validationCorpus->string();
  if (programs && !options.validationPrograms.empty())
    record.attributes["validation_corpus"] = "programs " + joined(options.validationPrograms);
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
