// ES and sep-CMA-ES over the pass-pipeline task's structured space, with a
// program-level reward: the blackbox alternative to the greedy program
// search (PipelineSearch.h), on the project's own ES engine (es/).
//
// Each of the structured space's changes (structuredMoves(): skip one of
// -Oz's pass classes, add one clean-up) has one real parameter θ_i; a point
// θ is the pipeline with every change whose θ_i > 0. The optimiser asks for
// a population of points, each is decoded into its pipeline and compiled on
// every training module; its reward is how much smaller than -Oz the
// program's objective is, in percent (the total, plus regressionWeight times
// the bytes modules grow over -Oz, as the greedy search's). Two points that
// decode to the same pipeline are compiled once: a cache keyed by the
// canonical pipeline serves every later ask (verifyCache compiles cached
// pipelines again and fails on any difference). The result is the best
// pipeline any step compiled (the start's included, so never worse than
// it); the state after every step is a checkpoint that resumes the run
// exactly.
#pragma once

#include "mlgo/es/Optimizers.h"
#include "mlgo/evaluators/Scorer.h"
#include "mlgo/policies/PassPipeline.h"
#include "mlgo/support/Expected.h"
#include "mlgo/training/PipelineSearch.h"

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

struct PipelineEsOptions {
  // The optimiser and its own options (sep-CMA-ES by default: no learning
  // rate to tune, and its step size adapts to the ±margin scale of θ).
  es::OptimizerOptions optimizer = es::SepCmaEs::Options{};
  // Optimiser steps (populations compiled).
  int64_t steps = 8;
  // Seeds the optimiser's perturbations.
  uint64_t seed = 1;
  // As PipelineSearchOptions::regressionWeight: growth over -Oz counts
  // 1 + weight times.
  double regressionWeight = 1;
  // (The checkpoint is of one run: resume it with the same modules, seed,
  // weight, optimiser, its options, margin and start.)
  // Where the search starts: its changes (each one of structuredMoves())
  // start on, the others off. Default: -Oz.
  policies::PassPipeline start;
  // |θ_i| at the start: on changes at +margin, off ones at −margin. With
  // sep-CMA-ES's σ0 = 0.3 about one change in 20 flips in the first step.
  double startMargin = 0.5;
  // Every candidate's inliner (PipelineSearchOptions::inliner). None: LLVM's heuristic.
  std::shared_ptr<const policies::Policy> inliner;
  // Compile every cached pipeline a step asks for again and fail if its
  // total differs (the cache claims the compiler's own answer).
  bool verifyCache = false;
  // Written after every step (atomically); a run given an existing one
  // resumes after its last step. Empty: none.
  std::filesystem::path checkpoint;

  Status validate() const;
};

// One step's account.
struct PipelineEsStep {
  int64_t step = 0;
  size_t candidates = 0; // points asked
  size_t distinct = 0;   // distinct pipelines among them
  size_t cacheHits = 0;  // of those, served by the cache
  double meanReward = 0; // % smaller than -Oz's objective, over the successful points
  double bestReward = 0;
  std::string centre;       // the optimiser's point after the step, decoded
  double bestObjective = 0; // the run's best so far
};

struct PipelineEsSummary {
  double baseline = 0;                      // -Oz's total (= its objective)
  std::optional<ProgramPipelineStep> start; // the start pipeline's result
  ProgramPipelineStep best;                 // the best pipeline compiled
  std::vector<PipelineEsStep> steps;        // this run's steps (a resumed run: the new ones)
  int64_t resumedAfter = 0;                 // steps the checkpoint had done
  size_t evaluations = 0;                   // pipelines compiled on every module
  size_t cacheHits = 0;
  size_t compiled = 0;
  double seconds = 0;
};

// The pipeline point θ stands for.
policies::PassPipeline decodePipeline(std::span<const double> theta);
// θ for `pipeline`'s changes (each must be one of structuredMoves()).
Expected<std::vector<double>> encodePipeline(const policies::PassPipeline& pipeline, double margin);

Expected<PipelineEsSummary>
optimiseProgramPipeline(evaluators::Scorer& evaluator,
                        std::span<const corpus::ModuleSpec* const> modules,
                        const PipelineEsOptions& options,
                        const std::function<void(const PipelineEsStep&)>& progress = {});

} // namespace mlgo::training
