// The run cost of a recipe's benchmark program built with a policy
// (docs/run-cost.md): the program is built from source through mlgo-cc as a
// user builds it (plain clang-22 for the baseline), run on its workload
// under Valgrind's cachegrind with a fixed simulated cache, and costed from
// the counts; its output must equal the baseline build's. Wall time is
// measured beside it, reported and never trusted alone: the machines are
// shared and noisy, the counts are not.
#pragma once

#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::deploy {

// Cachegrind's event counts of one or more runs (--cache-sim=yes): the
// "summary:" line of its output file, in the order of its "events:" line.
struct CachegrindCounts {
  uint64_t ir = 0;                     // instructions executed
  uint64_t i1mr = 0, ilmr = 0;         // instruction-fetch misses: first level, last level
  uint64_t dr = 0, d1mr = 0, dlmr = 0; // data reads, their misses
  uint64_t dw = 0, d1mw = 0, dlmw = 0; // data writes, their misses
  CachegrindCounts& operator+=(const CachegrindCounts& other);
  bool operator==(const CachegrindCounts&) const = default;
};

// The counts in one cachegrind output file; an error names the file.
Expected<CachegrindCounts> readCachegrindFile(const std::filesystem::path& file);
Expected<CachegrindCounts> parseCachegrindSummary(const std::string& text,
                                                  const std::string& where);

// The run cost: a cycle estimate from the counts with the weights Valgrind's
// documentation gives (an L1 miss about 10 cycles) and KCachegrind's cycle
// estimate uses for the last level (100): Ir + 10·(I1mr + D1mr + D1mw) +
// 100·(ILmr + DLmr + DLmw). Fixed here, so costs compare across runs.
double cycleEstimate(const CachegrindCounts& counts);

// Valgrind's arguments: the cache simulated is fixed (32 KiB 8-way L1s,
// 8 MiB 16-way last level, 64-byte lines) rather than read off the host, so
// that counts do not depend on the machine; output files `pattern` (with
// %p for the process id: a benchmark may start several programs).
std::vector<std::string> cachegrindArguments(const std::string& pattern);

// Wall time of repeated runs: the median and a distribution-free confidence
// interval for it from order statistics.
struct WallTime {
  std::vector<double> seconds; // every run, in order
  double median = 0;
  double low = 0, high = 0; // the interval
  double coverage = 0;      // its confidence (≥ 0.9 when the runs allow it)
};
WallTime summariseWallTimes(std::vector<double> seconds);

struct RunCostOptions {
  std::filesystem::path repository; // the source tree (corpus/recipes/NAME.sh)
  std::filesystem::path workRoot;   // builds, workloads and runs are kept here
  std::string launcher;             // mlgo-cc
  std::string optLevel = "Oz";      // the build's -O level (O2 for register allocation)
  std::string workload = "full";    // tiny (tests) or full
  size_t wallRuns = 5;              // native runs timed (0: none)
  bool cachegrind = true;           // run under cachegrind (false: wall time only)
  size_t cachegrindRuns = 1;        // runs under cachegrind; > 1 measures their spread
  bool verbose = false;             // progress on standard error
  // Builds are cached by the recipe's sources, the level, the policies and
  // the tools; with this, a cached build is made again and must give the
  // same programs byte for byte.
  bool verifyBuilds = false;
  Status validate() const;
};

// What a build deploys: nothing (plain clang-22, the baseline), or
// policies through mlgo-cc, each as the environment variable it reads
// (CompilerTask::launcherEnvironment: MLGO_POLICY, MLGO_PIPELINE_POLICY,
// MLGO_EVICTION_POLICY) and a file or shipped name.
struct DeployedPolicies {
  std::vector<std::pair<std::string, std::string>> policies; // (variable, policy)
  bool plain() const { return policies.empty(); }
  std::string describe() const; // "plain clang", "inlining-oz + pipeline-oz"
};

struct RunCost {
  std::string recipe;
  std::filesystem::path build; // where the program was built
  std::optional<CachegrindCounts> counts;
  double cost = 0;       // cycleEstimate(counts) of the first cachegrind run
  double costSpread = 0; // (largest − smallest) / smallest cost over the cachegrind runs
  std::string output;    // what the benchmark printed
  WallTime wall;
  size_t programs = 0; // cachegrind output files summed (processes started)
};

// Builds RECIPE's benchmark with `policies` (cached in workRoot by the
// recipe, level and the policies' contents), makes its workload (cached),
// runs it under cachegrind and natively. A failed build or run is an error
// naming the recipe and its log.
Expected<RunCost> measureRunCost(const std::string& recipe, const DeployedPolicies& policies,
                                 const RunCostOptions& options);

// A benchmark program's name: "NAME-O2" is recipe NAME at -O2 (any of
// Oz, Os, O1, O2, O3 after the dash), "NAME" recipe NAME at `level`.
std::pair<std::string, std::string> programRecipeAndLevel(const std::string& program,
                                                          const std::string& level);

// The recipes of `repository` that declare a benchmark.
std::vector<std::string> benchmarkRecipes(const std::filesystem::path& repository);

} // namespace mlgo::deploy
