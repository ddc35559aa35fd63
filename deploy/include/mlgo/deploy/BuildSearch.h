// mlgo-cc --mlgo-search: the build-time search of one translation unit.
//
//   1. The compile runs as the user wrote it, with the plugin asked to look
//      the unit up in the search cache (policies/SearchCache.h): the plugin
//      hashes the module before any pass with the launcher's command key. A
//      hit compiles with the cached decisions and that is all: one compile.
//   2. A miss compiles with -Oz's own decisions (the plain -Oz object, a
//      candidate by construction) and leaves the module's bitcode behind.
//   3. The searcher (mlgo-build-search: the evaluator's decision search on
//      one in-process worker) starts from the best of -Oz, the policy and
//      the unit's previous choice, and tries BUDGET single flips.
//   4. If the search found a smaller object, its answer is cached and the
//      unit compiled again as in step 1: a hit, the very compile a rebuild
//      makes. The object is kept only if its .text is what the search
//      measured (else -Oz's goes back, and "-Oz" is cached), so a rebuild
//      always gives the first build's object, byte for byte.
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
  // .text of the unit's -Oz object as clang just compiled it (0: unknown):
  // the search need not compile -Oz again (unless verifying).
  uint64_t ozBytes = 0;
  bool verify = false; // every incremental or replayed answer compiled in full as well
};

struct UnitSearchOutcome {
  uint64_t ozBytes = 0;     // .text of -Oz's object, as the search measured it
  uint64_t chosenBytes = 0; // .text with the chosen decisions (≤ ozBytes)
  // The chosen decisions as a flip-set policy file's text; "" for -Oz's own.
  std::string chosenPolicy;
  std::string summary; // one line for --mlgo-verbose
};

using UnitSearcher = std::function<Expected<UnitSearchOutcome>(const UnitSearchRequest&)>;

// The searcher as a program (mlgo-build-search): the request as flags and
// files beside the request's bitcode, the outcome read back from there.
UnitSearcher searchProgram(std::string program);
// The program's side: its arguments into a request (the files read), and
// the outcome written where the arguments say.
struct SearchProgramCall {
  UnitSearchRequest request;
  std::string outcomeFile, chosenPolicyFile;
};
Expected<SearchProgramCall> parseSearchProgramArguments(const std::vector<std::string>& arguments);
Status writeSearchOutcome(const SearchProgramCall& call, const UnitSearchOutcome& outcome);

// Runs a planned command with plan.search set; returns the exit status.
int runSearchLaunch(const LaunchPlan& plan, const UnitSearcher& searcher);

// --mlgo-cache-stats and --mlgo-cache-clear: print or clear the cache.
int runCacheCommand(const LaunchPlan& plan, const EnvironmentLookup& environment);

} // namespace mlgo::deploy
