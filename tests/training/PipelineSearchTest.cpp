// The per-module pipeline search on a made-up compiler: each pipeline's
// measure is a known function of its changes, so the greedy combination,
// its floor at -Oz, failures and the per-module random sequences are
// checked exactly.
#include "mlgo/training/PipelineSearch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

namespace mlgo::training {
namespace {

using policies::PassPipeline;

// 1000 units for -Oz; skipping a "good" pass saves 10, any other skip costs
// 5, adding mergefunc saves 7, other additions cost 1; a replacement
// measures 990 + its length mod 17. Modules named "broken…" fail every
// non-neutral job.
class PipelineCompiler final : public evaluators::Scorer {
public:
  std::set<std::string> good{"GVNPass", "LICMPass", "SROAPass"};
  bool everythingWorse = false;
  // Per module: what skipping LICMPass does there instead (default −10).
  std::map<std::string, double> licm;
  size_t jobs = 0;

  const std::string& compilerIdentity() const override { return identity_; }
  const evaluators::CompilerTask& task() const override { return task_; }

  std::vector<evaluators::BaselineResult>
  baselines(std::span<const corpus::ModuleSpec* const> modules) override {
    std::vector<evaluators::BaselineResult> results(modules.size());
    for (evaluators::BaselineResult& baseline : results) {
      baseline.sizeBytes = 1000;
      baseline.measured = 1000.0;
    }
    return results;
  }

  static double measureOf(const PassPipeline& pipeline, const std::set<std::string>& good,
                          bool worse) {
    if (!pipeline.replacement.empty())
      return 990.0 + static_cast<double>(pipeline.replacement.size() % 17);
    double value = 1000;
    for (const policies::SkippedPass& skip : pipeline.skipped)
      value += (!worse && good.count(skip.passClass)) ? -10 : 5;
    for (const auto& [point, passes] : pipeline.additions)
      value += (!worse && passes == "mergefunc") ? -7 : 1;
    return value;
  }

  evaluators::EvaluationResult evaluate(const evaluators::EvaluationRequest& request) override {
    evaluators::EvaluationResult result;
    result.candidateCount = request.candidates.size();
    result.moduleCount = request.modules.size();
    for (size_t m = 0; m < result.moduleCount; ++m) {
      result.baselineBytes.push_back(1000);
      result.baselineMeasures.push_back(1000.0);
    }
    for (const policies::Policy* candidate : request.candidates)
      for (const corpus::ModuleSpec* module : request.modules) {
        ++jobs;
        evaluators::JobResult job;
        const auto* pipeline = dynamic_cast<const policies::PipelinePolicy*>(candidate);
        if (!pipeline || module->name.starts_with("broken")) {
          job.status = evaluators::JobStatus::CompilerFailed;
        } else {
          job.status = evaluators::JobStatus::Ok;
          job.measured = measureOf(pipeline->pipeline(), good, everythingWorse);
          const auto& skipped = pipeline->pipeline().skipped;
          if (licm.count(module->name) &&
              std::find(skipped.begin(), skipped.end(),
                        policies::SkippedPass{"LICMPass", std::nullopt}) != skipped.end())
            *job.measured += licm.at(module->name) + 10;
        }
        result.jobs.push_back(std::move(job));
      }
    return result;
  }

private:
  std::string identity_ = "made-up";
  evaluators::CompilerTask task_ = evaluators::CompilerTask::passPipeline();
};

std::vector<corpus::ModuleSpec> modulesNamed(std::vector<std::string> names) {
  std::vector<corpus::ModuleSpec> modules(names.size());
  for (size_t i = 0; i < names.size(); ++i)
    modules[i].name = names[i];
  return modules;
}

std::vector<const corpus::ModuleSpec*> pointers(const std::vector<corpus::ModuleSpec>& modules) {
  std::vector<const corpus::ModuleSpec*> result;
  for (const corpus::ModuleSpec& m : modules)
    result.push_back(&m);
  return result;
}

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
