// mlgo::results analysis on made-up run records: tables and CSV, policy
// sizes from validation rows and from training candidates, module
// comparisons, aligned learning curves, summaries. Fast, no clang.
#include "mlgo/results/Analysis.h"
#include "mlgo/results/AnalysisTable.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mlgo::results {
namespace {

const double nan = std::numeric_limits<double>::quiet_NaN();

// Two training modules (-Oz 100 and 200 bytes), two candidates, one
// validation module; `steps` steps compiling modules {0, 1}, {1, 0}, …
RunRecord makeRun(size_t steps, bool withValidation) {
  RunRecord r;
  r.trainer = "es-train";
  r.config = {{"steps", std::to_string(steps)}, {"sigma", "0.1"}, {"output", "x.h5"}};
  r.attributes = {{"optimizer", "gradient-es"}};
  r.moduleNames = {"m0", "m1"};
  r.baselineSizes = {100, 200};
  for (size_t s = 0; s < steps; ++s) {
    double base = -0.1 * static_cast<double>(steps - s);
    r.stepScalars["reward_mean"].push_back(base);
    r.stepScalars["elapsed_seconds"].push_back(10.0 * static_cast<double>(s + 1));
    r.candidateRewards.push_back({base - 0.05, base + 0.05});
    r.stepModules.push_back(s % 2 ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0, 1});
    // Candidate-major: candidate 0 then candidate 1, each over the step's modules.
    uint64_t k = 10 * s;
    r.stepSizes.push_back(s % 2 ? std::vector<uint64_t>{210 + k, 110 + k, 190 + k, 0}
                                : std::vector<uint64_t>{110 + k, 220 + k, 90 + k, 180 + k});
    if (s % 2)
      r.failures.push_back(
          {static_cast<int64_t>(s), 1, "m0", "compiler-crashed", "boom", "line 1\nlast line\n"});
  }
  if (withValidation) {
    r.validationModuleNames = {"v0"};
    r.validationBaselineSizes = {1000};
    for (size_t s = 1; s <= steps; ++s)
      r.validations.push_back(
          {static_cast<int64_t>(s), {1000 - 10 * s}, {1}, 0.01 * static_cast<double>(s), 0});
  }
  r.snapshots.push_back({0, "{}"});
  r.bestPolicy = PolicySnapshot{1, "{\"best\":1}"};
  r.finalPolicy = PolicySnapshot{static_cast<int64_t>(steps), "{\"final\":1}"};
  Checkpoint checkpoint;
  checkpoint.step = static_cast<int64_t>(steps);
  checkpoint.elapsedSeconds = 10.0 * static_cast<double>(steps);
  checkpoint.policyJson = "{\"final\":1}";
  r.checkpoint = checkpoint;
  return r;
}

TEST(AnalysisTable, CsvQuotesAndKeepsDoublesExact) {
  Table t;
  t.columns = {{"name", "", ValueFormat::Text},
               {"x", "", ValueFormat::Decimal, 2},
               {"n", "", ValueFormat::Integer}};
  t.rows = {{std::string("a,b"), 0.1 + 0.2, int64_t{3}},
            {std::string("say \"hi\"\nthere"), nan, Value()}};
  EXPECT_EQ(renderCsv(t), "name,x,n\n\"a,b\",0.30000000000000004,3\n"
                          "\"say \"\"hi\"\"\nthere\",,\n");
  std::string text = renderText(t);
  EXPECT_NE(text.find("0.30"), std::string::npos) << text;
  EXPECT_NE(text.find("-"), std::string::npos) << text;
}

TEST(AnalysisTable, FormatsAndVisibility) {
  Table t;
  t.columns = {{"change", "vs -Oz", ValueFormat::Percent, 2},
               {"bytes", "", ValueFormat::Integer},
               {"hidden", "", ValueFormat::Text, 0, ColumnVisibility::CsvOnly},
               {"shown", "", ValueFormat::SignedDecimal, 3, ColumnVisibility::TextOnly}};
  t.rows = {{-0.0123, 1234.5, std::string("h"), 0.5}};
  EXPECT_EQ(renderText(t), "vs -Oz   bytes   shown\n-1.23%  1234.5  +0.500\n");
  EXPECT_EQ(renderCsv(t), "change,bytes,hidden\n-0.0123,1234.5,h\n");
}

TEST(AnalysisPolicySizes, ValidationRowOfThatPolicy) {
  RunRecord r = makeRun(3, true);
  std::optional<PolicySizes> final = recordedPolicySizes(r, PolicyChoice::Final);
  ASSERT_TRUE(final);
  EXPECT_EQ(final->source, SizeSource::Validation);
  EXPECT_EQ(final->step, 3);
  EXPECT_EQ(final->totalBytes(), 970);
  EXPECT_EQ(final->totalBaselineBytes(), 1000);
  EXPECT_NEAR(final->change(), -0.03, 1e-12);
  std::optional<PolicySizes> best = recordedPolicySizes(r, PolicyChoice::Best);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->step, 1);
  EXPECT_EQ(best->totalBytes(), 990);
}

TEST(AnalysisPolicySizes, TrainingCandidatesOfTheLatestStep) {
  RunRecord r = makeRun(2, false);
  // Final (step 2): step 1 compiled m1 (220, 200) and m0 (120 and a failure).
  std::optional<PolicySizes> final = recordedPolicySizes(r, PolicyChoice::Final);
  ASSERT_TRUE(final);
  EXPECT_EQ(final->source, SizeSource::Training);
  ASSERT_EQ(final->modules, (std::vector<std::string>{"m0", "m1"}));
  EXPECT_EQ(final->sizes, (std::vector<double>{120, 210}));
  EXPECT_EQ(final->totalBaselineBytes(), 300);
  // Best (step 1): the candidates of steps ≤ 1, i.e. the same.
  std::optional<PolicySizes> best = recordedPolicySizes(r, PolicyChoice::Best);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->sizes, final->sizes);
  r.bestPolicy = PolicySnapshot{0, "{}"};
  best = recordedPolicySizes(r, PolicyChoice::Best);
  EXPECT_EQ(best->sizes, (std::vector<double>{100, 200})); // step 0: (110+90)/2, (220+180)/2
  r.bestPolicy.reset();
  EXPECT_FALSE(recordedPolicySizes(r, PolicyChoice::Best));
}

TEST(AnalysisSummary, CountsAndRewards) {
  RunRecord r = makeRun(3, true);
  r.stepScalars["reward_mean"][1] = nan;
  r.stepScalars["reward_mean"][2] = -0.2; // steps: -0.3, NaN, -0.2
  RunSummary s = summarizeRun("r.h5", r, {});
  EXPECT_EQ(s.optimizer, "gradient-es");
  EXPECT_EQ(s.steps, 3);
  EXPECT_EQ(s.plannedSteps, 3);
  EXPECT_TRUE(s.finished);
  EXPECT_EQ(s.compilations, 3u * 4 + 3 * 1);
  EXPECT_EQ(s.failedCompilations, 1u); // step 1, candidate 1, m0
  EXPECT_DOUBLE_EQ(s.finalReward, -0.2);
  EXPECT_DOUBLE_EQ(s.bestReward, -0.2);
  EXPECT_DOUBLE_EQ(s.wallSeconds, 30);

  r.finalPolicy.reset();
  r.checkpoint->step = 2;
  EXPECT_FALSE(summarizeRun("r.h5", r, {}).finished);
}

// --hidden is the config's; a run from --initial-policy has that policy's layers.
TEST(AnalysisSummary, HiddenLayersOfAnInitialPolicy) {
  RunRecord r = makeRun(2, false);
  r.config["hidden"] = "64,64";
  r.attributes["policy"] = "mlp[8,8] relu";
  EXPECT_EQ(summarizeRun("r.h5", r, {}).config.at("hidden"), "64,64");
  r.config["initial-policy"] = "bc.json";
  EXPECT_EQ(summarizeRun("r.h5", r, {}).config.at("hidden"), "8,8");
}

TEST(AnalysisSummary, ModulesWithoutCodeAreNotFailures) {
  RunRecord r = makeRun(2, false);
  r.moduleNames.push_back("empty");
  r.baselineSizes.push_back(0);
  for (size_t s = 0; s < 2; ++s) {
    r.stepModules[s].push_back(2);
    // Sizes are candidate-major: append the new module's column to each candidate.
    std::vector<uint64_t> row;
    for (size_t k = 0; k < 2; ++k) {
      row.insert(row.end(), r.stepSizes[s].begin() + static_cast<ptrdiff_t>(2 * k),
                 r.stepSizes[s].begin() + static_cast<ptrdiff_t>(2 * k + 2));
      row.push_back(0);
    }
    r.stepSizes[s] = row;
  }
  RunSummary s = summarizeRun("r.h5", r, {});
  EXPECT_EQ(s.compilations, 12u);
  EXPECT_EQ(s.failedCompilations, 1u);
  Table modules = stepModulesTable(r, 0);
  ASSERT_EQ(modules.rows.size(), 3u);
  EXPECT_EQ(std::get<int64_t>(modules.rows[2][*modules.columnIndex("failed")]), 0);
  EXPECT_EQ(std::get<double>(modules.rows[2][*modules.columnIndex("mean")]), 0);
}

TEST(AnalysisSummary, TableShowsVariedKeysAndSorts) {
  RunRecord a = makeRun(2, false), b = makeRun(3, true), c = makeRun(2, false);
  b.config["sigma"] = "0.2";
  b.config["output"] = "y.h5"; // operational: never a column
  b.stepScalars["reward_mean"][2] = -0.05;
  c.stepScalars["reward_mean"].assign(2, nan);
  std::vector<RunSummary> runs = {summarizeRun("a.h5", a, {}), summarizeRun("c.h5", c, {}),
                                  summarizeRun("b.h5", b, {})};
  EXPECT_EQ(hyperparameterKeys(runs, {}), (std::vector<std::string>{"sigma"}));
  Table t = summaryTable(runs, {.keys = {}, .order = SummaryOrder::FinalReward});
  size_t run = *t.columnIndex("run");
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(std::get<std::string>(t.rows[0][run]), "b.h5"); // final reward -0.05
  EXPECT_EQ(std::get<std::string>(t.rows[1][run]), "a.h5"); // -0.1
  EXPECT_EQ(std::get<std::string>(t.rows[2][run]), "c.h5"); // no reward: last
  EXPECT_TRUE(t.columnIndex("sigma"));
  EXPECT_FALSE(t.columnIndex("output"));
}

TEST(AnalysisCompare, WinnersMarginsAndTotals) {
  PolicySizes a, b, c;
  for (PolicySizes* p : {&a, &b, &c})
    p->baselines = {100, 200, 300};
  a.modules = b.modules = c.modules = {"x", "y", "z"};
  a.sizes = {90, 200, 310};
  b.sizes = {95, 200, nan};
  c.sizes = {99, 210, 305};
  c.modules.push_back("w");
  c.sizes.push_back(50);
  c.baselines.push_back(60);
  ModuleComparison cmp = compareModules({a, b, c});
  ASSERT_EQ(cmp.modules, (std::vector<std::string>{"x", "y", "z", "w"}));
  EXPECT_EQ(cmp.winner[0], 0u);
  EXPECT_DOUBLE_EQ(cmp.margin[0], 5);
  EXPECT_FALSE(cmp.winner[1]); // a and b tie at 200
  EXPECT_DOUBLE_EQ(cmp.margin[1], 0);
  EXPECT_EQ(cmp.winner[2], 2u); // b has no size
  EXPECT_FALSE(cmp.winner[3]);  // only c
  EXPECT_TRUE(std::isnan(cmp.margin[3]));
  EXPECT_EQ(cmp.wins, (std::vector<size_t>{1, 0, 1}));
  EXPECT_EQ(cmp.ties, 1u);
  EXPECT_EQ(cmp.commonModules, 2u); // x and y
  EXPECT_EQ(cmp.totalBytes, (std::vector<double>{290, 295, 309}));
  Table t = moduleComparisonTable(cmp, {"a", "b", "c"});
  EXPECT_EQ(t.rows.size(), 5u); // four modules and the total
  EXPECT_EQ(std::get<std::string>(t.rows[1][*t.columnIndex("winner")]), "tie");
  EXPECT_EQ(std::get<std::string>(t.rows[4][*t.columnIndex("winner")]), "a");
}

TEST(AnalysisCurves, AlignedAtEqualCompilationsAndTime) {
  RunRecord a = makeRun(2, false); // 4 compiles per step: ends at 4, 8
  RunRecord b = makeRun(3, true);  // 4 + 1 validation per step: 5, 10, 15
  EXPECT_EQ(stepPositions(a, CurveAxis::Compilations), (std::vector<double>{4, 8}));
  EXPECT_EQ(stepPositions(b, CurveAxis::Compilations), (std::vector<double>{5, 10, 15}));
  AlignedCurves c = alignCurves({&a, &b}, CurveAxis::Compilations, "reward_mean", 3);
  EXPECT_EQ(c.x, (std::vector<double>{5, 10, 15}));
  // a: at 5 its step 0 (−0.2); at 10 and 15 it had ended (8).
  EXPECT_DOUBLE_EQ(c.values[0][0], -0.2);
  EXPECT_TRUE(std::isnan(c.values[0][1]));
  EXPECT_DOUBLE_EQ(c.values[1][0], -0.3);
  EXPECT_DOUBLE_EQ(c.values[1][1], -0.2);
  EXPECT_DOUBLE_EQ(c.values[1][2], -0.1);
  AlignedCurves t = alignCurves({&a, &b}, CurveAxis::WallSeconds, "reward_mean", 6);
  EXPECT_EQ(t.x, (std::vector<double>{5, 10, 15, 20, 25, 30}));
  EXPECT_TRUE(std::isnan(t.values[0][0])); // before a's first step ended
  EXPECT_DOUBLE_EQ(t.values[0][1], -0.2);
  EXPECT_DOUBLE_EQ(t.values[0][3], -0.1);
  EXPECT_TRUE(std::isnan(t.values[0][4]));
  EXPECT_DOUBLE_EQ(t.values[1][5], -0.1);
}

TEST(AnalysisLabels, StemsWhenUnique) {
  EXPECT_EQ(runLabels({"x/a.h5", "y/b.h5"}), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(runLabels({"x/a.h5", "y/a.h5"}), (std::vector<std::string>{"x/a.h5", "y/a.h5"}));
}

TEST(AnalysisShow, StepTables) {
  RunRecord r = makeRun(2, true);
  r.failures.push_back({2, -1, "v0", "timed-out", "slow", ""});
  r.failures.push_back({0, 0, "m0", "timed-out", "other step", ""});
  Table candidates = stepCandidatesTable(r, 1);
  ASSERT_EQ(candidates.rows.size(), 2u);
  EXPECT_EQ(std::get<int64_t>(candidates.rows[1][*candidates.columnIndex("failed")]), 1);
  EXPECT_EQ(std::get<int64_t>(candidates.rows[1][*candidates.columnIndex("size_bytes")]), 200);
  Table modules = stepModulesTable(r, 1);
  ASSERT_EQ(modules.rows.size(), 2u);
  EXPECT_EQ(std::get<std::string>(modules.rows[0][0]), "m1");
  Table failures = stepFailuresTable(r, 1);
  ASSERT_EQ(failures.rows.size(), 2u);
  EXPECT_EQ(std::get<std::string>(failures.rows[0][*failures.columnIndex("stderr_tail")]),
            "last line");
  EXPECT_EQ(std::get<std::string>(failures.rows[1][0]), "validation");
}

TEST(AnalysisExport, TidyTablesCoverEveryRow) {
  RunRecord a = makeRun(2, false), b = makeRun(3, true);
  std::vector<NamedTable> tables = exportTables({{"a", &a}, {"b", &b}}, {});
  auto rows = [&](const std::string& name) {
    for (const NamedTable& t : tables)
      if (t.name == name)
        return t.table.rows.size();
    ADD_FAILURE() << "no table " << name;
    return size_t{0};
  };
  EXPECT_EQ(rows("runs"), 2u);
  EXPECT_EQ(rows("steps"), 5u);
  EXPECT_EQ(rows("candidates"), 10u);
  EXPECT_EQ(rows("sizes"), 20u);
  EXPECT_EQ(rows("validation"), 3u);
  EXPECT_EQ(rows("validation_sizes"), 3u);
  EXPECT_EQ(rows("config"), 6u);
  EXPECT_EQ(rows("modules"), 5u);
}

} // namespace
} // namespace mlgo::results
