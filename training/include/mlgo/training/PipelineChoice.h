// Learning a module-level pipeline policy (policies::PipelineChoice), as
// Coreset-NVP does: a pool of candidate pipelines is compiled on every
// training module; a small set ("coreset") is chosen greedily so that each
// module taking the best of the set shrinks the training total most; each
// training module is labelled with its best pipeline of the set, and a
// module's features (ModuleFeatures.h) choose at build time by its nearest
// labelled training modules.
//
// The pool's first pipeline is the fallback every set starts with (-Oz, or
// a shipped program pipeline), so the set's best-of never exceeds it.
//
// With an inliner policy, a pool pipeline may run it or LLVM's heuristic:
// the choice then picks per module both the pipeline and who inlines
// (PipelineChoice::heuristicInliner), so the two tasks are chosen together
// and an inliner policy that makes some code larger runs only where it
// looked good.
#pragma once

#include "mlgo/evaluators/Scorer.h"
#include "mlgo/policies/Ir2VecVocabulary.h"
#include "mlgo/policies/PassPipeline.h"
#include "mlgo/support/Expected.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mlgo::training {

struct PipelineChoiceOptions {
  // Pipelines in the set, the fallback included (the pool's first).
  size_t setSize = 4;
  // Training modules that vote for a module's pipeline.
  size_t neighbours = 5;
  // The share of their votes a pipeline other than the fallback needs; with
  // the cost vote, the share of their weight on which it gained
  // (PipelineChoice::agreement); 0: the most voted (or cheapest) wins.
  double agreement = 0;
  // The novelty guard (PipelineChoice::maxDistance): a module farther from
  // every example than this quantile of the examples' own nearest-other
  // distances keeps the fallback; 1: off.
  double novelty = 1;
  // The distances to the nearest example of another code base instead:
  // what a module of an unseen code base meets (bench/pipeline-v14.sh).
  bool noveltyAcrossCodeBases = false;
  // How the neighbours vote: with their labels (the best of the set on
  // each), or with their costs (each set pipeline's relative change against
  // the fallback; PipelineChoice::Example::costs), by the weighted mean
  // (Cost) or the weighted median (CostMedian: half the neighbours' weight
  // must gain; round 21).
  enum class Vote { Label, Cost, CostMedian };
  Vote vote = Vote::Label;
  bool votesWithCosts() const { return vote != Vote::Label; }
  // With a cost vote: how much cheaper (a share) than the fallback another
  // pipeline must look (PipelineChoice::margin).
  double margin = 0;
  // With a vocabulary, the features end with the module's IR2Vec embedding
  // (policies::moduleFeatureNames(dimension)), and the choice carries it.
  std::optional<policies::Ir2VecVocabulary> embedding;
  // A candidate joins the set only if it shrinks the set's best-of total by
  // at least this share of the fallback's total (noise guard).
  double minimumGain = 0.0005;
  Status validate() const;
};

// A pool pipeline, and whether the inliner policy given to learning runs in it.
struct ChoiceCandidate {
  ChoiceCandidate(policies::PassPipeline pipeline, bool withInliner = false)
      : pipeline(std::move(pipeline)), withInliner(withInliner) {}
  policies::PassPipeline pipeline;
  bool withInliner = false;
  std::string describe() const; // "-Oz -GVNPass", "-Oz -GVNPass, inliner policy"
  bool operator==(const ChoiceCandidate&) const = default;
};

struct PipelineChoiceResult {
  policies::PipelineChoice choice;
  std::vector<size_t> setInPool;   // the set's pipelines as pool indices
  double fallbackTotal = 0;        // every module with the pool's first
  double oracleTotal = 0;          // each module with its best of the set
  double chosenTotal = 0;          // leave-one-out: each module as its neighbours choose
  std::vector<size_t> labels;      // per module: its best of the set
  std::vector<size_t> leaveOneOut; // per module: the choice without itself
  // With the modules' code bases given: each module as the other code
  // bases' modules choose (what an unseen code base gets; a module's
  // nearest neighbours are mostly its own code base's, so leave-one-out
  // promises more).
  std::optional<double> codeBaseOutTotal;
  std::vector<size_t> leaveCodeBaseOut; // per module (empty without code bases)
  size_t compiled = 0;
};

// `features`: per module, moduleFeatureVector() of its counts (the
// bitcode's, equal to what the pipeline start reads). `pool[0]` is the
// fallback. Modules where some pool pipeline fails keep only the pipelines
// that compiled as labels. `inliner` runs in the candidates withInliner
// (needed if any is).
Expected<PipelineChoiceResult> learnPipelineChoice(
    evaluators::Scorer& evaluator, std::span<const corpus::ModuleSpec* const> modules,
    const std::vector<std::vector<double>>& features, const std::vector<ChoiceCandidate>& pool,
    std::shared_ptr<const policies::Policy> inliner, const PipelineChoiceOptions& options);

// The pool compiled on every module: measures[p][m] (NaN where it failed).
std::vector<std::vector<double>>
measureChoicePool(evaluators::Scorer& evaluator, std::span<const corpus::ModuleSpec* const> modules,
                  const std::vector<ChoiceCandidate>& pool,
                  std::shared_ptr<const policies::Policy> inliner);

// A measured pool kept in a file (TSV: a header naming `context` and each
// stored candidate, then a row per module), so that learning can be run
// again with other options, or with more pool candidates, compiling only
// the candidates the file lacks. Columns are found by the candidate's
// description, so the pool's order does not matter. Reading refuses a file
// whose context or modules differ from the ones given, naming the first
// difference.
struct PoolMeasures {
  std::vector<std::string> candidates;      // each column's describe()
  std::vector<std::vector<double>> columns; // columns[c][m]; NaN where it failed
  // The stored column of a candidate, or nullptr.
  const std::vector<double>* find(const ChoiceCandidate& candidate) const;
  // Adds a candidate's column, or replaces the stored one.
  void store(const ChoiceCandidate& candidate, std::vector<double> column);
};
Status writePoolMeasures(const std::string& path, const std::string& context,
                         std::span<const corpus::ModuleSpec* const> modules,
                         const PoolMeasures& stored);
Expected<PoolMeasures> readPoolMeasures(const std::string& path, const std::string& context,
                                        std::span<const corpus::ModuleSpec* const> modules);

// The learning data, for choosers tried outside the tool: a TSV with a
// header (module, code_base, each feature's name, then each pool
// candidate's description) and a row per module (its features unscaled, as
// moduleFeatureVector() gives them, and measures[p][m]; "nan" where it
// failed). Written through a partial file, so a reader never sees half.
Status writeChoiceData(const std::string& path, std::span<const corpus::ModuleSpec* const> modules,
                       const std::vector<std::string>& codeBaseOf,
                       const std::vector<std::string>& featureNames,
                       const std::vector<std::vector<double>>& features,
                       const std::vector<ChoiceCandidate>& pool,
                       const std::vector<std::vector<double>>& measures);

// --verify-pool-measures: the stored measures against the pool compiled
// again; an error names the first module and candidate that differ (a
// failure on both sides is the same).
Status comparePoolMatrices(const std::vector<std::vector<double>>& stored,
                           const std::vector<std::vector<double>>& compiled,
                           std::span<const corpus::ModuleSpec* const> modules,
                           const std::vector<ChoiceCandidate>& pool);

// The same from a measured matrix (measures[p][m]: pool pipeline p on
// module m; NaN where it failed): the set, labels and the choice. When any
// pool candidate runs the inliner policy, the choice's heuristicInliner
// lists the set's candidates that do not.
// `codeBaseOf` (per module, or empty): also the leave-one-code-base-out
// estimate. The scaling stays the one learned on every module.
Expected<PipelineChoiceResult> choosePipelineSet(const std::vector<std::vector<double>>& measures,
                                                 const std::vector<std::vector<double>>& features,
                                                 const std::vector<ChoiceCandidate>& pool,
                                                 const PipelineChoiceOptions& options,
                                                 const std::vector<std::string>& codeBaseOf = {});

} // namespace mlgo::training
