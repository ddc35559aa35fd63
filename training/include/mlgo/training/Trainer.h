// What every trainer class (EsTrainer, PpoTrainer, BcTrainer) is: its
// options and the TrainingLoop that runs its algorithm. This base starts or
// resumes the run and answers what the run is; a trainer adds its typed
// run() and, privately, makeAlgorithm (its part of the skeleton).
#pragma once

#include "mlgo/evaluators/Scorer.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/support/Expected.h"
#include "mlgo/support/OptionSchema.h"
#include "mlgo/training/TrainingLoop.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

namespace mlgo::training {

template <class Derived, class Options> class Trainer {
public:
  // A new run, written to options.run.output; `scorer` compiles (it must
  // outlive the trainer).
  static Expected<Derived> create(Options options, evaluators::Scorer& scorer) {
    return open(std::move(options), &scorer, false);
  }
  // Continues the run in options.run.output from its checkpoint. The options
  // must be the run's own (the CLIs read them back from the file's stored
  // config); how the scorer compiles (workers, backend) may differ.
  static Expected<Derived> resume(Options options, evaluators::Scorer& scorer) {
    return open(std::move(options), &scorer, true);
  }

  // The options of the run in `runFile`, read back from the config it
  // stores through Options::schema(): what resume() needs, without the
  // command line that started the run. Keys other schemas own (a tool's
  // evaluator flags) are left to their readers; run.output is `runFile`.
  static Expected<Options> storedOptions(const std::filesystem::path& runFile) {
    MLGO_ASSIGN_OR_RETURN(results::RunRecord stored, results::readRunFile(runFile));
    return storedOptions(stored, runFile);
  }
  // The same from the run file's record, already read.
  static Expected<Options> storedOptions(const results::RunRecord& stored,
                                         const std::filesystem::path& runFile) {
    const std::string origin = runFile.string() + " (its stored config)";
    MLGO_ASSIGN_OR_RETURN(ConfigValues values, parseFlatToml(stored.configToml, origin));
    Options options;
    OptionNotes notes;
    if (Status applied = Options::schema().apply(options, values, notes); !applied)
      return makeError(origin + ": " + applied.error().message);
    options.run.output = runFile;
    options.run.configToml = stored.configToml;
    options.run.configValues = stored.config;
    return options;
  }

  const Options& options() const { return *options_; }
  const results::RunRecord& record() const { return loop_->record(); }
  // The current policy.
  const policies::MlpPolicy& policy() const { return loop_->algorithm().policy(); }

protected:
  // Validates `options`, then starts a new run or resumes the one in
  // options.run.output, with the algorithm Derived::makeAlgorithm(options,
  // scorer) makes over the options kept here (it may refer to them).
  static Expected<Derived> open(Options options, evaluators::Scorer* scorer, bool resume) {
    if (Status valid = options.validate(); !valid)
      return valid.error();
    Derived trainer;
    trainer.options_ = std::make_unique<Options>(std::move(options));
    const Options& kept = *trainer.options_;
    int64_t validationInterval = 1;
    if constexpr (requires { kept.data.validationInterval; })
      validationInterval = kept.data.validationInterval;
    std::unique_ptr<TrainingAlgorithm> algorithm = Derived::makeAlgorithm(kept, scorer);
    Expected<TrainingLoop> loop =
        resume ? TrainingLoop::resume(kept.run, validationInterval, std::move(algorithm), scorer)
               : TrainingLoop::create(kept.run, validationInterval, std::move(algorithm), scorer);
    if (!loop)
      return loop.error();
    trainer.loop_ = std::make_unique<TrainingLoop>(loop.take());
    return trainer;
  }

  // Runs the loop; `typed(step, summary)` turns each finished step into the
  // trainer's progress record (adding the step to `summary`) for `progress`.
  template <class Summary, class Progress, class Typed>
  Expected<Summary> runTyped(const std::function<CallbackAction(const Progress&)>& progress,
                             std::optional<int64_t> stopAfter, Typed typed) {
    Summary summary;
    Expected<LoopSummary> ran = loop_->run(
        [&](const StepProgress& step) {
          Progress record = typed(step, summary);
          return progress ? progress(record) : CallbackAction::Continue;
        },
        stopAfter);
    if (!ran)
      return ran.error();
    static_cast<LoopSummary&>(summary) = *ran;
    return summary;
  }

  // The algorithm as the trainer made it (for its typed step records).
  template <class Algorithm> const Algorithm& algorithm() const {
    return static_cast<const Algorithm&>(loop_->algorithm());
  }
  TrainingLoop& loop() { return *loop_; }

private:
  std::unique_ptr<Options> options_; // on the heap: the algorithm refers to it
  std::unique_ptr<TrainingLoop> loop_;
};

} // namespace mlgo::training
