// The per-module pipeline search on a made-up compiler: each pipeline's
// measure is a known function of its changes, so the greedy combination,
// its floor at -Oz, failures and the per-module random sequences are
// checked exactly.
#include "mlgo/training/PipelineSearch.h"

#include "PipelineFakeCompiler.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace mlgo::training {
namespace {

using fakes::modulesNamed;
using fakes::PipelineCompiler;
using fakes::pointers;
using policies::PassPipeline;

TEST(PipelineSearch, GreedyRoundsCombineTheImprovingChanges) {
  PipelineCompiler compiler;
  const auto modules = modulesNamed({"a.o"});
  PipelineSearchOptions options;
  options.rounds = 0;
  Expected<PipelineSearchSummary> singles = searchPipelines(compiler, pointers(modules), options);
  ASSERT_TRUE(singles) << singles.error().message;
  EXPECT_EQ(*singles->modules[0].best, 990);
  EXPECT_EQ(singles->modules[0].compiled, structuredMoves().size());

  options.rounds = 3;
  Expected<PipelineSearchSummary> combined = searchPipelines(compiler, pointers(modules), options);
  ASSERT_TRUE(combined);
  const ModulePipelineSearch& m = combined->modules[0];
  EXPECT_EQ(*m.bestSingle, 990);
  EXPECT_EQ(*m.best, 963); // three good skips and mergefunc
  EXPECT_EQ(m.pipeline.skipped.size(), 3u);
  ASSERT_EQ(m.pipeline.additions.size(), 1u);
  EXPECT_EQ(m.pipeline.additions[0].second, "mergefunc");
  EXPECT_EQ(PipelineCompiler::measureOf(m.pipeline, compiler.good, false), *m.best);
}

TEST(PipelineSearch, NeverAboveOzAndFailuresAreCounted) {
  PipelineCompiler compiler;
  compiler.everythingWorse = true;
  const auto modules = modulesNamed({"a.o", "broken.o"});
  Expected<PipelineSearchSummary> result =
      searchPipelines(compiler, pointers(modules), PipelineSearchOptions{});
  ASSERT_TRUE(result);
  EXPECT_EQ(*result->modules[0].best, 1000);
  EXPECT_TRUE(result->modules[0].pipeline.neutral());
  EXPECT_EQ(result->modules[1].failed, structuredMoves().size());
  EXPECT_EQ(*result->modules[1].best, 1000); // its -Oz baseline stands
  EXPECT_EQ(result->failed, structuredMoves().size());
}

// One pipeline for a program: the same greedy selection on the total, and a
// change that breaks any module is never taken.
TEST(PipelineSearch, AProgramsPipelineIsChosenOnItsTotal) {
  PipelineCompiler compiler;
  const auto modules = modulesNamed({"a.o", "b.o", "c.o"});
  Expected<ProgramPipelineSearch> search =
      searchProgramPipeline(compiler, pointers(modules), PipelineSearchOptions{}, 8);
  ASSERT_TRUE(search) << search.error().message;
  EXPECT_EQ(search->baseline, 3000);
  EXPECT_EQ(search->best, 3 * 963.0);
  ASSERT_EQ(search->steps.size(), 4u); // the best single, then three additions
  EXPECT_EQ(search->steps.front().total, 3 * 990.0);
  EXPECT_EQ(search->steps.back().pipeline, search->pipeline);

  const auto withBroken = modulesNamed({"a.o", "broken.o"});
  search = searchProgramPipeline(compiler, pointers(withBroken), PipelineSearchOptions{}, 8);
  ASSERT_TRUE(search);
  EXPECT_TRUE(search->pipeline.neutral()) << search->pipeline.describe();
  EXPECT_TRUE(search->steps.empty());

  PipelineSearchOptions sequence;
  sequence.space = PipelineSpace::Sequence;
  EXPECT_FALSE(searchProgramPipeline(compiler, pointers(modules), sequence, 8));
}

// Pass parameters among the moves (--parameter-moves): offered only when
// asked for, one set per pass, beside added passes only where -Oz's text
// takes them; an inliner policy decides beside them.
TEST(PipelineSearch, PassParametersAreMovesWhenAskedFor) {
  const std::vector<PassPipeline> plain = structuredMoves(), withParameters = structuredMoves(true);
  ASSERT_GT(withParameters.size(), plain.size());
  for (size_t i = plain.size(); i < withParameters.size(); ++i) {
    EXPECT_EQ(withParameters[i].parameters.size(), 1u);
    EXPECT_TRUE(withParameters[i].skipped.empty() && withParameters[i].additions.empty());
  }
  PassPipeline a, b;
  a.parameters = {{"gvn", "no-pre"}, {"licm", "no-allowspeculation"}};
  b.parameters = {{"gvn", "no-load-pre"}};
  EXPECT_EQ(combinedPipeline(a, b).parameters,
            (std::vector<std::pair<std::string, std::string>>{{"gvn", "no-load-pre"},
                                                              {"licm", "no-allowspeculation"}}));

  PipelineCompiler compiler;
  const auto modules = modulesNamed({"a.o", "b.o"});
  PipelineSearchOptions options;
  options.parameterMoves = true;
  Expected<ProgramPipelineSearch> search =
      searchProgramPipeline(compiler, pointers(modules), options, 8);
  ASSERT_TRUE(search) << search.error().message;
  // gvn<no-pre> first (-12), then the three good skips and mergefunc (-7,
  // at optimizer-last, where -Oz's text takes additions).
  ASSERT_FALSE(search->steps.empty());
  EXPECT_EQ(search->steps.front().pipeline.describe(), "-Oz gvn<no-pre>");
  EXPECT_EQ(search->best, 2 * (1000.0 - 12 - 30 - 7));
  EXPECT_EQ(search->pipeline.additions.size(), 1u) << search->pipeline.describe();
  for (const ProgramPipelineStep& step : search->steps)
    EXPECT_TRUE(step.pipeline.validate()) << step.pipeline.describe();
  // Without the flag the same search never sets a parameter.
  Expected<ProgramPipelineSearch> without =
      searchProgramPipeline(compiler, pointers(modules), PipelineSearchOptions{}, 8);
  ASSERT_TRUE(without);
  EXPECT_TRUE(without->pipeline.parameters.empty());
  EXPECT_EQ(without->best, 2 * 963.0);

  // Under an inliner policy, which every candidate carries.
  options.inliner = policies::makeConstantPolicy(0);
  Expected<ProgramPipelineSearch> inlined =
      searchProgramPipeline(compiler, pointers(modules), options, 8);
  ASSERT_TRUE(inlined) << inlined.error().message;
  EXPECT_EQ(inlined->best, 2 * (1000.0 - 12 - 30 - 7 - compiler.inlinerSaving));
}

// A change that shrinks the total by blowing up one module: taken for the
// total, not when growth weighs double.
TEST(PipelineSearch, GrowthCanWeighMoreThanShrinking) {
  PipelineCompiler compiler;
  compiler.good = {"LICMPass"};
  compiler.licm = {{"a.o", -20}, {"b.o", -20}, {"c.o", 30}};
  const auto modules = modulesNamed({"a.o", "b.o", "c.o"});
  auto skipsLicm = [](const PassPipeline& pipeline) {
    for (const policies::SkippedPass& skip : pipeline.skipped)
      if (skip.passClass == "LICMPass")
        return true;
    return false;
  };
  PipelineSearchOptions options;
  options.regressionWeight = 0;
  Expected<ProgramPipelineSearch> total =
      searchProgramPipeline(compiler, pointers(modules), options, 8);
  ASSERT_TRUE(total);
  EXPECT_TRUE(skipsLicm(total->pipeline)) << total->pipeline.describe();
  EXPECT_EQ(total->steps.back().larger, 1u); // c.o grew
  options.regressionWeight = 1;
  Expected<ProgramPipelineSearch> careful =
      searchProgramPipeline(compiler, pointers(modules), options, 8);
  ASSERT_TRUE(careful);
  EXPECT_FALSE(skipsLicm(careful->pipeline)) << careful->pipeline.describe();
  EXPECT_EQ(careful->best, 3 * 993.0); // mergefunc alone
  options.regressionWeight = -1;
  EXPECT_FALSE(options.validate());
}

// A warm start: the start is the floor, its harmful change is removed, and
// the good ones are added to it.
TEST(PipelineSearch, AProgramSearchContinuesFromItsStart) {
  PipelineCompiler compiler;
  const auto modules = modulesNamed({"a.o", "b.o"});
  PipelineSearchOptions options;
  options.start.skipped = {{"GVNPass", std::nullopt}, {"InstCombinePass", std::nullopt}};
  Expected<ProgramPipelineSearch> search =
      searchProgramPipeline(compiler, pointers(modules), options, 8);
  ASSERT_TRUE(search) << search.error().message;
  ASSERT_TRUE(search->start);
  EXPECT_EQ(search->start->total, 2 * 995.0); // −10 + 5
  EXPECT_EQ(search->steps.front().total, 2 * 985.0) << search->steps.front().pipeline.describe();
  const auto& skipped = search->pipeline.skipped;
  EXPECT_EQ(std::count(skipped.begin(), skipped.end(),
                       policies::SkippedPass{"InstCombinePass", std::nullopt}),
            0)
      << search->pipeline.describe();
  EXPECT_EQ(
      std::count(skipped.begin(), skipped.end(), policies::SkippedPass{"GVNPass", std::nullopt}),
      1);
  EXPECT_EQ(search->best, PipelineCompiler::measureOf(search->pipeline, compiler.good, false) * 2);
  EXPECT_LE(search->best, 2 * 963.0);

  // When nothing helps, the start stands: the result is never worse.
  compiler.everythingWorse = true;
  options.start.skipped = {{"InstCombinePass", std::nullopt}};
  search = searchProgramPipeline(compiler, pointers(modules), options, 8);
  ASSERT_TRUE(search);
  EXPECT_EQ(search->best, 2000);
  EXPECT_TRUE(search->pipeline.neutral());

  options.start.replacement = "default<Os>";
  EXPECT_FALSE(searchProgramPipeline(compiler, pointers(modules), options, 8));
}

// Under an inliner policy every candidate carries it, the start (-Oz's
// pipeline with that inliner) included.
TEST(PipelineSearch, EveryCandidateCarriesTheInliner) {
  PipelineCompiler compiler;
  const auto modules = modulesNamed({"a.o", "b.o"});
  PipelineSearchOptions options;
  // Any policy: the made-up compiler only sees that there is one.
  options.inliner = std::make_shared<policies::PipelinePolicy>(PassPipeline{});
  Expected<ProgramPipelineSearch> search =
      searchProgramPipeline(compiler, pointers(modules), options, 8);
  ASSERT_TRUE(search) << search.error().message;
  EXPECT_EQ(search->baseline, 2000);
  ASSERT_TRUE(search->start);
  EXPECT_EQ(search->start->total, 2 * 997.0);
  EXPECT_EQ(search->best, 2 * 960.0);

  compiler.everythingWorse = true;
  search = searchProgramPipeline(compiler, pointers(modules), options, 8);
  ASSERT_TRUE(search);
  EXPECT_TRUE(search->steps.empty());
  EXPECT_TRUE(search->pipeline.neutral());
  EXPECT_EQ(search->best, 2 * 997.0); // the inliner alone
}

// --checkpoint for the greedy program search: a search cut short and run
// again with its log compiles only what it lacks and ends as one that never
// stopped; a full log answers everything; another weight reuses it.
TEST(ProgramMeasureLog, ASearchRunAgainCompilesOnlyWhatTheLogLacks) {
  mlgo::testing::ScratchDirectory dir;
  const auto modules = modulesNamed({"a.o", "b.o", "c.o"});
  PipelineCompiler compiler;
  compiler.licm = {{"a.o", -20}, {"b.o", -20}, {"c.o", 30}};
  PipelineSearchOptions options;
  options.start.skipped = {{"InstCombinePass", std::nullopt}};
  Expected<ProgramPipelineSearch> whole =
      searchProgramPipeline(compiler, pointers(modules), options, 8);
  ASSERT_TRUE(whole) << whole.error().message;
  ASSERT_GE(whole->steps.size(), 3u);
  const size_t wholeJobs = compiler.jobs;

  const std::string context = ProgramMeasureLog::contextOf(compiler, pointers(modules), nullptr);
  auto openLog = [&] {
    Expected<ProgramMeasureLog> log = ProgramMeasureLog::open(dir / "measures.tsv", context);
    EXPECT_TRUE(log) << log.error().message;
    return log.take();
  };
  // Cut short: one combination round (what a kill after it leaves).
  ProgramMeasureLog first = openLog();
  options.measureLog = &first;
  compiler.jobs = 0;
  Expected<ProgramPipelineSearch> cut =
      searchProgramPipeline(compiler, pointers(modules), options, 1);
  ASSERT_TRUE(cut);
  const size_t cutJobs = compiler.jobs;
  EXPECT_EQ(cut->compiled, cutJobs);
  EXPECT_LT(cutJobs, wholeJobs);

  ProgramMeasureLog again = openLog();
  EXPECT_EQ(again.size(), first.size());
  options.measureLog = &again;
  compiler.jobs = 0;
  Expected<ProgramPipelineSearch> resumed =
      searchProgramPipeline(compiler, pointers(modules), options, 8);
  ASSERT_TRUE(resumed);
  EXPECT_EQ(compiler.jobs, wholeJobs - cutJobs);
  EXPECT_EQ(resumed->logged, cut->evaluations);
  EXPECT_EQ(resumed->pipeline, whole->pipeline);
  EXPECT_EQ(resumed->best, whole->best);
  ASSERT_EQ(resumed->steps.size(), whole->steps.size());
  for (size_t i = 0; i < whole->steps.size(); ++i) {
    EXPECT_EQ(resumed->steps[i].pipeline, whole->steps[i].pipeline);
    EXPECT_EQ(resumed->steps[i].objective, whole->steps[i].objective);
    EXPECT_EQ(resumed->steps[i].larger, whole->steps[i].larger);
  }

  // A complete log answers the whole search; the measures do not depend on
  // the regression weight, so another weight's search reuses them.
  ProgramMeasureLog full = openLog();
  options.measureLog = &full;
  options.regressionWeight = 0;
  compiler.jobs = 0;
  Expected<ProgramPipelineSearch> other =
      searchProgramPipeline(compiler, pointers(modules), options, 8);
  ASSERT_TRUE(other);
  options.measureLog = nullptr;
  Expected<ProgramPipelineSearch> otherFresh =
      searchProgramPipeline(compiler, pointers(modules), options, 8);
  ASSERT_TRUE(otherFresh);
  EXPECT_EQ(other->pipeline, otherFresh->pipeline);
  EXPECT_EQ(other->best, otherFresh->best);
  EXPECT_LT(other->compiled, otherFresh->compiled); // mostly from the log
}

// The log claims the compiler's answer: a changed value is used as logged
// (so it is really read), and --verify-cache catches it, naming the module
// and pipeline; a log of another search or a damaged one is refused.
TEST(ProgramMeasureLog, VerifyCatchesADifferenceAndForeignOrDamagedLogsAreRefused) {
  mlgo::testing::ScratchDirectory dir;
  const auto modules = modulesNamed({"a.o", "b.o"});
  PipelineCompiler compiler;
  const std::string context = ProgramMeasureLog::contextOf(compiler, pointers(modules), nullptr);
  const auto path = dir / "measures.tsv";
  PipelineSearchOptions options;
  {
    Expected<ProgramMeasureLog> log = ProgramMeasureLog::open(path, context);
    ASSERT_TRUE(log);
    options.measureLog = &*log;
    ASSERT_TRUE(searchProgramPipeline(compiler, pointers(modules), options, 8));
  }
  // b.o under skipping GVN: 990 in truth; logged as 2000 (the change now
  // looks bad on b.o).
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string contents = text.str();
  const std::string row = "\n-Oz -GVNPass\t990\t990\n";
  const size_t at = contents.find(row);
  ASSERT_NE(at, std::string::npos) << contents;
  contents.replace(at, row.size(), "\n-Oz -GVNPass\t990\t2000\n");
  std::ofstream(path) << contents;

  Expected<ProgramMeasureLog> tampered = ProgramMeasureLog::open(path, context);
  ASSERT_TRUE(tampered) << tampered.error().message;
  ASSERT_NE(tampered->find(PassPipeline{{{"GVNPass", std::nullopt}}, {}, {}, {}}), nullptr);
  EXPECT_EQ((*tampered->find(PassPipeline{{{"GVNPass", std::nullopt}}, {}, {}, {}}))[1], 2000);
  options.measureLog = &*tampered;
  options.verifyMeasureLog = true;
  Expected<ProgramPipelineSearch> verified =
      searchProgramPipeline(compiler, pointers(modules), options, 8);
  ASSERT_FALSE(verified);
  EXPECT_NE(verified.error().message.find("module b.o, -Oz -GVNPass: logged 2000"),
            std::string::npos)
      << verified.error().message;

  // Other modules, another inliner: another context.
  const auto others = modulesNamed({"a.o", "c.o"});
  Expected<ProgramMeasureLog> foreign = ProgramMeasureLog::open(
      path, ProgramMeasureLog::contextOf(compiler, pointers(others), nullptr));
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.error().message.find("the log of another search"), std::string::npos);
  const policies::PipelinePolicy inliner{PassPipeline{}};
  EXPECT_NE(ProgramMeasureLog::contextOf(compiler, pointers(modules), &inliner), context);

  contents.replace(contents.find("\t2000\n"), 6, "\tx\n");
  std::ofstream(path) << contents;
  Expected<ProgramMeasureLog> damaged = ProgramMeasureLog::open(path, context);
  ASSERT_FALSE(damaged);
  EXPECT_NE(damaged.error().message.find("measures.tsv:"), std::string::npos)
      << damaged.error().message;
}

TEST(PipelineSearch, RandomSequencesAreDrawnPerModuleAndSeed) {
  const PassPipeline a = randomReplacement(1, 0, 0, 6), again = randomReplacement(1, 0, 0, 6);
  EXPECT_EQ(a, again);
  EXPECT_NE(a, randomReplacement(1, 1, 0, 6));
  EXPECT_NE(a, randomReplacement(2, 0, 0, 6));
  EXPECT_TRUE(a.replacement.starts_with("default<Oz>,"));
  EXPECT_EQ(std::count(a.replacement.begin(), a.replacement.end(), ','), 6); // six passes
  PipelineCompiler compiler;
  const auto modules = modulesNamed({"a.o"});
  PipelineSearchOptions options;
  options.space = PipelineSpace::Sequence;
  options.randomSequences = 5;
  Expected<PipelineSearchSummary> result = searchPipelines(compiler, pointers(modules), options);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->modules[0].compiled, standardReplacements().size() + 5);
  EXPECT_FALSE(result->modules[0].pipeline.replacement.empty());

  options.sequenceLength = 0;
  EXPECT_FALSE(options.validate());
  EXPECT_FALSE(parsePipelineSpace("random"));
}

} // namespace
} // namespace mlgo::training
