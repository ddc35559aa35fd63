// ES over the pass-pipeline task's structured space on a made-up compiler
// whose measure is a known function of the changes: the encoding, that the
// optimisers find the good changes, the cache (and its verification), and
// that a run resumed from its checkpoint is the uninterrupted run.
#include "mlgo/training/PipelineEs.h"

#include "PipelineFakeCompiler.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace mlgo::training {
namespace {

using fakes::modulesNamed;
using fakes::PipelineCompiler;
using fakes::pointers;
using policies::PassPipeline;

std::filesystem::path scratchFile(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("mlgo-pipeline-es-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / name);
  return dir / name;
}

TEST(PipelineEs, EncodingRoundTripsTheStructuredSpace) {
  PassPipeline pipeline;
  pipeline.skipped = {{"LICMPass", std::nullopt}, {"GVNPass", std::nullopt}};
  pipeline.additions = {{policies::ExtensionPoint::OptimizerLast, "mergefunc"}};
  Expected<std::vector<double>> theta = encodePipeline(pipeline, 0.5);
  ASSERT_TRUE(theta) << theta.error().message;
  EXPECT_EQ(theta->size(), structuredMoves().size());
  EXPECT_EQ(std::count(theta->begin(), theta->end(), 0.5), 3);
  EXPECT_EQ(decodePipeline(*theta), pipeline.canonical());
  EXPECT_TRUE(decodePipeline(*encodePipeline(PassPipeline{}, 1)).neutral());

  PassPipeline phased;
  phased.skipped = {*policies::parseSkippedPass("LICMPass@late")};
  EXPECT_FALSE(encodePipeline(phased, 0.5)); // not a single change of the space
  PassPipeline replaced;
  replaced.replacement = "default<O1>";
  EXPECT_FALSE(encodePipeline(replaced, 0.5));
  PipelineEsOptions options;
  options.start = replaced;
  EXPECT_FALSE(options.validate());
  options = {};
  options.steps = 0;
  EXPECT_FALSE(options.validate());
}

// Both optimisers improve on -Oz, never end above their start, and report
// the best pipeline with the total the compiler gives it.
TEST(PipelineEs, OptimisersFindGoodChangesAndKeepTheBest) {
  const auto modules = modulesNamed({"a.o", "b.o"});
  es::GradientEs::Options gradient;
  gradient.sampling.directions = 8;
  gradient.sampling.sigma = 0.3;
  for (const es::OptimizerOptions& optimizer :
       {es::OptimizerOptions(es::SepCmaEs::Options{}), es::OptimizerOptions(gradient)}) {
    SCOPED_TRACE(std::string(es::optimizerKindName(es::kindOf(optimizer))));
    PipelineCompiler compiler;
    PipelineEsOptions options;
    options.optimizer = optimizer;
    options.steps = 12;
    Expected<PipelineEsSummary> run = optimiseProgramPipeline(compiler, pointers(modules), options);
    ASSERT_TRUE(run) << run.error().message;
    EXPECT_EQ(run->baseline, 2000);
    ASSERT_TRUE(run->start);
    EXPECT_EQ(run->start->total, 2000);
    EXPECT_LT(run->best.total, 2000) << run->best.pipeline.describe();
    EXPECT_EQ(run->best.total,
              2 * PipelineCompiler::measureOf(run->best.pipeline, compiler.good, false));
    EXPECT_EQ(run->steps.size(), 12u);
    // Every distinct pipeline compiled once on every module.
    EXPECT_EQ(compiler.jobs, run->evaluations * modules.size());
  }
}

TEST(PipelineEs, NeverAboveItsStartWhenEveryChangeHurts) {
  PipelineCompiler compiler;
  compiler.everythingWorse = true;
  const auto modules = modulesNamed({"a.o"});
  PipelineEsOptions options;
  options.steps = 4;
  Expected<PipelineEsSummary> run = optimiseProgramPipeline(compiler, pointers(modules), options);
  ASSERT_TRUE(run);
  EXPECT_TRUE(run->best.pipeline.neutral()) << run->best.pipeline.describe();
  EXPECT_EQ(run->best.total, 1000);

  const auto broken = modulesNamed({"a.o", "broken.o"});
  PassPipeline start;
  start.skipped = {{"GVNPass", std::nullopt}};
  options.start = start;
  EXPECT_FALSE(optimiseProgramPipeline(compiler, pointers(broken), options)); // the start fails
}

// A start far from the flip threshold: every candidate of every step is
// the start's pipeline, so after the first compile the cache answers.
TEST(PipelineEs, CacheVerificationCatchesAChangedAnswer) {
  const auto modules = modulesNamed({"a.o"});
  PipelineCompiler compiler;
  PipelineEsOptions options;
  options.steps = 3;
  options.start.skipped = {{"GVNPass", std::nullopt}};
  options.startMargin = 5;
  options.verifyCache = true;
  Expected<PipelineEsSummary> verified =
      optimiseProgramPipeline(compiler, pointers(modules), options);
  ASSERT_TRUE(verified) << verified.error().message;
  EXPECT_EQ(verified->cacheHits, 3u); // one distinct pipeline a step
  EXPECT_EQ(verified->best.total, 990);
  PipelineCompiler plain;
  options.verifyCache = false;
  Expected<PipelineEsSummary> unverified =
      optimiseProgramPipeline(plain, pointers(modules), options);
  ASSERT_TRUE(unverified);
  EXPECT_EQ(unverified->best.total, verified->best.total);
  EXPECT_EQ(plain.jobs, 1u);         // the start, once
  EXPECT_EQ(compiler.jobs, 1u + 3u); // and again at every step

  // A compiler whose answers change after the first step: the cache's
  // claim no longer holds, and verification says so.
  PipelineCompiler drifting;
  options.verifyCache = true;
  Expected<PipelineEsSummary> drifted =
      optimiseProgramPipeline(drifting, pointers(modules), options,
                              [&](const PipelineEsStep&) { drifting.everythingWorse = true; });
  ASSERT_FALSE(drifted);
  EXPECT_NE(drifted.error().message.find("cache verification failed"), std::string::npos)
      << drifted.error().message;
}

TEST(PipelineEs, AResumedRunIsTheUninterruptedRun) {
  const auto modules = modulesNamed({"a.o", "b.o"});
  PipelineEsOptions options;
  options.steps = 6;
  PipelineCompiler whole;
  Expected<PipelineEsSummary> uninterrupted =
      optimiseProgramPipeline(whole, pointers(modules), options);
  ASSERT_TRUE(uninterrupted);

  options.checkpoint = scratchFile("resume.ckpt");
  options.steps = 2;
  PipelineCompiler first;
  ASSERT_TRUE(optimiseProgramPipeline(first, pointers(modules), options));
  options.steps = 6;
  PipelineCompiler second;
  Expected<PipelineEsSummary> resumed = optimiseProgramPipeline(second, pointers(modules), options);
  ASSERT_TRUE(resumed) << resumed.error().message;
  EXPECT_EQ(resumed->resumedAfter, 2);
  ASSERT_EQ(resumed->steps.size(), 4u);
  EXPECT_EQ(resumed->best.total, uninterrupted->best.total);
  EXPECT_EQ(resumed->best.pipeline, uninterrupted->best.pipeline);
  EXPECT_EQ(resumed->steps.back().centre, uninterrupted->steps.back().centre);
  // The cache came with the checkpoint: the resumed steps compiled no
  // pipeline the first part had.
  EXPECT_EQ(first.jobs + second.jobs, whole.jobs);

  // Another seed is another run: its checkpoint is refused, not resumed.
  options.seed = 2;
  Expected<PipelineEsSummary> other = optimiseProgramPipeline(second, pointers(modules), options);
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("from another run"), std::string::npos)
      << other.error().message;
  std::ofstream(options.checkpoint) << "garbage\n";
  EXPECT_FALSE(optimiseProgramPipeline(second, pointers(modules), options));
}

} // namespace
} // namespace mlgo::training
