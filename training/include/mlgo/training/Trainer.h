// What every trainer class (EsTrainer, PpoTrainer, BcTrainer) is: its
// options and the TrainingLoop that runs its algorithm. This base starts or
// resumes the run and answers what the run is; a trainer adds its typed
// run() and, privately, makeAlgorithm (its part of the skeleton).
#pragma once

#include "mlgo/evaluators/Scorer.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/support/Expected.h"
#include "mlgo/training/TrainingLoop.h"

#include <cstdint>
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
