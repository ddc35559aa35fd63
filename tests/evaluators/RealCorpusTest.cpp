// The evaluator on the real zlib and Lua corpora with real clang-22.
#include "TestSupport.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/policies/Policy.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace fs = std::filesystem;

namespace mlgo::evaluators {
namespace {

fs::path corpusDirectory(const std::string& name) {
  const char* dir = std::getenv("MLGO_CORPORA_DIR");
  return (dir ? fs::path(dir) : fs::path("corpora")) / name / "corpus";
}

class EvaluatorOnRealCorpus : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    Expected<corpus::Corpus> loaded = corpus::Corpus::load(corpusDirectory(GetParam()));
    ASSERT_TRUE(loaded) << loaded.error().message;
    corpus_ = std::make_unique<corpus::Corpus>(loaded.take());
    for (const corpus::ModuleSpec& m : corpus_->modules())
      modules_.push_back(&m);
    EvaluatorOptions options;
    options.workers = 2;
    options.scratchDirectory = scratch_.path();
    // No disk cache: each test measures its own baselines.
    Expected<std::unique_ptr<Evaluator>> evaluator =
        Evaluator::create(options, CompilerTask::inliningForSize());
    ASSERT_TRUE(evaluator) << evaluator.error().message;
    evaluator_ = evaluator.take();
  }

  mlgo::testing::ScratchDirectory scratch_;
  std::unique_ptr<corpus::Corpus> corpus_;
  std::vector<const corpus::ModuleSpec*> modules_;
  std::unique_ptr<Evaluator> evaluator_;
};

TEST_P(EvaluatorOnRealCorpus, HeuristicEchoReproducesOzByteForByte) {
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy();
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
    EXPECT_EQ(job.reward, 0.0);
    // Byte for byte: the code hash equals a plain -Oz compile's.
    JobResult plain =
        evaluator_->compile(*modules_[m], nullptr, policies::DecisionMode::Deterministic, 0, false);
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

INSTANTIATE_TEST_SUITE_P(Recipes, EvaluatorOnRealCorpus, ::testing::Values("zlib", "lua"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

} // namespace
} // namespace mlgo::evaluators
