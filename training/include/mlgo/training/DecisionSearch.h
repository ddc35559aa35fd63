// How much a module's code shrinks when single inlining decisions are
// flipped away from -Oz: a greedy per-module search. Starting from the
// compiler's own decisions, round r flips the r-th decision of every module's
// current best trajectory (all modules in one parallel evaluation) and keeps
// a flip only where it made that module smaller. The result is a flip-set
// policy (policies/FlipSet.h): -Oz except at the kept decision states. It
// measures the headroom per call site, and its trajectories are better
// labels than the heuristic's for behavioural cloning (search on training
// code bases only).
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Scorer.h"
#include "mlgo/policies/FlipSet.h"

#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace mlgo::training {

struct DecisionSearchOptions {
  // Decisions tried per module, from the first: one round each. Modules
  // with fewer decisions finish early.
  size_t maxDecisions = 50;
  // Called after every round with (round, rounds, the flips kept so far),
  // e.g. to save them; false stops the search after that round (its result
  // is kept).
  std::function<bool(size_t, size_t, const policies::FlipSetPolicy&)> onRound;

  Status validate() const;
};

struct ModuleSearch {
  std::optional<uint64_t> baselineBytes; // -Oz
  std::optional<uint64_t> bestBytes;     // with its kept flips, as measured in the search
  size_t decisions = 0;                  // of the -Oz trajectory
  size_t tried = 0;
  size_t kept = 0;
};

struct DecisionSearchResult {
  policies::FlipSetPolicy policy;
  std::vector<ModuleSearch> modules; // in the order given
  size_t rounds = 0;
  size_t compilations = 0;
};

// Errors: the modules' -Oz trajectories could not be recorded (every module
// failed), or the header has no default decision. Modules that fail are left
// at -Oz. A state shared by two modules is flipped for both: the sizes in the
// result are the search's measurements; compile the policy again for exact
// totals (mlgo-eval report).
Expected<DecisionSearchResult> searchDecisions(evaluators::Scorer& scorer,
                                               std::span<const corpus::ModuleSpec* const> modules,
                                               const DecisionSearchOptions& options);

} // namespace mlgo::training
