// The in-process backend against the clang-process backend on the real zlib
// and Lua corpora: same baselines, and under the heuristic and a fixed MLP
// the same decisions, features, sizes and code, module by module. Then the
// decision-sequence cache, the fallback to clang processes, and worker crashes
// and hangs.
#include "TestPolicies.h"
#include "TestSupport.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/evaluators/Ir2VecTriplets.h"
#include "mlgo/policies/Ir2VecVocabulary.h"
#include "mlgo/policies/PassPipeline.h"
#include "mlgo/policies/Policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

namespace fs = std::filesystem;

namespace mlgo::evaluators {
namespace {

class BackendParity : public testing::RealCorpusTest {
protected:
  // Every job compiled (no replay): these tests compare the compilers.
  std::unique_ptr<Evaluator> make(BackendKind backend, bool cache = false,
                                  CompilerTask task = CompilerTask::inliningForSize()) {
    EvaluatorOptions options;
    options.backend = backend;
    options.decisionCache = cache;
    options.replay = false;
    options.workers = 2;
    options.scratchDirectory = scratch_.path();
    Expected<std::unique_ptr<Evaluator>> evaluator = Evaluator::create(options, std::move(task));
    EXPECT_TRUE(evaluator) << evaluator.error().message;
    return evaluator ? evaluator.take() : nullptr;
  }

  EvaluationResult run(Evaluator& evaluator, std::vector<const policies::Policy*> candidates,
                       bool trajectories = true) {
    EvaluationRequest request;
    request.candidates = std::move(candidates);
    request.modules = modules_;
    request.recordTrajectories = trajectories;
    return evaluator.evaluate(request);
  }

  // Every module: both ok, identical size, code, decisions and trajectory.
  void expectSame(const EvaluationResult& clang, const EvaluationResult& inprocess,
                  const std::string& policy) {
    ASSERT_EQ(clang.jobs.size(), inprocess.jobs.size());
    size_t decisions = 0, differing = 0;
    for (size_t j = 0; j < clang.jobs.size(); ++j) {
      const JobResult &a = clang.jobs[j], &b = inprocess.jobs[j];
      const std::string& name = modules_[j % modules_.size()]->name;
      SCOPED_TRACE(policy + " on " + name);
      ASSERT_TRUE(a.ok()) << jobStatusName(a.status) << ": " << a.message << "\n" << a.stderrTail;
      ASSERT_TRUE(b.ok()) << jobStatusName(b.status) << ": " << b.message << "\n" << b.stderrTail;
      EXPECT_EQ(a.sizeBytes, b.sizeBytes);
      EXPECT_EQ(a.codeHash, b.codeHash);
      EXPECT_EQ(a.decisions, b.decisions);
      differing += a.sizeBytes != b.sizeBytes;
      if (a.trajectory && b.trajectory) {
        EXPECT_EQ(a.trajectory->featureSpecs, b.trajectory->featureSpecs);
        EXPECT_EQ(a.trajectory->observations, b.trajectory->observations);
        EXPECT_EQ(a.trajectory->defaultDecisions, b.trajectory->defaultDecisions);
        EXPECT_EQ(a.trajectory->actions, b.trajectory->actions);
      }
      decisions += a.decisions;
    }
    EXPECT_GT(decisions, 0u);
    std::printf("%s, %s: %zu modules, %zu decisions, %zu modules of different size between "
                "backends\n",
                GetParam().c_str(), policy.c_str(), modules_.size(), decisions, differing);
  }
};

TEST_P(BackendParity, BaselinesHeuristicAndMlpAreIdentical) {
  std::unique_ptr<Evaluator> clang = make(BackendKind::Clang);
  std::unique_ptr<Evaluator> inprocess = make(BackendKind::InProcess);
  ASSERT_TRUE(clang && inprocess);

  std::vector<BaselineResult> clangBaselines = clang->baselines(modules_);
  std::vector<BaselineResult> inprocessBaselines = inprocess->baselines(modules_);
  for (size_t m = 0; m < modules_.size(); ++m) {
    ASSERT_TRUE(clangBaselines[m].sizeBytes) << clangBaselines[m].message;
    ASSERT_TRUE(inprocessBaselines[m].sizeBytes) << inprocessBaselines[m].message;
    EXPECT_EQ(*clangBaselines[m].sizeBytes, *inprocessBaselines[m].sizeBytes) << modules_[m]->name;
  }

  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy(
      evaluators::CompilerTask::inliningForSize().defaultDecisionFeature);
  EvaluationResult clangEcho = run(*clang, {echo.get()});
  EvaluationResult inprocessEcho = run(*inprocess, {echo.get()});
  expectSame(clangEcho, inprocessEcho, "heuristic");

  std::optional<testing::MixedMlp> mixed = testing::makeMixedMlp(clangEcho);
  ASSERT_TRUE(mixed);
  EvaluationResult clangMlp = run(*clang, {&*mixed->policy});
  EvaluationResult inprocessMlp = run(*inprocess, {&*mixed->policy});
  expectSame(clangMlp, inprocessMlp, "mlp");
  // Without a trajectory the worker skips the default decision the MLP does
  // not read: the compilation must not change.
  expectSame(run(*clang, {&*mixed->policy}, false), run(*inprocess, {&*mixed->policy}, false),
             "mlp, no trajectory");
  size_t inlined = 0, asked = 0;
  for (const JobResult& job : inprocessMlp.jobs)
    for (int64_t action : job.trajectory->actions) {
      inlined += static_cast<size_t>(action);
      ++asked;
    }
  EXPECT_GT(inlined, 0u);
  EXPECT_LT(inlined, asked);

  // The in-process run really ran in workers, never fell back to clang.
  EvaluatorStatistics stats = inprocess->statistics();
  EXPECT_EQ(stats.fallbackJobs, 0u);
  EXPECT_EQ(stats.clangJobs, 0u);
  EXPECT_GT(stats.inprocessJobs, 0u);
  EXPECT_GE(stats.workersStarted, 1u);
  EXPECT_LE(stats.workersStarted, 2u) << "healthy workers were restarted";
}

// With an IR2Vec vocabulary (learned here from the corpus with the real
// llvm-ir2vec) both backends send the same caller/callee embeddings, and a
// policy reading them decides alike in both.
TEST_P(BackendParity, Ir2VecEmbeddingsAreIdentical) {
  Expected<Ir2VecTrainingData> data = collectIr2VecTriplets(
      {*corpus_}, ir2vecToolBeside(EvaluatorOptions::defaultClang()), scratch_.path(), 2);
  ASSERT_TRUE(data) << data.error().message;
  EXPECT_EQ(data->modules, modules_.size());
  EXPECT_GT(data->triplets.size(), 100u);
  policies::TransEOptions transE;
  transE.dimension = 6;
  transE.epochs = 20;
  Expected<policies::Ir2VecVocabulary> vocabulary =
      policies::trainTransE(data->entities, data->triplets, data->relations, transE);
  ASSERT_TRUE(vocabulary) << vocabulary.error().message;
  const fs::path file = scratch_.path() / "vocab.json";
  ASSERT_TRUE(policies::writeIr2VecVocabulary(*vocabulary, file));
  CompilerTask task = CompilerTask::inliningForSize();
  ASSERT_TRUE(task.useIr2VecVocabulary(file));
  EXPECT_FALSE(CompilerTask::regallocEviction().useIr2VecVocabulary(file));

  std::unique_ptr<Evaluator> clang = make(BackendKind::Clang, false, task);
  std::unique_ptr<Evaluator> inprocess = make(BackendKind::InProcess, false, task);
  ASSERT_TRUE(clang && inprocess);
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy(
      evaluators::CompilerTask::inliningForSize().defaultDecisionFeature);
  EvaluationResult clangEcho = run(*clang, {echo.get()});
  expectSame(clangEcho, run(*inprocess, {echo.get()}), "heuristic, IR2Vec");
  size_t embeddings = 0, nonZero = 0;
  for (const JobResult& job : clangEcho.jobs)
    for (size_t f = 0, column = 0; f < job.trajectory->featureSpecs.size();
         column += job.trajectory->featureSpecs[f++].elementCount()) {
      const policies::TensorSpec& spec = job.trajectory->featureSpecs[f];
      if (spec.name != "caller_embedding" && spec.name != "callee_embedding")
        continue;
      ++embeddings;
      EXPECT_EQ(spec.elementCount(), transE.dimension);
      for (size_t d = 0; d < job.trajectory->decisions(); ++d)
        for (size_t e = 0; e < spec.elementCount(); ++e)
          nonZero += job.trajectory->row(d)[column + e] != 0;
    }
  EXPECT_EQ(embeddings, 2 * clangEcho.jobs.size());
  EXPECT_GT(nonZero, 0u);

  std::optional<testing::MixedMlp> mixed = testing::makeMixedMlp(clangEcho);
  ASSERT_TRUE(mixed);
  expectSame(run(*clang, {&*mixed->policy}), run(*inprocess, {&*mixed->policy}), "mlp, IR2Vec");
  EXPECT_EQ(inprocess->statistics().fallbackJobs, 0u);
}

TEST_P(BackendParity, DecisionSequenceCacheGivesTheFullCompilesSizes) {
  std::unique_ptr<Evaluator> cached = make(BackendKind::InProcess, /*cache=*/true);
  ASSERT_TRUE(cached);
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy(
      evaluators::CompilerTask::inliningForSize().defaultDecisionFeature);
  std::unique_ptr<policies::Policy> never = policies::makeConstantPolicy(0);
  // First: every sequence is new. Second: the echo repeats itself; `never`
  // repeats it exactly on the modules where the heuristic inlined nothing.
  EvaluationResult first = run(*cached, {echo.get()}, true);
  EXPECT_EQ(first.cacheHits, 0u);
  EXPECT_EQ(first.cacheLookups, modules_.size());
  std::vector<bool> heuristicInlinedNothing;
  for (const JobResult& job : first.jobs) {
    ASSERT_TRUE(job.trajectory);
    heuristicInlinedNothing.push_back(std::all_of(job.trajectory->actions.begin(),
                                                  job.trajectory->actions.end(),
                                                  [](int64_t a) { return a == 0; }));
  }
  const size_t sameAsNever = static_cast<size_t>(
      std::count(heuristicInlinedNothing.begin(), heuristicInlinedNothing.end(), true));
  ASSERT_LT(sameAsNever, modules_.size()) << "never-inline is no different on this corpus";
  EvaluationResult second = run(*cached, {echo.get(), never.get()}, true);
  EXPECT_EQ(second.cacheLookups, 2 * modules_.size());
  EXPECT_EQ(second.cacheHits, modules_.size() + sameAsNever);
  for (size_t m = 0; m < modules_.size(); ++m) {
    SCOPED_TRACE(modules_[m]->name);
    const JobResult& again = second.job(0, m);
    ASSERT_TRUE(again.ok()) << again.message;
    EXPECT_TRUE(again.cacheHit);
    EXPECT_EQ(again.sizeBytes, first.job(0, m).sizeBytes);
    EXPECT_EQ(again.codeHash, first.job(0, m).codeHash);
    EXPECT_EQ(again.decisions, first.job(0, m).decisions);
    // A hit still ran the inliner to its end: the whole trajectory is there.
    ASSERT_TRUE(again.trajectory);
    EXPECT_EQ(again.trajectory->decisions(), again.decisions);
    EXPECT_EQ(second.job(1, m).cacheHit, heuristicInlinedNothing[m]);
    ASSERT_TRUE(second.job(1, m).ok());
    if (heuristicInlinedNothing[m]) {
      EXPECT_EQ(second.job(1, m).sizeBytes, first.job(0, m).sizeBytes);
    }
  }
  // A policy that decides like the heuristic is a hit on the heuristic's
  // entries: the cache keys on decisions, not on policies.
  std::unique_ptr<policies::Policy> echoAgain = policies::makeHeuristicEchoPolicy(
      evaluators::CompilerTask::inliningForSize().defaultDecisionFeature);
  EvaluationResult third = run(*cached, {echoAgain.get()}, false);
  EXPECT_EQ(third.cacheHits, modules_.size());
  std::printf("%s: cache hits %zu/%zu, %.2f s of compilation saved\n", GetParam().c_str(),
              second.cacheHits, second.cacheLookups, second.cacheSecondsSaved);
}

TEST_P(BackendParity, ModulesWithMllvmOptionsFallBackToClang) {
  EvaluatorOptions options;
  options.workers = 2;
  options.scratchDirectory = scratch_.path();
  // -mllvm options are process-global: a worker refuses them per job.
  options.filters.addFlags = {"-mllvm", "-inline-threshold=100"};
  Expected<std::unique_ptr<Evaluator>> evaluator =
      Evaluator::create(options, CompilerTask::inliningForSize());
  ASSERT_TRUE(evaluator) << evaluator.error().message;
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy(
      evaluators::CompilerTask::inliningForSize().defaultDecisionFeature);
  EvaluationResult result = run(**evaluator, {echo.get()}, false);
  for (size_t m = 0; m < modules_.size(); ++m) {
    const JobResult& job = result.job(0, m);
    ASSERT_TRUE(job.ok()) << job.message;
    EXPECT_EQ(job.sizeBytes, *result.baselineBytes[m]);
  }
  EvaluatorStatistics stats = (*evaluator)->statistics();
  EXPECT_EQ(stats.fallbackJobs, stats.clangJobs);
  EXPECT_GE(stats.clangJobs, 2 * modules_.size()); // baselines and the policy's jobs
}

// The pass-pipeline task's neutral policy in-process is clang's own -Oz
// process, section for section, on every module; its IR-instruction
// measure is the baseline's; clang processes and -mllvm modules, which
// cannot apply a pipeline, are refused rather than compiled without it.
TEST_P(BackendParity, PipelineTasksNeutralPolicyIsClangsOwnObject) {
  CompilerTask inlining = CompilerTask::inliningForSize();
  inlining.sizeSections = {"."};
  CompilerTask pipeline = CompilerTask::passPipeline();
  pipeline.sizeSections = {"."};
  std::unique_ptr<Evaluator> clang = make(BackendKind::Clang, false, inlining);
  std::unique_ptr<Evaluator> inprocess = make(BackendKind::InProcess, false, pipeline);
  ASSERT_TRUE(clang && inprocess);
  std::unique_ptr<policies::Policy> neutral = pipeline.neutralPolicy();
  EvaluationResult plain = run(*clang, {nullptr}, false);
  EvaluationResult chosen = run(*inprocess, {neutral.get()}, false);
  for (size_t m = 0; m < modules_.size(); ++m) {
    SCOPED_TRACE(modules_[m]->name);
    const JobResult &a = plain.job(0, m), &b = chosen.job(0, m);
    ASSERT_TRUE(a.ok()) << a.message;
    ASSERT_TRUE(b.ok()) << b.message;
    EXPECT_EQ(a.sizeBytes, b.sizeBytes);
    EXPECT_EQ(a.codeHash, b.codeHash);
  }
  EXPECT_EQ(inprocess->statistics().clangJobs, 0u);

  // A pipeline policy carrying an inliner policy: echoing the heuristic is
  // -Oz again, with the decisions asked; declining every call is not.
  auto echo = std::shared_ptr<const policies::Policy>(
      policies::makeHeuristicEchoPolicy(inlining.defaultDecisionFeature));
  policies::PipelinePolicy echoed(policies::PassPipeline{}, echo);
  policies::PipelinePolicy never(policies::PassPipeline{}, policies::makeConstantPolicy(0));
  EvaluationResult inlined = run(*inprocess, {&echoed, &never}, false);
  size_t decisions = 0, differing = 0;
  for (size_t m = 0; m < modules_.size(); ++m) {
    ASSERT_TRUE(inlined.job(0, m).ok()) << inlined.job(0, m).message;
    ASSERT_TRUE(inlined.job(1, m).ok()) << inlined.job(1, m).message;
    EXPECT_EQ(inlined.job(0, m).codeHash, plain.job(0, m).codeHash) << modules_[m]->name;
    decisions += inlined.job(0, m).decisions;
    differing += inlined.job(1, m).codeHash != plain.job(0, m).codeHash;
  }
  EXPECT_GT(decisions, 0u);
  EXPECT_GT(differing, 0u);

  CompilerTask counted = CompilerTask::passPipeline();
  counted.measure = Measure::IrInstructions;
  std::unique_ptr<Evaluator> instructions = make(BackendKind::InProcess, false, counted);
  ASSERT_TRUE(instructions);
  EvaluationResult measured = run(*instructions, {neutral.get()}, false);
  double total = 0;
  for (size_t m = 0; m < modules_.size(); ++m) {
    ASSERT_TRUE(measured.job(0, m).ok()) << measured.job(0, m).message;
    total += *measured.job(0, m).measured;
    EXPECT_EQ(measured.job(0, m).measured, measured.baselineMeasure(m)) << modules_[m]->name;
  }
  EXPECT_GT(total, 1000);

  EvaluatorOptions options;
  options.backend = BackendKind::Clang;
  options.scratchDirectory = scratch_.path();
  Expected<std::unique_ptr<Evaluator>> refused = Evaluator::create(options, pipeline);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("use --backend inprocess"), std::string::npos)
      << refused.error().message;
  CompilerTask eviction = CompilerTask::regallocEviction();
  eviction.measure = Measure::IrInstructions;
  options.backend = BackendKind::InProcess;
  refused = Evaluator::create(options, eviction);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("another task (pass-pipeline)"), std::string::npos)
      << refused.error().message;

  options.workers = 2;
  options.replay = false;
  options.filters.addFlags = {"-mllvm", "-inline-threshold=100"};
  Expected<std::unique_ptr<Evaluator>> fallback = Evaluator::create(options, pipeline);
  ASSERT_TRUE(fallback) << fallback.error().message;
  EvaluationResult dropped = run(**fallback, {neutral.get()}, false);
  ASSERT_FALSE(dropped.job(0, 0).ok());
  EXPECT_NE(dropped.job(0, 0).message.find("run in-process only"), std::string::npos)
      << dropped.job(0, 0).message;
}

// A worker that aborts (as on an assertion or a compiler crash) or hangs is
// recorded against its job; the other jobs complete, and the pool goes on
// with fresh workers.
TEST_P(BackendParity, WorkerCrashesAndHangsAreRecordedAndTheRestCompletes) {
  const std::string victim = modules_.back()->name;
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy(
      evaluators::CompilerTask::inliningForSize().defaultDecisionFeature);
  for (const std::string fault : {"abort", "kill", "hang"}) {
    SCOPED_TRACE(fault);
    EvaluatorOptions options;
    options.workers = 2;
    options.scratchDirectory = scratch_.path();
    options.compileTimeout = std::chrono::seconds(fault == "hang" ? 8 : 120);
    Expected<std::unique_ptr<Evaluator>> evaluator =
        Evaluator::create(options, CompilerTask::inliningForSize());
    ASSERT_TRUE(evaluator) << evaluator.error().message;
    // Workers inherit the variable when they start; the fault hits only the
    // victim's job under a policy, so its baseline is still measured.
    ::setenv("MLGO_WORKER_FAULT", (fault + ":" + victim).c_str(), 1);
    EvaluationResult result = run(**evaluator, {echo.get()}, false);
    ::unsetenv("MLGO_WORKER_FAULT");
    for (size_t m = 0; m < modules_.size(); ++m) {
      const JobResult& job = result.job(0, m);
      SCOPED_TRACE(modules_[m]->name);
      if (modules_[m]->name == victim) {
        if (fault == "abort") {
          EXPECT_EQ(job.status, JobStatus::CompilerCrashed) << job.message;
          EXPECT_NE(job.message.find("signal 6"), std::string::npos) << job.message;
          // The worker's own report (LLVM's stack dump) is kept for the record.
          EXPECT_FALSE(job.stderrTail.empty());
        } else if (fault == "kill") {
          // SIGKILL from outside (the OOM killer) is a cause, not our cleanup.
          EXPECT_EQ(job.status, JobStatus::CompilerCrashed) << job.message;
          EXPECT_NE(job.message.find("signal 9"), std::string::npos) << job.message;
        } else {
          EXPECT_EQ(job.status, JobStatus::TimedOut) << job.message;
        }
        EXPECT_NE(job.message.find(victim), std::string::npos) << job.message;
      } else {
        EXPECT_TRUE(job.ok()) << jobStatusName(job.status) << ": " << job.message;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Recipes, BackendParity, ::testing::Values("zlib", "lua"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

} // namespace
} // namespace mlgo::evaluators
