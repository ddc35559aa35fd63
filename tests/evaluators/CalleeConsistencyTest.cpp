// Callee consistency (policies/CalleeConsistent.h) on real clang-22, in the
// in-process worker: a static helper that -Oz inlines at all three of its
// call sites; a flip set that declines only its first call leaves the other
// two inlined, the same flip set callee-consistent declines all three. The
// rule's bookkeeping, its file field, the clang backend's refusal and replay
// being skipped are checked as well.
#include "TestSupport.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/corpus/Extract.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/policies/CalleeConsistent.h"
#include "mlgo/policies/FlipSet.h"
#include "mlgo/policies/PolicyFile.h"

#include <gtest/gtest.h>

namespace mlgo::evaluators {
namespace {

using policies::CalleeCommitments;

TEST(CalleeCommitments, FollowsTheFirstHeuristicInlineSiteOfADiscardableCallee) {
  CalleeCommitments rule;
  EXPECT_EQ(rule.apply("helper", true, 1, 0), 0); // first site: committed to decline
  EXPECT_EQ(rule.apply("helper", true, 1, 1), 0); // overruled
  EXPECT_EQ(rule.apply("helper", true, 0, 1), 1); // the heuristic declines: the policy's own
  EXPECT_EQ(rule.apply("kept", false, 1, 0), 0);  // not discardable: never committed
  EXPECT_EQ(rule.apply("kept", false, 1, 1), 1);
  EXPECT_EQ(rule.apply("", true, 1, 0), 0); // unnamed: never committed
  EXPECT_EQ(rule.apply("", true, 1, 1), 1);
  EXPECT_EQ(rule.apply("other", true, 1, 1), 1); // committed to inline
  EXPECT_EQ(rule.apply("other", true, 1, 0), 1);
  EXPECT_EQ(rule.callees(), 2u);
  EXPECT_EQ(rule.overruled(), 2u);
}

TEST(CalleeConsistentPolicy, FileRoundTripAndRefusals) {
  auto inner = std::shared_ptr<const policies::Policy>(
      policies::makeHeuristicEchoPolicy("inlining_default"));
  policies::CalleeConsistentPolicy consistent(inner);
  policies::CalleeConsistentPolicy twice(std::make_shared<policies::CalleeConsistentPolicy>(inner));
  EXPECT_EQ(&twice.inner(), inner.get()); // applied once
  Expected<std::string> json = policies::policyToJson(consistent);
  ASSERT_TRUE(json) << json.error().message;
  EXPECT_NE(json->find("\"callee_consistent\": true"), std::string::npos) << *json;
  Expected<std::unique_ptr<policies::Policy>> back = policies::policyFromJson(*json, "t.json");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_TRUE((*back)->calleeConsistent());
  EXPECT_EQ((*back)->describe(), "heuristic callee-consistent");
  Expected<std::string> plain = policies::policyToJson(*inner);
  ASSERT_TRUE(plain);
  Expected<std::unique_ptr<policies::Policy>> plainBack = policies::policyFromJson(*plain, "p");
  ASSERT_TRUE(plainBack);
  EXPECT_FALSE((*plainBack)->calleeConsistent());

  std::string bad = *json;
  bad.replace(bad.find("true"), 4, "\"yes\"");
  Expected<std::unique_ptr<policies::Policy>> refused = policies::policyFromJson(bad, "bad.json");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("bad.json: callee_consistent"), std::string::npos)
      << refused.error().message;
}

class CalleeConsistency : public ::testing::Test {
protected:
  void SetUp() override {
    // helper: internal, a few instructions; -Oz inlines every call.
    // Callers of different shapes, so that each call is its own decision
    // state (a flip set flips every decision of one state).
    mlgo::testing::compileWithEmbeddedBitcode(
        "static int helper(int x) { return x * 3 + 1; }\n"
        "int a(int x) { return helper(x); }\n"
        "int b(int x, int y) { return y > 0 ? helper(x + 1) * 2 : y; }\n"
        "int c(int *p, int n) { int s = 0; for (int i = 0; i < n; ++i) s += p[i];\n"
        "                       return n > 3 ? helper(s) ^ 5 : s - 1; }\n",
        dir_ / "build/m.o");
    Expected<std::vector<corpus::ObjectInput>> objects =
        corpus::findObjectsInDirectory(dir_ / "build");
    ASSERT_TRUE(objects) << objects.error().message;
    ASSERT_TRUE(corpus::extractCorpus(*objects, dir_ / "corpus", {}));
    Expected<corpus::Corpus> loaded = corpus::Corpus::load(dir_ / "corpus");
    ASSERT_TRUE(loaded) << loaded.error().message;
    corpus_ = std::make_unique<corpus::Corpus>(loaded.take());
  }

  std::unique_ptr<Evaluator> make(BackendKind backend, bool replay) {
    EvaluatorOptions options;
    options.backend = backend;
    options.replay = replay;
    options.workers = 1;
    options.scratchDirectory = dir_.path();
    options.baselineCacheDirectory.reset();
    Expected<std::unique_ptr<Evaluator>> evaluator =
        Evaluator::create(options, CompilerTask::inliningForSize());
    EXPECT_TRUE(evaluator) << evaluator.error().message;
    return evaluator ? evaluator.take() : nullptr;
  }

  EvaluationResult run(Evaluator& evaluator, const policies::Policy& policy) {
    EvaluationRequest request;
    request.candidates = {&policy};
    request.modules = {&corpus_->modules().front()};
    request.recordTrajectories = true;
    return evaluator.evaluate(request);
  }

  mlgo::testing::ScratchDirectory dir_;
  std::unique_ptr<corpus::Corpus> corpus_;
};

TEST_F(CalleeConsistency, DecliningTheFirstCallDeclinesEveryCall) {
  std::unique_ptr<Evaluator> evaluator = make(BackendKind::InProcess, /*replay=*/true);
  ASSERT_TRUE(evaluator);
  auto heuristic = policies::makeHeuristicEchoPolicy("inlining_default");
  EvaluationResult oz = run(*evaluator, *heuristic);
  const JobResult& ozJob = oz.job(0, 0);
  ASSERT_TRUE(ozJob.ok()) << ozJob.message;
  const policies::Trajectory& t = *ozJob.trajectory;
  ASSERT_EQ(t.decisions(), 3u);
  ASSERT_EQ(t.defaultDecisions, (std::vector<int64_t>{1, 1, 1}));

  Expected<policies::FlipSetPolicy> created =
      policies::FlipSetPolicy::create(t.featureSpecs, "inlining_default");
  ASSERT_TRUE(created) << created.error().message;
  auto declineFirst = std::make_shared<policies::FlipSetPolicy>(created.take());
  declineFirst->toggle(declineFirst->stateHash({t.row(0), t.width}));
  policies::CalleeConsistentPolicy consistent(declineFirst);

  EvaluationResult alone = run(*evaluator, *declineFirst);
  ASSERT_TRUE(alone.job(0, 0).ok()) << alone.job(0, 0).message;
  EXPECT_EQ(alone.job(0, 0).trajectory->actions, (std::vector<int64_t>{0, 1, 1}));

  // Twice: the second would be a replay of the first if consistency allowed it.
  for (int pass = 0; pass < 2; ++pass) {
    EvaluationResult result = run(*evaluator, consistent);
    const JobResult& job = result.job(0, 0);
    ASSERT_TRUE(job.ok()) << job.message;
    EXPECT_FALSE(job.replayed);
    EXPECT_EQ(job.trajectory->actions, (std::vector<int64_t>{0, 0, 0}));
    EXPECT_NE(job.sizeBytes, alone.job(0, 0).sizeBytes);
  }
}

TEST_F(CalleeConsistency, ClangsChannelRefusesIt) {
  std::unique_ptr<Evaluator> evaluator = make(BackendKind::Clang, /*replay=*/false);
  ASSERT_TRUE(evaluator);
  policies::CalleeConsistentPolicy consistent(std::shared_ptr<const policies::Policy>(
      policies::makeHeuristicEchoPolicy("inlining_default")));
  EvaluationResult result = run(*evaluator, consistent);
  const JobResult& job = result.job(0, 0);
  EXPECT_FALSE(job.ok());
  EXPECT_NE(job.message.find("callee-consistent"), std::string::npos) << job.message;
}

} // namespace
} // namespace mlgo::evaluators
