// mlgo-cc --mlgo-search: the build-time search of one translation unit.
//
//   1. the frontend writes the unit's module as bitcode (its diagnostics and
//      dependency files come out here, once);
//   2. the search cache is asked for the unit's inputs (SearchCache.h); a
//      hit gives the chosen decisions at once;
//   3. on a miss the searcher (the evaluator's decision search, given by the
//      caller so that this layer stays free of LLVM) compiles -Oz, the policy
//      and up to BUDGET tried decisions of the module, starting from the
//      unit's previous choice if it had one, and the result is cached;
//   4. the object is compiled from the bitcode with the chosen decisions (a
//      flip-set policy through the plugin), or with none when -Oz's own
//      object was the smallest — so no object is larger than -Oz's.
// The object's .text is then checked against the search's measurement; a
// difference is reported and the -Oz object is written instead.
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/deploy/Launcher.h"

#include <cstdint>
#include <functional>
#include <string>

namespace mlgo::deploy {

struct UnitSearchRequest {
  corpus::ModuleSpec module;  // the unit's bitcode and its cc1 command, as a corpus stores them
  std::string policyFile;     // the deployed policy: the search's start and guide
  std::string previousPolicy; // the unit's previous choice (a flip-set policy file's text), or ""
  size_t budget = 0;          // decisions tried
  bool verify = false;        // every incremental or replayed answer compiled in full as well
};

struct UnitSearchOutcome {
  uint64_t ozBytes = 0;     // .text of -Oz's object
  uint64_t chosenBytes = 0; // .text with the chosen decisions (≤ ozBytes)
  // The chosen decisions as a flip-set policy file's text; "" for -Oz's own.
  std::string chosenPolicy;
  std::string summary; // one line for --mlgo-verbose
};

using UnitSearcher = std::function<Expected<UnitSearchOutcome>(const UnitSearchRequest&)>;

// The task the searcher optimises; part of the cache key.
inline constexpr std::string_view kSearchTask = "inlining-size";

// Runs a planned command with plan.search set; returns the exit status. A
// command the search cannot take (not one frontend job) runs with the policy
// alone, with a warning.
int runSearchLaunch(const LaunchPlan& plan, const UnitSearcher& searcher);

// --mlgo-cache-stats and --mlgo-cache-clear: print or clear the cache.
int runCacheCommand(const LaunchPlan& plan, const EnvironmentLookup& environment);

} // namespace mlgo::deploy
