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
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mlgo::training {

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
std::vector<policies::PassPipeline> structuredMoves();
std::vector<policies::PassPipeline> standardReplacements();
// The sequence space's random replacement `index` for module `moduleIndex`.
policies::PassPipeline randomReplacement(uint64_t seed, uint64_t moduleIndex, uint64_t index,
                                         size_t length);

// `progress` (optional) hears each finished round: its name and compiles.
Expected<PipelineSearchSummary>
searchPipelines(evaluators::Scorer& evaluator, std::span<const corpus::ModuleSpec* const> modules,
                const PipelineSearchOptions& options,
                const std::function<void(const std::string&, size_t)>& progress = {});

} // namespace mlgo::training
