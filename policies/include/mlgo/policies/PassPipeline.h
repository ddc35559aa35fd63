// The pass-pipeline task's action: which optimisation pipeline a module is
// compiled with, described around clang's own -Oz pipeline so that the
// empty description is exactly -Oz (the neutral action) and every other is
// a few named changes to it. Two action spaces:
//
// (a) structured, around -Oz: pass classes of the -Oz pipeline not run
//     (by LLVM's class name, "LoopRotatePass", in every phase or in one:
//     "SimplifyCFGPass@late"), and passes added at PassBuilder's extension
//     points, in opt's textual syntax ("optimizer-last" ->
//     "function(instcombine,simplifycfg)"; the points are opt's
//     -passes-ep-* names, so `opt -passes-ep-optimizer-last=...` reproduces
//     one);
// (b) a replacement, CompilerGym-style: a textual module pipeline run at
//     the pipeline's start, after which no optional pass of -Oz's runs
//     ("function(sroa,instcombine),globaldce", or "default<Os>").
//
// The inliner belongs to the inlining task: the inliner passes cannot be
// skipped, so the inliner's decisions (its policy's or the heuristic's)
// combine with any pipeline. This header knows no LLVM: the compiler side
// (inprocess/src/PipelineHooks.h) applies an action and reports a text
// LLVM cannot parse.
#pragma once

#include "mlgo/policies/Ir2VecVocabulary.h"

#include "mlgo/policies/Policy.h"
#include "mlgo/support/Expected.h"

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mlgo::policies {

// PassBuilder's extension points, as opt's -passes-ep-<name> options name
// them; each takes passes of one kind (function, loop, cgscc or module).
enum class ExtensionPoint {
  Peephole,                    // function passes, after each instcombine
  LateLoopOptimizations,       // loop passes
  LoopOptimizerEnd,            // loop passes
  ScalarOptimizerLate,         // function passes
  CgsccOptimizerLate,          // cgscc passes
  VectorizerStart,             // function passes
  VectorizerEnd,               // function passes
  PipelineStart,               // module passes
  PipelineEarlySimplification, // module passes
  OptimizerEarly,              // module passes
  OptimizerLast,               // module passes
};
std::string_view extensionPointName(ExtensionPoint point); // "optimizer-last"
Expected<ExtensionPoint> parseExtensionPoint(std::string_view name);
const std::vector<ExtensionPoint>& allExtensionPoints();

// Where in -Oz's pipeline a pass runs: before the module inliner, inside it
// (the function simplification of each SCC), or after it (the module
// optimisation pipeline).
enum class PipelinePhase { Early, Inliner, Late };
std::string_view phaseName(PipelinePhase phase); // "early", "inliner", "late"

struct SkippedPass {
  std::string passClass;              // LLVM's name: "LoopRotatePass"
  std::optional<PipelinePhase> phase; // none: in every phase
  std::string text() const;           // "LoopRotatePass" or "LoopRotatePass@late"
  bool operator==(const SkippedPass&) const = default;
  auto operator<=>(const SkippedPass&) const = default;
};
Expected<SkippedPass> parseSkippedPass(std::string_view text);

// The extension points whose added passes can run beside pass parameters
// (-Oz then runs as its text, where these points have a known place).
bool parametersTakeAdditionsAt(ExtensionPoint point);

struct PassPipeline {
  std::vector<SkippedPass> skipped;                              // space (a)
  std::vector<std::pair<ExtensionPoint, std::string>> additions; // space (a), in order
  std::string replacement;                                       // space (b)
  // Space (a): a pass of -Oz's pipeline (its name in opt's syntax, "gvn")
  // run with these parameters ("no-load-pre") wherever -Oz runs it. -Oz is
  // then run as its text (clang's own, printed), edited; skipped passes,
  // an inliner policy and added passes at the points of
  // parametersTakeAdditionsAt still apply.
  std::vector<std::pair<std::string, std::string>> parameters;

  bool neutral() const {
    return skipped.empty() && additions.empty() && replacement.empty() && parameters.empty();
  }
  // "-Oz", or the changes: "-Oz -LoopRotatePass@late +optimizer-last=function(instcombine)
  // gvn<no-load-pre>", or "replace: function(sroa),globaldce".
  std::string describe() const;
  // Checks what needs no compiler: known pass classes (ozPassClasses), not
  // the inliner's, no duplicate, a replacement alone, parameters beside
  // additions only where the text takes them, no empty text.
  Status validate() const;
  // The same pipeline whatever the order its changes were listed in:
  // skipped passes and parameters sorted and unique (additions keep their
  // order: it is the order they run in).
  PassPipeline canonical() const;
  bool operator==(const PassPipeline&) const = default;
};

// The optional pass classes clang-22's -Oz pipeline runs on ordinary C and
// C++ code: the structured space's coordinates (the inliner's and the
// required passes are not among them).
const std::vector<std::string>& ozPassClasses();
// Passes that belong to the inlining task: never skipped.
bool isInlinerPass(std::string_view passClass);

// A module-level choice among a set of structured pipelines (a learned set,
// as Coreset-NVP's): the `neighbours` training modules nearest to a module
// in the scaled feature space (ModuleFeatures.h) vote for the pipeline that
// was best on them, each with weight 1 / (distance + 1e-9); the most voted
// wins, the lower index on a tie, unless its share of the votes is below
// `agreement`: then pipeline 0 (the fallback) does. The compiler side computes the features
// when the pipeline starts, so a build chooses what the evaluator chose.
//
// When the examples carry `costs` (every example or none), the neighbours
// vote with them instead of their labels: each pipeline's cost is the
// neighbours' mean relative change against the fallback (same weights), and
// the cheapest wins, the fallback on a tie and unless another is cheaper by
// more than `margin`. A label says only which pipeline was best on a
// training module, however slightly; costs also say by how much and what
// the others would have cost, so a neighbour where a pipeline lost much
// outweighs two where it won a few bytes. With costs, `agreement` asks
// more: the winner must also be cheaper than the fallback on at least that
// share of the neighbours' weight, so that one neighbour's large gain does
// not carry a module alone.
//
// The vote (`vote`, with costs): the neighbours' weighted mean cost, or
// their weighted median (the least cost such that the neighbours at or
// below it carry at least half the weight). A mean is carried by one
// neighbour's large gain; a median needs half the neighbours' weight to
// gain, so a module whose nearest examples mostly lose stays at the
// fallback (round 21: the first vote that, with each of 66 code bases left
// out in turn, made none of them larger than -Oz).
//
// Guard for code unlike the training code: a module whose nearest example
// is farther than `maxDistance` (scaled space) keeps the fallback, since
// its neighbours, however near to each other, say little about it.
//
// A second opinion (`confirm`, with costs): a linear model of each
// alternative's relative change from the scaled features, fit on the
// examples (ridge regression); the vote's winner must also be predicted
// cheaper than the fallback, or the fallback runs. Two models of another
// kind (local and global) agreeing is rarer where either is wrong.
//
// With an inliner policy in the pipeline policy, each alternative also says
// who inlines: the policy's inliner, or (listed in `heuristicInliner`)
// LLVM's own heuristic, so that a choice can run the inliner policy only on
// the modules that look like those where it helped (the inliner is
// consulted after the pipeline's start, when the choice is made).
//
// The inliner's price (`inlinerMargin`, with costs): an alternative that
// runs the policy's inliner votes that much worse, so it must undercut the
// fallback by the margin plus this. On code it did not train on the inliner
// policy gains less than on its own, and the examples of its training code
// carry its in-sample costs (round 22).
struct PipelineChoice {
  struct Example {
    std::vector<double> features; // scaled
    size_t pipeline = 0;          // its best among `pipelines`
    // Optional: per pipeline, its measure's relative change against the
    // fallback's on this module (costs[0] = 0).
    std::vector<double> costs;
  };
  enum class CostVote { Mean, Median }; // file field "vote": absent or "median"
  std::vector<PassPipeline> pipelines;  // structured (no replacement)
  // moduleFeatureNames(d) when written, d the embedding's dimension (0
  // without one)
  std::vector<std::string> features;
  // With it, a module's features end with its IR2Vec embedding under this
  // vocabulary (ModuleFeatures.h), which the compiler side computes too.
  std::optional<Ir2VecVocabulary> embedding;
  std::vector<double> mean, scale; // scaled = (x - mean) / scale
  size_t neighbours = 5;
  double agreement = 0; // in [0, 1]; 0: the most voted (or cheapest) always wins
  double margin = 0;    // >= 0; with costs: how much cheaper than the fallback another must be
  // >= 0; with costs and an inliner policy: what an alternative running the
  // policy's inliner must undercut the fallback by, besides `margin`
  double inlinerMargin = 0;
  CostVote vote = CostVote::Mean; // with costs: how the neighbours' costs make a pipeline's
  // > 0; the fallback for a module with no example this near (infinity: off)
  double maxDistance = std::numeric_limits<double>::infinity();
  std::vector<Example> examples;
  // Optional, with costs: (features + 1) x pipelines weights, row-major,
  // the last row the intercepts; a module's predicted relative change under
  // pipeline p is sum_f scaled[f] * confirm[f * P + p] + confirm[F * P + p].
  std::vector<double> confirm;
  // The confirm model's prediction for `pipeline` (scaled features in).
  double confirmed(const std::vector<double>& point, size_t pipeline) const;
  // The weighted median of the k nearest examples' costs of `pipeline`
  // (`nearest`: (distance, example), the k nearest first).
  double weightedMedianCost(const std::vector<std::pair<double, size_t>>& nearest, size_t k,
                            size_t pipeline) const;
  bool votesWithCosts() const { return !examples.empty() && !examples[0].costs.empty(); }
  // The alternatives (indices, sorted, unique) in which LLVM's inlining
  // heuristic decides rather than the pipeline policy's inliner. Only with
  // an inliner policy (makePipelinePolicy refuses it otherwise).
  std::vector<size_t> heuristicInliner;
  // Set: every module gets this alternative whatever its features (file
  // field "forced"). mlgo-cc --mlgo-best-of-set compiles a translation unit
  // once per alternative this way and keeps the smallest object; what each
  // compile gets is then exactly what the choice gives when it picks it.
  std::optional<size_t> forced;

  // Whether alternative `pipeline` runs the policy's inliner (when the
  // policy has one).
  bool inlinerPolicyIn(size_t pipeline) const;
  std::vector<double> scaled(const std::vector<double>& features) const;
  size_t choose(const std::vector<double>& features) const; // unscaled features in
  // The Euclidean distance the vote measures, between two scaled vectors.
  static double distance(const std::vector<double>& a, const std::vector<double>& b);
  size_t embeddingDimension() const { return embedding ? ir2VecDimension(*embedding) : 0; }
  // This choice with every module given alternative `pipeline`.
  PipelineChoice forcedTo(size_t pipeline) const;
  // Pipelines valid and structured, the features the compiler computes,
  // the examples' sizes and labels in range, heuristicInliner sorted,
  // unique and in range.
  Status validate() const;
};

// A policy of the pass-pipeline task: the pipeline every module gets, or
// with a choice, the pipeline chosen per module from its features. It reads
// no decision features and makes no per-decision choices (decide() is never
// asked by the compiler side; it answers 0).
//
// It may carry an inliner policy (file field "inliner": a whole policy
// object): the inliner's decisions under the pipeline, so that one policy
// (and one evaluator job) combines the two tasks. Without one, the inliner
// is LLVM's heuristic.
class PipelinePolicy final : public Policy {
public:
  explicit PipelinePolicy(PassPipeline pipeline, std::shared_ptr<const Policy> inliner = nullptr,
                          std::shared_ptr<const PipelineChoice> choice = nullptr)
      : pipeline_(std::move(pipeline)), inliner_(std::move(inliner)), choice_(std::move(choice)) {}
  std::string describe() const override {
    return (choice_ ? "choice of " + std::to_string(choice_->pipelines.size()) + " pipelines"
                    : "pipeline " + pipeline_.describe()) +
           (inliner_ ? ", inliner " + inliner_->describe() : "");
  }
  const std::vector<TensorSpec>& inputs() const override { return inputs_; }
  Decision decide(FeatureValues, DecisionMode, RandomStream&) const override { return {}; }
  // Without a choice, every module's pipeline.
  const PassPipeline& pipeline() const { return pipeline_; }
  const std::shared_ptr<const Policy>& inliner() const { return inliner_; }
  const std::shared_ptr<const PipelineChoice>& choice() const { return choice_; }

private:
  PassPipeline pipeline_;
  std::shared_ptr<const Policy> inliner_;
  std::shared_ptr<const PipelineChoice> choice_;
  std::vector<TensorSpec> inputs_;
};

// With a choice: one policy per alternative of its set, every module given
// that alternative (PipelineChoice::forced), in the set's order; without
// one, empty. What `mlgo-cc --mlgo-best-of-set` and `mlgo-eval report
// --best-of-set` compile.
std::vector<std::shared_ptr<const PipelinePolicy>> forcedAlternatives(const PipelinePolicy& policy);

// Checks the pipeline (PassPipeline::validate).
Expected<std::unique_ptr<Policy>>
makePipelinePolicy(PassPipeline pipeline, std::shared_ptr<const Policy> inliner = nullptr,
                   std::shared_ptr<const PipelineChoice> choice = nullptr);

} // namespace mlgo::policies
