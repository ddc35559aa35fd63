// How much a module's code shrinks when single inlining decisions are
// flipped away from -Oz: a greedy per-module search. Starting from the
// compiler's own decisions, each module tries its decisions one after the
// other on its current best trajectory and keeps a flip only where it made
// that module smaller. Modules are searched side by side (one parallel
// evaluation per round) but each with its own flips, so a module's result
// does not depend on the others. The result is a flip-set policy
// (policies/FlipSet.h): -Oz except at the kept decision states. It
// measures the headroom per call site, and its trajectories are better
// labels than the heuristic's for behavioural cloning (search on training
// code bases only).
//
// A tried decision shares its prefix with the trajectory it comes from: with
// incremental trials (Scorer::evaluateTrials) one compile of a module
// answers several of its decisions, each paying only for what comes after
// its decision. The search tries the same decisions and keeps the same flips
// either way.
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Scorer.h"
#include "mlgo/policies/FlipSet.h"
#include "mlgo/results/TraceFile.h"

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

namespace mlgo::training {

// One decision the search tried: the module, the state it flipped (row
// `decision` of `before`, the module's best trajectory then), the module
// before and with the flip, and whether the flip was kept. Tried decisions
// with their outcome are labels that say where a flip helps and where it
// hurts, and by how much (`mlgo-eval search --tried`).
struct TriedDecision {
  size_t module = 0; // index into the modules given
  size_t decision = 0;
  const policies::Trajectory* before = nullptr;
  double measuredBefore = 0; // in the task's measure, which the search compares
  uint64_t bytesBefore = 0;  // its code size, for the trace's size columns
  const evaluators::JobResult* trial = nullptr;
  bool kept = false;
};

enum class SearchOrder {
  First,  // the r-th decision in round r: the start of every trajectory
  Random, // a seeded random order over the -Oz trajectory's positions, so a
          // time-limited search samples whole modules, not only their start
  Guided, // where the start disagrees with the compiler first, then the
          // decisions the guide policy is least sure of (guidedOrder)
};

// The positions of a start trajectory in the order SearchOrder::Guided tries
// them: first the decisions where the start's action is not the compiler's
// (the policy overruled the heuristic there: its likeliest mistakes, and an
// undo is cheap to try), then the rest; within each, the smallest logit
// margin |z1 - z0| of `guide` first (an MLP; any other guide, or none, has
// no margins and keeps the trajectory's order). Ties keep position order,
// so the order is a function of the trajectory alone.
std::vector<size_t> guidedOrder(const policies::Trajectory& start, const policies::Policy* guide);

// A search's progress at a checkpoint: with the same modules, options and
// scorer, enough to continue it exactly where it stopped (the same trials,
// the same flips kept, onTried called with the same rows in the same order).
// Within a round modules are searched in chunks (checkpointModules), so a
// search killed mid-round loses at most one chunk. A module's kept flips are
// its toggled states in the order kept; its trajectory is compiled again on
// resume from the last one (a trial of its decisions before it), and must
// measure what it measured when saved.
struct SearchProgress {
  // A tried flip that did not pay, kept as a pair's first step: its trial's
  // measure, its trial position and state (on the module's start trajectory).
  struct FirstStep {
    double measured = 0;
    size_t position = 0;
    uint64_t state = 0;
    bool operator==(const FirstStep&) const = default;
  };
  struct Module {
    size_t rounds = 0; // rounds this module has done
    size_t next = 0;   // Frontier::next
    bool active = false;
    size_t tried = 0;
    std::optional<double> start, best;
    uint64_t bestBytes = 0;
    std::vector<uint64_t> toggled; // states, in the order the module kept them
    size_t lastPosition = 0;       // the last kept flip's trial position
    // While the module has kept nothing: its cheapest tried flips, the pair
    // phase's first steps (DecisionSearchOptions::pairFirsts).
    std::vector<FirstStep> firsts;
  };
  uint64_t fingerprint = 0;               // searchFingerprint of the search it belongs to
  bool stopped = false;                   // onRound ended the search: nothing is left to do
  bool pairsDone = false;                 // the pair phase has run (it runs once, after the rounds)
  size_t pairTrials = 0, pairModules = 0; // DecisionSearchResult's
  size_t rounds = 0;                      // complete rounds
  std::vector<Module> modules;
  size_t compilations = 0, incremental = 0, verified = 0;
  std::map<std::string, size_t> fullCompiles;
  // The caller's own numbers (e.g. seconds spent, rows of a tried trace).
  std::map<std::string, double> extra;

  // A line-based text, exact for every number (doubles to 17 digits).
  std::string text() const;
  static Expected<SearchProgress> parse(std::string_view text);
};

struct DecisionSearchOptions {
  // Decisions tried per module: one round each. Modules with fewer decisions
  // finish early. 0: none (the result is the start's).
  size_t maxDecisions = 50;
  // Which decision a round tries.
  SearchOrder order = SearchOrder::First;
  // Decisions a module tries per round when the scorer answers trials
  // incrementally (one compile of the module answers them all). A kept flip
  // changes the trajectory the later ones were drawn from: they are
  // discarded and drawn again, so the search tries the same decisions and
  // keeps the same flips whatever this is; larger wastes more trials after a
  // kept flip, smaller pays the base's prefix more often.
  size_t trialsPerRound = 8;
  uint64_t seed = 0; // of the random order
  // Start from this policy's decisions instead of -Oz's (null: -Oz). Its
  // trajectory on each module becomes flips (the states where it differs
  // from the compiler), so the search tries decisions at the states this
  // policy reaches — DAgger-style labels for a policy trained on a search
  // from -Oz — and can also undo the policy's own flips where they cost.
  const policies::Policy* start = nullptr;
  // Search callee-consistent flip sets (CalleeConsistent.h): a tried
  // decision at a discardable callee's first -Oz-inlined call flips all of
  // that callee's -Oz-inlined calls in the module (a group trial), and the
  // result's file says "callee_consistent" so it compiles the same
  // everywhere. Tried decisions at a callee's later calls change nothing.
  bool calleeConsistent = false;
  // Try only decisions whose action in the current trajectory is this one
  // (inlining: 1, so every flip declines a call the trajectory inlines; 0,
  // so every flip inlines one). Labels of one direction train a policy for
  // that direction only (docs/inlining-results.md, one-way policies); the
  // tried trace records it (kFlipsFromAttribute) for bc-train. nullopt:
  // both ways.
  std::optional<int64_t> flipsFrom;
  // Pairs where single flips find nothing: after the rounds, a module that
  // kept no flip takes its `pairFirsts` cheapest tried flips (the least
  // growth; ties to the earlier tried) as first steps and, on each one's
  // trajectory, tries the next `pairSeconds` decisions after it with both
  // flips. A flip that costs alone can pay with a second one that only its
  // trajectory reaches (declining a callee's last remaining call lets its
  // body go; an inline exposes a fold). A module keeps its best pair if it
  // is smaller than its start. 0: no pair phase. It runs once, only when the
  // rounds end by running out of decisions (not when onRound or a budget
  // stops the search), and costs per such module pairFirsts compiles to
  // record the first steps' trajectories plus at most
  // pairFirsts × pairSeconds trials (incremental when the scorer is).
  size_t pairFirsts = 0;
  size_t pairSeconds = 8;
  // SearchOrder::Guided's margins come from this policy (null: `start`).
  const policies::Policy* guide = nullptr;
  // Progress lines on stderr while the start and each round compile (a
  // round over thousands of modules takes many minutes).
  bool showProgress = false;
  // Called for every decision tried, in module order within a round.
  std::function<void(const TriedDecision&)> onTried;
  // Called after every round with (round, rounds, the flips kept so far),
  // e.g. to save them; false stops the search after that round (its result
  // is kept).
  std::function<bool(size_t, size_t, const policies::FlipSetPolicy&)> onRound;
  // Checkpoints: within a round, modules are compiled this many at a time
  // (0: the whole round at once) and onCheckpoint is called after each
  // chunk and after each round's onRound with the progress so far (false
  // stops the search). The same search either way, only chunked.
  size_t checkpointModules = 0;
  std::function<bool(const SearchProgress&)> onCheckpoint;
  // Continue from a checkpoint of this search (its fingerprint must match).
  const SearchProgress* resume = nullptr;

  Status validate() const;
};

// What a checkpoint must match to continue a search: the modules' names,
// the scorer's compiler and task, and every option that changes what is
// tried (maxDecisions, order, seed, trialsPerRound when trials are
// incremental, calleeConsistent, flipsFrom and the pair phase's sizes when
// set; a start policy is checked by its measures).
uint64_t searchFingerprint(const evaluators::Scorer& scorer,
                           std::span<const corpus::ModuleSpec* const> modules,
                           const DecisionSearchOptions& options);

// A module's search, in the task's measure (.text bytes for the inliner).
struct ModuleSearch {
  std::optional<double> baseline; // -Oz
  std::optional<double> start;    // where the search started (-Oz or the start policy)
  std::optional<double> best;     // with its kept flips, as measured in the search
  size_t decisions = 0;           // of the starting trajectory
  size_t tried = 0;
  size_t kept = 0;
};

struct DecisionSearchResult {
  policies::FlipSetPolicy policy;
  std::vector<ModuleSearch> modules; // in the order given
  size_t rounds = 0;
  size_t compilations = 0; // the start's, and every trial's (discarded ones too)
  // Trials answered incrementally, of those verified by a full compile, and
  // the trials compiled in full by why (Scorer::evaluateTrials).
  size_t incremental = 0;
  size_t verified = 0;
  std::map<std::string, size_t> fullCompiles;
  // The pair phase: trials compiled (first steps' recordings included) and
  // modules that kept a pair.
  size_t pairTrials = 0;
  size_t pairModules = 0;
};

// Errors: the modules' -Oz trajectories could not be recorded (every module
// failed), or the header has no default decision. Modules that fail are left
// at -Oz. A state shared by two modules is flipped for both: the sizes in the
// result are the search's measurements; compile the policy again for exact
// totals (mlgo-eval report).
Expected<DecisionSearchResult> searchDecisions(evaluators::Scorer& scorer,
                                               std::span<const corpus::ModuleSpec* const> modules,
                                               const DecisionSearchOptions& options);

// The tried decisions as a trace: one row of /modules per tried decision,
// named after its module (so BC holds out whole modules), with one decision:
// the state flipped, the compiler's default there, and as action the better
// of the two (the flip if it was kept, else the decision taken there before:
// the compiler's, or the start policy's). The row's size is
// the module's with the flip, its baseline the size before it, and its
// reward the task's, of the flip against the decisions before (positive:
// better). Rows are written as they
// come, so an interrupted search leaves every round before it.
class TriedDecisionTrace {
public:
  // The file is created with the first row (whose features it takes). A
  // row's reward is the task's, of the trial against the decisions before.
  TriedDecisionTrace(std::filesystem::path path, results::TraceAttributes attributes,
                     evaluators::RelativeReward reward)
      : path_(std::move(path)), attributes_(std::move(attributes)), reward_(reward) {}
  Status add(const TriedDecision& tried, const std::string& moduleName);
  Status close();
  size_t rows() const { return rows_; }
  // Checkpoints: the rows so far copied to `copy` (flushed first, written
  // beside it and renamed, so a kill never leaves half a copy), and a new
  // trace started from the first `rows` rows of such a copy.
  Status saveCopy(const std::filesystem::path& copy);
  Status restore(const std::filesystem::path& copy, size_t rows);

private:
  std::filesystem::path path_;
  results::TraceAttributes attributes_;
  evaluators::RelativeReward reward_;
  std::optional<results::TraceWriter> writer_; // created with the first row's features
  size_t rows_ = 0;
};

} // namespace mlgo::training
