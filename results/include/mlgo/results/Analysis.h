// Analysis of run files: what `mlgo-results` computes and prints. Everything
// here reads a RunRecord through the documented schema only (results/README.md,
// "Run files"), so it serves every trainer: ES step scalars such as
// reward_mean are used where present, and a run without module sizes (BC)
// simply has no size columns.
//
// Conventions:
// - Steps are numbered from 0, as the rows of the file. A policy's step is the
//   number of steps completed when it was taken (the file's convention for
//   policies and validation rows): the policy at step p is the point the
//   population of step p was drawn around, and the final policy of an S-step
//   run has step S.
// - Code size "vs -Oz" is Σ size / Σ -Oz size − 1 over the modules that have
//   both: −0.02 is 2 % smaller than -Oz.
#pragma once

#include "mlgo/results/AnalysisTable.h"
#include "mlgo/results/RunFile.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::results {

inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// Which of a run's policies. Final falls back to the checkpoint's current
// policy while the run has not ended.
enum class PolicyChoice { Final, Best };
std::string_view policyChoiceName(PolicyChoice choice);

// Where a policy's code sizes come from, from exact to approximate.
enum class SizeSource {
  Evaluated,  // compiled by mlgo-results on a corpus (evaluatePolicySizes)
  Validation, // the run's own validation compile of exactly that policy
  // The candidates compiled around the policy during training: per module,
  // the mean size over the successful candidates of the latest step (at or
  // before the policy's) that compiled it. An approximation: the candidates
  // are perturbations of the policy, not the policy itself. (Successful: no
  // failure record, and not a size of 0 against a module with code at -Oz.)
  Training,
};
std::string_view sizeSourceName(SizeSource source);

// One policy's code size per module against -Oz.
struct PolicySizes {
  SizeSource source = SizeSource::Training;
  std::string description; // e.g. "validation after step 3"
  int64_t step = -1;       // the policy's step
  std::vector<std::string> modules;
  std::vector<double> sizes;       // bytes; NaN: failed or never compiled
  std::vector<uint64_t> baselines; // -Oz bytes; 0: unknown

  bool compared(size_t module) const;
  size_t comparedModules() const;
  double totalBytes() const;         // over the compared modules
  double totalBaselineBytes() const; // likewise
  double change() const;             // totalBytes / totalBaselineBytes − 1; NaN: none compared
};

// The policy's JSON and step: the final policy (or, before the run ended,
// the checkpoint's), or the best. nullopt if the run has none.
std::optional<PolicySnapshot> choosePolicy(const RunRecord& run, PolicyChoice choice);

// Sizes from the run file alone: the validation row of that policy if the run
// validated it, else the training approximation; nullopt if the run has no
// such policy or compiled no modules.
std::optional<PolicySizes> recordedPolicySizes(const RunRecord& run, PolicyChoice choice);

// --- summary: one row per run ---------------------------------------------------------

struct SummaryOptions {
  // The step scalar whose last and largest values are the run's final and
  // best reward. ES: the mean candidate reward of each step.
  std::string rewardScalar = "reward_mean";
};

struct RunSummary {
  std::string file;  // the "run" column of CSV
  std::string label; // the "run" column of text (runLabels); the file by default
  std::string trainer;
  std::string optimizer; // the "optimizer" attribute or config key, else the trainer
  // What its sizes are: the "measure" attribute ("text-size vs -Oz",
  // "regalloc-score vs -O2"); runs written before it had the inliner's.
  std::string measure = "text-size vs -Oz";
  std::map<std::string, std::string, std::less<>> config;
  int64_t steps = 0;                   // completed
  std::optional<int64_t> plannedSteps; // the config's "steps"
  bool finished = false;               // a final policy, or all planned steps done
  double wallSeconds = kNoValue;       // across resumes
  // Every module compile the run made: training (the entries of
  // /steps/sizes) and validation. Failed: training compiles with a failure
  // record (or, for a trainer that records none, size 0 against a module that
  // has code at -Oz) and validation compiles that are not ok.
  uint64_t compilations = 0;
  uint64_t failedCompilations = 0;
  double finalReward = kNoValue; // the last finite value of the reward scalar
  double bestReward = kNoValue;  // its largest finite value
  std::optional<PolicySizes> finalSizes;
  std::optional<PolicySizes> bestSizes;
};

RunSummary summarizeRun(std::string file, const RunRecord& run, const SummaryOptions& options);

// How tables name the runs' size change: ".text vs -Oz" for the inliner's
// measure, the measure itself for another ("regalloc-score vs -O2"), and
// "measure vs baseline" when the runs measure different things.
std::string sizeChangeLabel(const std::vector<RunSummary>& runs);

enum class SummaryOrder { AsGiven, FinalReward, BestReward };
std::string_view summaryOrderName(SummaryOrder order);

struct SummaryTableOptions {
  // Config keys shown as columns. Empty: the keys whose values differ between
  // the runs (what a sweep varied), leaving out operational ones (output,
  // workers, scratch, …); for a single run, those of kKeyHyperparameters it has.
  std::vector<std::string> keys;
  // Best first; runs without a value last, in the order given.
  SummaryOrder order = SummaryOrder::AsGiven;
};

inline const std::vector<std::string> kKeyHyperparameters = {
    "directions", "sigma", "learning-rate", "hidden", "modules-per-step", "seed"};
inline const std::vector<std::string> kOperationalKeys = {
    "output",  "workers",     "scratch",      "baseline-cache", "no-baseline-cache", "clang",
    "timeout", "delete-flag", "replace-flag", "add-flag",       "rank-deadline"};

// The hyperparameter columns SummaryTableOptions::keys selects for these runs.
std::vector<std::string> hyperparameterKeys(const std::vector<RunSummary>& runs,
                                            const SummaryTableOptions& options);
Table summaryTable(std::vector<RunSummary> runs, const SummaryTableOptions& options);

// --- compare: runs side by side -------------------------------------------------------

// Per module (by name, in the order first met), which run's policy is
// smallest and by how many bytes.
struct ModuleComparison {
  std::vector<std::string> modules;
  std::vector<uint64_t> baselines;           // per module; 0: unknown
  std::vector<std::vector<double>> sizes;    // [run][module]; NaN: no size
  std::vector<std::optional<size_t>> winner; // the smallest; nullopt: a tie or < 2 sizes
  std::vector<double> margin;                // bytes between the smallest and the next
  std::vector<size_t> wins;                  // per run
  size_t ties = 0;
  // Totals over the modules every run has a size and a baseline for.
  std::vector<double> totalBytes; // per run
  double totalBaselineBytes = 0;
  size_t commonModules = 0;
};

ModuleComparison compareModules(const std::vector<PolicySizes>& runs);
Table moduleComparisonTable(const ModuleComparison& comparison,
                            const std::vector<std::string>& labels);

// Learning curves on a shared budget axis.
enum class CurveAxis {
  Compilations, // cumulative module compiles, training and validation
  WallSeconds,  // elapsed wall time at the end of each step, across resumes
};
std::string_view curveAxisName(CurveAxis axis);

// Where each step of a run ends on the axis; NaN where the run has no value.
std::vector<double> stepPositions(const RunRecord& run, CurveAxis axis);

struct AlignedCurves {
  CurveAxis axis = CurveAxis::Compilations;
  std::string scalar;
  std::vector<double> x; // evenly spaced up to the longest run's end
  // [run][point]: the scalar at the run's last step ending at or before x
  // (its last finite value there); NaN before the run's first step and past
  // its end (it never had that budget).
  std::vector<std::vector<double>> values;
};

AlignedCurves alignCurves(const std::vector<const RunRecord*>& runs, CurveAxis axis,
                          std::string_view scalar, size_t points);
Table curvesTable(const AlignedCurves& curves, const std::vector<std::string>& labels);

// Short labels for runs: file names without ".h5" if they are unique, else
// the paths as given.
std::vector<std::string> runLabels(const std::vector<std::string>& files);

// --- show: one step -------------------------------------------------------------------

// Every step scalar's value at `step` (name, value).
Table stepScalarsTable(const RunRecord& run, size_t step);
// Per candidate: reward, failed modules, total size against -Oz.
Table stepCandidatesTable(const RunRecord& run, size_t step);
// Per module compiled at `step`: -Oz, smallest / mean / largest candidate
// size, candidates smaller and larger than -Oz, failed compiles.
Table stepModulesTable(const RunRecord& run, size_t step);
// Failures recorded at `step` (training compiles and, with candidate −1, the
// validation after it).
Table stepFailuresTable(const RunRecord& run, size_t step);

// --- export: tidy tables --------------------------------------------------------------

struct NamedTable {
  std::string name; // file stem: steps → steps.csv
  Table table;
};

struct LabelledRun {
  std::string label; // the "run" column
  const RunRecord* record = nullptr;
};

// One table per kind of row, each starting with a "run" column, so files from
// several runs concatenate: runs, config, attributes, modules, steps (every
// scalar), candidates, sizes (step × candidate × module), failures,
// validation, validation_sizes, policies (snapshot / best / final steps).
std::vector<NamedTable> exportTables(const std::vector<LabelledRun>& runs,
                                     const SummaryOptions& options);

} // namespace mlgo::results
