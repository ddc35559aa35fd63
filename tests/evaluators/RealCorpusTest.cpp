// The evaluator on the real zlib and Lua corpora with real clang-22.
#include "TestPolicies.h"
#include "TestSupport.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/policies/Policy.h"
#include "mlgo/policies/Vocabulary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace fs = std::filesystem;

namespace mlgo::evaluators {
namespace {

class EvaluatorOnRealCorpus : public testing::RealCorpusTest {
protected:
  void SetUp() override {
    testing::RealCorpusTest::SetUp();
    if (HasFatalFailure())
      return;
    EvaluatorOptions options;
    options.workers = 2;
    options.scratchDirectory = scratch_.path();
    // No disk cache: each test measures its own baselines.
    Expected<std::unique_ptr<Evaluator>> evaluator =
        Evaluator::create(options, CompilerTask::inliningForSize());
    ASSERT_TRUE(evaluator) << evaluator.error().message;
    evaluator_ = evaluator.take();
  }

  std::unique_ptr<Evaluator> evaluator_;
};

TEST_P(EvaluatorOnRealCorpus, HeuristicEchoReproducesOzByteForByte) {
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy(
      evaluators::CompilerTask::inliningForSize().defaultDecisionFeature);
  EvaluationRequest request;
  request.candidates = {echo.get()};
  request.modules = modules_;
  EvaluationResult result = evaluator_->evaluate(request);
  uint64_t decisions = 0;
  for (size_t m = 0; m < modules_.size(); ++m) {
    const JobResult& job = result.job(0, m);
    SCOPED_TRACE(modules_[m]->name);
    ASSERT_TRUE(job.ok()) << jobStatusName(job.status) << ": " << job.message << "\n"
                          << job.stderrTail;
    ASSERT_TRUE(result.baselineBytes[m]);
    EXPECT_EQ(job.sizeBytes, *result.baselineBytes[m]);
    // The text-size measure is the object's size, in the job and its baseline.
    EXPECT_EQ(job.measured, static_cast<double>(job.sizeBytes));
    EXPECT_EQ(result.baselineMeasure(m), static_cast<double>(*result.baselineBytes[m]));
    EXPECT_EQ(job.reward, 0.0);
    // Byte for byte: the code hash equals a plain -Oz compile's.
    JobResult plain = evaluator_->compile({.module = modules_[m]});
    ASSERT_TRUE(plain.ok()) << plain.message;
    EXPECT_EQ(job.codeHash, plain.codeHash);
    decisions += job.decisions;
  }
  EXPECT_GT(decisions, 0u) << "no inlining decision was asked on the whole corpus";
  std::printf("%s: %zu modules, %llu decisions, heuristic echo == -Oz on all\n", GetParam().c_str(),
              modules_.size(), static_cast<unsigned long long>(decisions));
}

TEST_P(EvaluatorOnRealCorpus, ConstantPoliciesDiffer) {
  std::unique_ptr<policies::Policy> never = policies::makeConstantPolicy(0);
  std::unique_ptr<policies::Policy> always = policies::makeConstantPolicy(1);
  EvaluationRequest request;
  request.candidates = {never.get(), always.get()};
  request.modules = modules_;
  EvaluationResult result = evaluator_->evaluate(request);
  for (size_t c = 0; c < 2; ++c) {
    CandidateScore score = result.score(c);
    EXPECT_EQ(score.failedModules, 0u);
    EXPECT_NE(score.totalBytes, score.totalBaselineBytes)
        << (c ? "always" : "never") << " inlining gave exactly the -Oz size";
    std::printf("%s %s: %llu bytes vs -Oz %llu (%+.2f%%)\n", GetParam().c_str(),
                c ? "always" : "never", static_cast<unsigned long long>(score.totalBytes),
                static_cast<unsigned long long>(score.totalBaselineBytes),
                100.0 * (static_cast<double>(score.totalBytes) /
                             static_cast<double>(score.totalBaselineBytes) -
                         1));
  }
  // Inlining everything grows code.
  EXPECT_GT(result.score(1).totalBytes, result.score(1).totalBaselineBytes);
}

// An MLP's decisions inside real compilations equal a forward pass computed
// here by hand from the policy's parameters, vocabulary and the recorded
// features, written without the policy's own code.
TEST_P(EvaluatorOnRealCorpus, MlpDecisionsMatchAHandComputedForwardPass) {
  // Vocabulary from the heuristic's decisions on this corpus.
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy(
      evaluators::CompilerTask::inliningForSize().defaultDecisionFeature);
  EvaluationRequest traceRequest;
  traceRequest.candidates = {echo.get()};
  traceRequest.modules = modules_;
  traceRequest.recordTrajectories = true;
  std::optional<testing::MixedMlp> mixed =
      testing::makeMixedMlp(evaluator_->evaluate(traceRequest));
  ASSERT_TRUE(mixed);
  const policies::MlpPolicy& mlp = *mixed->policy;
  const std::vector<double>& theta = mixed->theta;
  const policies::Vocabulary* vocabulary = &mixed->vocabulary;
  const size_t inputs = mixed->inputs, hidden = testing::MixedMlp::hidden;
  const size_t outBias = hidden * inputs + hidden + 2 * hidden;

  EvaluationRequest request;
  request.candidates = {&mlp};
  request.modules = modules_;
  request.recordTrajectories = true;
  EvaluationResult result = evaluator_->evaluate(request);

  // Layout: W1 (hidden x inputs, column-major), b1, W2 (2 x hidden), b2.
  auto w1 = [&](size_t o, size_t i) { return theta[i * hidden + o]; };
  auto b1 = [&](size_t o) { return theta[hidden * inputs + o]; };
  auto w2 = [&](size_t o, size_t i) { return theta[hidden * inputs + hidden + i * 2 + o]; };
  auto b2 = [&](size_t o) { return theta[outBias + o]; };
  size_t checked = 0, inlined = 0;
  for (size_t m = 0; m < modules_.size(); ++m) {
    const JobResult& job = result.job(0, m);
    ASSERT_TRUE(job.ok()) << job.message;
    ASSERT_TRUE(job.trajectory);
    const policies::Trajectory& t = *job.trajectory;
    for (size_t d = 0; d < t.decisions(); ++d) {
      std::vector<double> x;
      for (size_t f = 0; f < t.featureSpecs.size(); ++f) {
        if (t.featureSpecs[f].name == "inlining_default")
          continue;
        const std::vector<double>& b = *vocabulary->find(t.featureSpecs[f].name);
        double q =
            static_cast<double>(std::upper_bound(b.begin(), b.end(), t.row(d)[f]) - b.begin()) /
            static_cast<double>(b.size());
        x.push_back(q);
        x.push_back(q * q);
      }
      ASSERT_EQ(x.size(), inputs);
      double logits[2];
      std::vector<double> h(hidden);
      for (size_t o = 0; o < hidden; ++o) {
        double z = b1(o);
        for (size_t i = 0; i < inputs; ++i)
          z += w1(o, i) * x[i];
        h[o] = std::tanh(z);
      }
      for (size_t o = 0; o < 2; ++o) {
        logits[o] = b2(o);
        for (size_t i = 0; i < hidden; ++i)
          logits[o] += w2(o, i) * h[i];
      }
      int64_t expected = logits[1] > logits[0] ? 1 : 0;
      ASSERT_EQ(t.actions[d], expected) << modules_[m]->name << " decision " << d;
      ++checked;
      inlined += expected;
    }
  }
  EXPECT_GT(checked, 0u);
  EXPECT_GT(inlined, 0u) << "the test policy never inlines: it checks only one branch";
  EXPECT_LT(inlined, checked) << "the test policy always inlines: it checks only one branch";
  std::printf("%s: %zu MLP decisions match the hand-computed forward pass (%zu inline)\n",
              GetParam().c_str(), checked, inlined);
}

// The parallel evaluation against its serial twin: a sampling policy (the
// draws come from per-job streams) gives identical results at 1 and 2 workers.
TEST_P(EvaluatorOnRealCorpus, ParallelEvaluationEqualsSerial) {
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy(
      evaluators::CompilerTask::inliningForSize().defaultDecisionFeature);
  EvaluationRequest traceRequest;
  traceRequest.candidates = {echo.get()};
  traceRequest.modules = modules_;
  traceRequest.recordTrajectories = true;
  EvaluationResult traced = evaluator_->evaluate(traceRequest);
  policies::FeatureSamples samples;
  const std::vector<policies::TensorSpec>* specs = nullptr;
  for (const JobResult& job : traced.jobs)
    if (job.trajectory && job.trajectory->decisions() > 0) {
      specs = &job.trajectory->featureSpecs;
      for (size_t d = 0; d < job.trajectory->decisions(); ++d)
        for (size_t f = 0; f < specs->size(); ++f)
          samples[(*specs)[f].name].push_back(job.trajectory->row(d)[f]);
    }
  ASSERT_NE(specs, nullptr);
  Expected<policies::Vocabulary> vocabulary = policies::buildVocabulary(samples);
  ASSERT_TRUE(vocabulary);
  Expected<std::shared_ptr<const policies::MlpStructure>> structure =
      policies::MlpStructure::create(*specs, *vocabulary,
                                     CompilerTask::inliningForSize().policyOptions({}));
  ASSERT_TRUE(structure);
  policies::MlpPolicy a = policies::MlpPolicy::initialised(*structure, 1);
  policies::MlpPolicy b = policies::MlpPolicy::initialised(*structure, 2);

  auto run = [&](size_t workers) {
    EvaluatorOptions options;
    options.workers = workers;
    options.scratchDirectory = scratch_.path();
    Expected<std::unique_ptr<Evaluator>> evaluator =
        Evaluator::create(options, CompilerTask::inliningForSize());
    EXPECT_TRUE(evaluator);
    EvaluationRequest request;
    request.candidates = {&a, &b};
    request.modules = modules_;
    request.mode = policies::DecisionMode::Sampling;
    request.seed = 42;
    request.step = 3;
    request.recordTrajectories = true;
    return (*evaluator)->evaluate(request);
  };
  EvaluationResult serial = run(1), parallel = run(2);
  size_t inlined = 0;
  for (size_t j = 0; j < serial.jobs.size(); ++j) {
    const JobResult &s = serial.jobs[j], &p = parallel.jobs[j];
    ASSERT_TRUE(s.ok() && p.ok()) << s.message << p.message;
    EXPECT_EQ(s.sizeBytes, p.sizeBytes);
    EXPECT_EQ(s.codeHash, p.codeHash);
    EXPECT_EQ(s.reward, p.reward);
    ASSERT_TRUE(s.trajectory && p.trajectory);
    EXPECT_EQ(s.trajectory->actions, p.trajectory->actions);
    EXPECT_EQ(s.trajectory->logProbabilities, p.trajectory->logProbabilities);
    for (int64_t action : s.trajectory->actions)
      inlined += static_cast<size_t>(action);
  }
  EXPECT_GT(inlined, 0u) << "sampling never chose to inline: the draws were not exercised";
}

TEST_P(EvaluatorOnRealCorpus, BaselinesAreCachedOnDisk) {
  auto make = [&] {
    EvaluatorOptions options;
    options.workers = 2;
    options.scratchDirectory = scratch_.path();
    options.baselineCacheDirectory = scratch_.path() / "baseline-cache";
    return Evaluator::create(options, CompilerTask::inliningForSize()).take();
  };
  std::vector<BaselineResult> first = make()->baselines(modules_);
  std::vector<BaselineResult> second = make()->baselines(modules_);
  for (size_t m = 0; m < modules_.size(); ++m) {
    ASSERT_TRUE(first[m].sizeBytes) << first[m].message;
    EXPECT_FALSE(first[m].fromCache);
    EXPECT_TRUE(second[m].fromCache);
    EXPECT_EQ(first[m].sizeBytes, second[m].sizeBytes);
  }
  // Another command line is another baseline.
  EvaluatorOptions options;
  options.workers = 2;
  options.scratchDirectory = scratch_.path();
  options.baselineCacheDirectory = scratch_.path() / "baseline-cache";
  options.filters.addFlags = {"-mllvm", "-inline-threshold=100"};
  std::vector<BaselineResult> other =
      Evaluator::create(options, CompilerTask::inliningForSize()).take()->baselines(modules_);
  EXPECT_FALSE(other.front().fromCache);
}

INSTANTIATE_TEST_SUITE_P(Recipes, EvaluatorOnRealCorpus, ::testing::Values("zlib", "lua"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

} // namespace
} // namespace mlgo::evaluators
