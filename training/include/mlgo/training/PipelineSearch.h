// Per-module search over the pass-pipeline task's actions: how much a module
// could gain from its own pipeline (the headroom a pipeline policy has to
// learn), and the labels a policy could imitate. Two action spaces
// (policies/PassPipeline.h):
//
// - structured: every single change around -Oz (each optional pass class
//   skipped, each clean-up of a fixed menu added), then greedy rounds that
//   combine the best of them; the neutral action, -Oz, is always the floor.
// - sequence: replacements: the standard pipelines (O1, O2, Os, Oz twice,
//   …) and random sequences from a fixed pass list after -Oz, drawn per
//   module from (seed, module), CompilerGym's random search in miniature.
//
// Every candidate is compiled by the evaluator in its task's measure (.text
// bytes, or IR instructions with --measure ir-instructions).
#pragma once

#include "mlgo/evaluators/Scorer.h"
#include "mlgo/policies/PassPipeline.h"
#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mlgo::training {

class ProgramMeasureLog;

enum class PipelineSpace { Structured, Sequence };
std::string_view pipelineSpaceName(PipelineSpace space); // "structured", "sequence"
Expected<PipelineSpace> parsePipelineSpace(std::string_view name);

struct PipelineSearchOptions {
  PipelineSpace space = PipelineSpace::Structured;
  // Structured: combination rounds after the single changes (0: singles only).
  size_t rounds = 2;
  // Structured: the best improving single changes a combination round may
  // add to the module's best pipeline so far.
  size_t carried = 6;
  // Sequence: random sequences per module beside the standard pipelines.
  size_t randomSequences = 12;
  // Sequence: passes in each random sequence.
  size_t sequenceLength = 6;
  uint64_t seed = 1;
  // The program search's objective: the total, plus this weight times the
  // modules' growth over -Oz (0: the total alone; 1: every byte a module
  // grows counts twice). A pipeline that shrinks most modules and blows up a
  // few is a risk on code it was not chosen on; 1 is what validation chose
  // among 0, 1 and 3 (docs/pass-pipeline.md).
  double regressionWeight = 1;
  // The program search's start: its changes are kept unless removing one
  // helps (default: -Oz, nothing to remove). A warm start from a shipped
  // pipeline, to continue it under another inliner.
  policies::PassPipeline start;
  // The program search's inliner, carried by every candidate (and by the
  // written policy): the pipeline is chosen under the inliner it will run
  // with. None: LLVM's heuristic.
  std::shared_ptr<const policies::Policy> inliner;
  // The program search's measures are kept here as they are compiled, and
  // pipelines it holds are answered from it (a killed search run again
  // compiles only what it had not: --checkpoint). Not owned; none: no log.
  ProgramMeasureLog* measureLog = nullptr;
  // With a log: compile the pipelines it answers anyway and fail on a
  // difference (the log claims the compiler's own answer).
  bool verifyMeasureLog = false;
  // Structured: pass parameters among the moves (a pass of -Oz's text run
  // with other parameters; beside added passes only where -Oz's text
  // takes them).
  // Off by default, so that searches and ES runs measured before keep
  // their moves.
  bool parameterMoves = false;
  Status validate() const;
};

struct ModulePipelineSearch {
  const corpus::ModuleSpec* module = nullptr;
  std::optional<double> baseline;   // -Oz, in the evaluator's measure
  std::optional<double> bestSingle; // the best first-round candidate's (or -Oz's)
  std::optional<double> best;       // the search's result (never above -Oz)
  policies::PassPipeline pipeline;  // what gives `best` (-Oz: neutral)
  size_t compiled = 0;
  size_t failed = 0;
};

struct PipelineSearchSummary {
  std::vector<ModulePipelineSearch> modules;
  size_t compiled = 0;
  size_t failed = 0;
  double seconds = 0;
};

// The structured space's single changes, and the sequence space's standard
// replacements (the random ones are drawn per module).
std::vector<policies::PassPipeline> structuredMoves(bool withParameters = false);
std::vector<policies::PassPipeline> standardReplacements();
// `a` with `b`'s changes too, canonical (structured pipelines).
policies::PassPipeline combinedPipeline(const policies::PassPipeline& a,
                                        const policies::PassPipeline& b);
// The sequence space's random replacement `index` for module `moduleIndex`.
policies::PassPipeline randomReplacement(uint64_t seed, uint64_t moduleIndex, uint64_t index,
                                         size_t length);

// One pipeline for a whole program (every module of `modules` gets it),
// chosen by greedy forward selection on the program's total: the single
// changes first, then rounds that add to the best pipeline so far each of
// the `carried` changes that shrank the total most on their own, keeping
// the best addition; it stops when no addition shrinks the total. From a
// start other than -Oz (or under an inliner policy) the start itself is the
// floor, and its changes' removals are among the first moves. A change
// that makes any module fail is not taken. A blackbox search with a
// program-level reward: what ships as a pipeline policy learned on training
// code and judged on other code.
struct ProgramPipelineStep {
  policies::PassPipeline pipeline; // after this step
  double total = 0;                // the program's total measure with it
  double objective = 0;            // the total with growth weighted (regressionWeight)
  size_t larger = 0;               // modules above -Oz with it
};
struct ProgramPipelineSearch {
  double baseline = 0; // -Oz's total over the modules whose baseline compiled (= its objective)
  // The start's result when it is not plain -Oz (options.start, options.inliner).
  std::optional<ProgramPipelineStep> start;
  std::vector<ProgramPipelineStep> steps;
  policies::PassPipeline pipeline; // the result (-Oz: no step helped)
  double best = 0;
  size_t evaluations = 0; // pipelines measured on every module
  size_t compiled = 0;
  size_t logged = 0; // of the evaluations, answered by options.measureLog
  double seconds = 0;
};
// Each of `pipelines` on every module at once (one evaluation, parallel
// over pipelines × modules): its total, objective and modules above -Oz,
// nullopt if it failed a module whose baseline compiled.
struct ProgramEvaluation {
  double baseline = 0; // -Oz's total over the modules whose baseline compiled
  std::vector<std::optional<ProgramPipelineStep>> pipelines;
  size_t compiled = 0;
};
// Each of `pipelines` on every module (one evaluation): measures[p][m],
// NaN where the job failed, and -Oz's measure per module (none: failed).
struct PipelineMatrix {
  std::vector<std::optional<double>> baselines;
  std::vector<std::vector<double>> measures;
};
PipelineMatrix measurePipelines(evaluators::Scorer& evaluator,
                                std::span<const corpus::ModuleSpec* const> modules,
                                const std::vector<policies::PassPipeline>& pipelines,
                                std::shared_ptr<const policies::Policy> inliner = nullptr);
// The same for whole pipeline policies (each with its own inliner, or none).
PipelineMatrix measurePipelinePolicies(evaluators::Scorer& evaluator,
                                       std::span<const corpus::ModuleSpec* const> modules,
                                       std::span<const policies::PipelinePolicy> policies);
ProgramEvaluation evaluateProgramPipelines(
    evaluators::Scorer& evaluator, std::span<const corpus::ModuleSpec* const> modules,
    const std::vector<policies::PassPipeline>& pipelines, double regressionWeight,
    std::shared_ptr<const policies::Policy> inliner = nullptr);

// A program search's compiled pipelines, per module, in a file rewritten
// (atomically) after every batch: the greedy search is deterministic, so the
// same search run again after a kill asks for the same pipelines in the
// same order, and those in the log are answered from it. The file names its
// context (compiler, task, measure, inliner policy, modules); a log of
// another context is refused, never mixed in.
class ProgramMeasureLog {
public:
  // Reads `path` if it exists (it must be of `context`), else starts empty.
  static Expected<ProgramMeasureLog> open(std::filesystem::path path, std::string context);
  // The context of a program search: everything a pipeline's measures depend
  // on besides the pipeline.
  static std::string contextOf(const evaluators::Scorer& evaluator,
                               std::span<const corpus::ModuleSpec* const> modules,
                               const policies::Policy* inliner);

  // Per module (NaN: the job failed), if `pipeline` was logged.
  const std::vector<double>* find(const policies::PassPipeline& pipeline) const;
  // -Oz's per module (none: failed), once logged.
  const std::optional<std::vector<std::optional<double>>>& baselines() const { return baselines_; }
  size_t size() const { return measures_.size(); }
  // Adds a batch (a pipeline logged before keeps its measures) and rewrites
  // the file when something is new.
  Status record(const std::vector<std::optional<double>>& baselines,
                const std::vector<policies::PassPipeline>& pipelines,
                const std::vector<std::vector<double>>& measures);

private:
  ProgramMeasureLog(std::filesystem::path path, std::string context)
      : path_(std::move(path)), context_(std::move(context)) {}
  std::filesystem::path path_;
  std::string context_;
  std::optional<std::vector<std::optional<double>>> baselines_;
  std::map<std::string, std::vector<double>> measures_; // by canonical description
  std::vector<std::string> order_;                      // as logged
};

// `rounds` bounds the combination rounds (options.rounds is per module;
// the program's may be longer).
Expected<ProgramPipelineSearch>
searchProgramPipeline(evaluators::Scorer& evaluator,
                      std::span<const corpus::ModuleSpec* const> modules,
                      const PipelineSearchOptions& options, size_t rounds,
                      const std::function<void(const ProgramPipelineStep&)>& progress = {});

// `progress` (optional) hears each finished round: its name and compiles.
Expected<PipelineSearchSummary>
searchPipelines(evaluators::Scorer& evaluator, std::span<const corpus::ModuleSpec* const> modules,
                const PipelineSearchOptions& options,
                const std::function<void(const std::string&, size_t)>& progress = {});

} // namespace mlgo::training
