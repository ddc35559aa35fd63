// The skeleton every trainer runs on (as Stable-Baselines3's learn() loop):
// the trainer's algorithm supplies only what differs — its data, its
// initial and restored state, and one step of collect + update — and the
// loop owns the rest: the run file (create, resume checks, a rewrite after
// every step), validation on held-out code, the best policy, snapshots, the
// final policy and the policy file (the kept policy: KeptPolicy), checkpoints, timings, progress
// and stopping.
//
//   new run:   loadData → initialise → snapshot 0 → validate the start (with a
//              validation corpus: the first contender for best) → file
//   resume:    read file, check trainer/checkpoint/optimizer/steps → loadData
//              → same module tables? → restore(checkpoint) → the file's record
//   each step: runStep(step) → validate (every validationInterval steps and at
//              the end, with a validation corpus) or the algorithm's candidate
//              → best → snapshots, final → checkpoint → file → callback
//
// A run killed at any point resumes from its last file and computes exactly
// what the uninterrupted run would have: everything random is a function of
// (seed, step), and the checkpoint holds all state.
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Scorer.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/support/Expected.h"
#include "mlgo/support/StateArchive.h"
#include "mlgo/training/Options.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::training {

// Why run() returned (Ceres' termination type).
enum class Termination {
  Completed,         // every step of the run is done; the policy file is written
  StepLimit,         // run(…, stopAfter) did its steps; the run can be resumed
  StoppedByCallback, // the progress callback asked to stop; the run can be resumed
  TimeBudget,        // RunOptions::maxSeconds ended it: its last step was run as the
                     // final one (validated, snapshot, policy file written);
                     // --resume continues toward `steps`
};
std::string_view terminationName(Termination termination);

// What a progress callback answers after each step.
enum class CallbackAction { Continue, Stop };

// What every trainer reports after each step, whatever it trains.
struct StepProgress {
  int64_t step = 0;  // the step just done, 0-based
  int64_t steps = 0; // of the whole run
  double stepSeconds = 0;
  double elapsedSeconds = 0; // of the run so far, across resumes
  double etaSeconds = 0;
  // Set when this step validated and a validation module compiled.
  std::optional<double> validationTotalReward;
};

// A step's contender for the run's best policy, when there is no validation
// corpus to choose on (ES: the point before the update, on its
// neighbourhood's mean reward; PPO: the sampling policy on its training
// reward; BC: the new policy on held-out agreement).
struct BestCandidate {
  int64_t step = 0; // the step its snapshot is filed under
  std::string policyJson;
  double value = 0; // larger is better
  // On an equal value, smaller wins (BC: the held-out loss); unset: ties
  // keep the earlier policy.
  std::optional<double> tieBreak;
  std::string metric; // what `value` measures, stored in the run file
};

// Where a trainer's checkpoint keeps its best-so-far (part of its run-file
// schema) and what it starts at.
struct BestPolicyKeys {
  std::string value = "best_value";
  std::string tieBreak; // empty: not kept
  std::string step;     // empty: not kept (an integer)
  double initialValue = -std::numeric_limits<double>::infinity();
};

class TrainingAlgorithm {
public:
  virtual ~TrainingAlgorithm() = default;

  // The run file's "trainer" ("es-train", …) and the checkpoint's "optimizer".
  virtual std::string_view trainerName() const = 0;
  virtual std::string optimizerName() const = 0;
  virtual BestPolicyKeys bestPolicyKeys() const { return {}; }

  // Loads the training data; fills the record's module tables (a resumed run
  // must find them equal to the file's) and attributes about the data.
  virtual Status loadData(results::RunRecord& record) = 0;
  // A new run: the initial policy and optimiser state, described in
  // record.attributes.
  virtual Status initialise(results::RunRecord& record) = 0;
  // A resumed run: the policy, optimiser and trainer state from the
  // checkpoint; errors are prefixed with `origin` (the file).
  virtual Status restore(const results::Checkpoint& checkpoint, const std::string& origin) = 0;
  virtual void saveState(StateArchive& optimizer, StateArchive& trainer) const = 0;

  // The current policy: snapshots, validation, checkpoints, the policy file.
  virtual const policies::MlpPolicy& policy() const = 0;
  // Modules the loop compiles the current policy on to validate (none: the
  // algorithm's candidates choose the best policy).
  virtual std::vector<const corpus::ModuleSpec*> validationModules() const { return {}; }

  // One step (collect + update): appends its rows to `record` (its typed
  // scalars through its column table, candidate rewards, modules, sizes,
  // failures). An error ends the run; the file keeps the last good step.
  virtual Expected<std::optional<BestCandidate>> runStep(int64_t step,
                                                         results::RunRecord& record) = 0;
};

struct BestPolicy {
  int64_t step = 0;
  double value = 0;
  std::string metric;
};

// The policy a run keeps: its policy file. With a validation corpus, the
// best validated policy, the start's (step 0) included, so a run never
// keeps a policy that validates worse than where it started; without one,
// the final policy.
struct KeptPolicy {
  int64_t step = 0;
  bool validated = false;
  std::optional<double> validationTotalReward; // when validated
  std::optional<double> startValidationTotalReward;
  // One line on which policy and why, for the tools' endings.
  std::string why() const;
};

// One invocation of run().
struct LoopSummary {
  Termination termination = Termination::Completed;
  std::string message;    // one line on why it ended
  int64_t stepsRun = 0;   // in this invocation
  int64_t stepsTotal = 0; // including resumed ones
  double seconds = 0;
  std::filesystem::path output;
  std::optional<std::filesystem::path> policyOutput; // written when the run completed
  bool validated = false;                            // the run has a validation corpus
  std::optional<BestPolicy> best;                    // once one was chosen
  std::optional<KeptPolicy> kept;                    // when the run completed

  // The best policy's total reward on the validation corpus, if it has one.
  std::optional<double> bestValidationTotalReward() const {
    return validated && best ? std::optional<double>(best->value) : std::nullopt;
  }
};

class TrainingLoop {
public:
  using Callback = std::function<CallbackAction(const StepProgress&)>;

  // A new run written to run.output. `scorer` compiles validations (null
  // when the algorithm has no validation modules).
  static Expected<TrainingLoop> create(RunOptions run, int64_t validationInterval,
                                       std::unique_ptr<TrainingAlgorithm> algorithm,
                                       evaluators::Scorer* scorer);
  // Continues the run in run.output from its checkpoint; the options must be
  // the run's own (the CLIs read them back from the file's stored config).
  static Expected<TrainingLoop> resume(RunOptions run, int64_t validationInterval,
                                       std::unique_ptr<TrainingAlgorithm> algorithm,
                                       evaluators::Scorer* scorer);

  TrainingLoop(TrainingLoop&&) noexcept;
  TrainingLoop& operator=(TrainingLoop&&) noexcept;
  ~TrainingLoop();

  // Runs until the run's steps are done, `stopAfter` steps are done in this
  // call, or `callback` asks to stop; every step is in the file before the
  // callback sees it.
  Expected<LoopSummary> run(const Callback& callback = {},
                            std::optional<int64_t> stopAfter = std::nullopt);

  const results::RunRecord& record() const;
  TrainingAlgorithm& algorithm();
  int64_t stepsDone() const;

private:
  struct State;
  explicit TrainingLoop(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

} // namespace mlgo::training
