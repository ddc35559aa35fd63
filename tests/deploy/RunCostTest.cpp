// The run-cost measure's arithmetic (tests/deploy/run-cost.sh runs it on a
// real benchmark): cachegrind's summary, the cycle estimate, the wall-time
// interval.
#include "mlgo/deploy/RunCost.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mlgo::deploy {
namespace {

// A cachegrind.out file as Valgrind 3.19 writes it (--cache-sim=yes), cut
// to its header and summary.
constexpr const char* kOutput = "desc: I1 cache:         32768 B, 64 B, 8-way associative\n"
                                "cmd: ./minigzip -9\n"
                                "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw \n"
                                "fl=???\n"
                                "fn=0x00000000000222a0\n"
                                "0 3 1 1 0 0 0 1 0 0\n"
                                "summary: 3726963 1077 1062 1028811 1101 974 809934 331 306\n";

TEST(RunCost, CachegrindSummaryIsReadByEventName) {
  Expected<CachegrindCounts> counts = parseCachegrindSummary(kOutput, "cg.out");
  ASSERT_TRUE(counts) << counts.error().message;
  EXPECT_EQ(counts->ir, 3726963u);
  EXPECT_EQ(counts->i1mr, 1077u);
  EXPECT_EQ(counts->ilmr, 1062u);
  EXPECT_EQ(counts->dr, 1028811u);
  EXPECT_EQ(counts->d1mr, 1101u);
  EXPECT_EQ(counts->dlmr, 974u);
  EXPECT_EQ(counts->dw, 809934u);
  EXPECT_EQ(counts->d1mw, 331u);
  EXPECT_EQ(counts->dlmw, 306u);
  // Ir + 10·(1077 + 1101 + 331) + 100·(1062 + 974 + 306)
  EXPECT_DOUBLE_EQ(cycleEstimate(*counts), 3726963.0 + 25090.0 + 234200.0);

  // Another event order reads the same counts.
  Expected<CachegrindCounts> reordered =
      parseCachegrindSummary("events: Dw Ir I1mr ILmr Dr D1mr DLmr D1mw DLmw\n"
                             "summary: 809934 3726963 1077 1062 1028811 1101 974 331 306\n",
                             "reordered");
  ASSERT_TRUE(reordered);
  EXPECT_EQ(*reordered, *counts);

  CachegrindCounts twice = *counts;
  twice += *counts;
  EXPECT_EQ(twice.ir, 2 * counts->ir);
  EXPECT_EQ(twice.dlmw, 2 * counts->dlmw);
}

TEST(RunCost, CachegrindErrorsNameTheFileAndTheMissingCount) {
  Expected<CachegrindCounts> noSimulation =
      parseCachegrindSummary("events: Ir\nsummary: 100\n", "cg.123");
  ASSERT_FALSE(noSimulation);
  EXPECT_NE(noSimulation.error().message.find("cg.123"), std::string::npos);
  EXPECT_NE(noSimulation.error().message.find("--cache-sim=yes"), std::string::npos);
  EXPECT_FALSE(parseCachegrindSummary("events: Ir I1mr\nsummary: 100\n", "short"));
  EXPECT_FALSE(parseCachegrindSummary("events: Ir\nsummary: 1x\n", "garbage"));
  EXPECT_FALSE(parseCachegrindSummary("", "empty"));
}

TEST(RunCost, TheSimulatedCacheIsFixedAndOutputsArePerProcess) {
  const std::vector<std::string> arguments = cachegrindArguments("/w/cg.%p");
  auto has = [&](const std::string& word) {
    return std::find(arguments.begin(), arguments.end(), word) != arguments.end();
  };
  EXPECT_EQ(arguments.front(), "valgrind");
  EXPECT_TRUE(has("--cache-sim=yes"));
  EXPECT_TRUE(has("--LL=8388608,16,64")) << "the host's cache must not be read";
  EXPECT_TRUE(has("--I1=32768,8,64"));
  EXPECT_TRUE(has("--D1=32768,8,64"));
  EXPECT_TRUE(has("--cachegrind-out-file=/w/cg.%p"));
}

TEST(RunCost, TheMedianIntervalComesFromOrderStatistics) {
  // Five runs: only min..max covers the median with ≥ 90 % (93.75 %).
  WallTime five = summariseWallTimes({0.5, 0.1, 0.3, 0.4, 0.2});
  EXPECT_DOUBLE_EQ(five.median, 0.3);
  EXPECT_DOUBLE_EQ(five.low, 0.1);
  EXPECT_DOUBLE_EQ(five.high, 0.5);
  EXPECT_NEAR(five.coverage, 0.9375, 1e-12);
  EXPECT_EQ(five.seconds.size(), 5u);
  EXPECT_DOUBLE_EQ(five.seconds[0], 0.5) << "the runs stay in their order";

  // Ten runs: [x(2), x(9)] covers 1 − 2·(1 + 10)/1024 = 97.85 %, [x(3), x(8)]
  // only 89.06 %.
  std::vector<double> ten;
  for (int i = 10; i >= 1; --i)
    ten.push_back(i);
  WallTime interval = summariseWallTimes(ten);
  EXPECT_DOUBLE_EQ(interval.median, 5.5);
  EXPECT_DOUBLE_EQ(interval.low, 2);
  EXPECT_DOUBLE_EQ(interval.high, 9);
  EXPECT_NEAR(interval.coverage, 1 - 2 * 11.0 / 1024, 1e-12);

  WallTime none = summariseWallTimes({});
  EXPECT_TRUE(none.seconds.empty());
}

TEST(RunCost, OptionsNameWhatIsWrong) {
  RunCostOptions options;
  options.repository = MLGO_SOURCE_DIR;
  options.workRoot = "/tmp/run cost";
  EXPECT_FALSE(options.validate()) << "white space in the work directory";
  options.workRoot = "/tmp/run-cost";
  EXPECT_TRUE(options.validate());
  options.workload = "huge";
  EXPECT_FALSE(options.validate());
  options.workload = "tiny";
  options.optLevel = "O4";
  EXPECT_FALSE(options.validate());
  options.optLevel = "O2";
  options.cachegrind = false;
  options.wallRuns = 0;
  EXPECT_FALSE(options.validate());
}

TEST(RunCost, TheRecipesDeclareBenchmarks) {
  const std::vector<std::string> names = benchmarkRecipes(MLGO_SOURCE_DIR);
  for (const char* expected : {"zlib", "lua", "bzip2", "lz4", "ninja"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  EXPECT_EQ(std::find(names.begin(), names.end(), "common"), names.end());
}

// "zlib-O2" (a split's name for a program at another level) is recipe zlib
// at -O2; names without a level take the default.
TEST(RunCost, AProgramNameMayCarryItsLevel) {
  using Pair = std::pair<std::string, std::string>;
  EXPECT_EQ(programRecipeAndLevel("zlib-O2", "Oz"), (Pair{"zlib", "O2"}));
  EXPECT_EQ(programRecipeAndLevel("box2d-Oz", "O2"), (Pair{"box2d", "Oz"}));
  EXPECT_EQ(programRecipeAndLevel("lua", "O2"), (Pair{"lua", "O2"}));
  EXPECT_EQ(programRecipeAndLevel("yaml-cpp", "Oz"), (Pair{"yaml-cpp", "Oz"}));
}

} // namespace
} // namespace mlgo::deploy
