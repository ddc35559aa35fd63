// ReplayStore on a simulated compiler (no clang): the features of decision
// k+1 are a function of the decisions before it, as in LLVM's inliner. A
// policy that follows a stored trajectory to its end is answered with that
// trajectory's outcome; one that leaves it is not; contradictions, missing
// defaults, sampling and the memory budget behave as documented.
#include "mlgo/evaluators/ReplayStore.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mlgo::evaluators {
namespace {

using policies::DecisionMode;
using policies::TensorSpec;
using policies::TensorType;
using policies::Trajectory;

std::vector<TensorSpec> specs() {
  return {{"calls", TensorType::Int64, {1}, 0},
          {"weight", TensorType::Float, {1}, 0},
          {"inlining_default", TensorType::Int64, {1}, 0}};
}

// Inlines when `calls` is below a threshold; in Sampling mode, flips the
// answer with probability 1/2 (one draw per decision).
class ThresholdPolicy final : public policies::Policy {
public:
  explicit ThresholdPolicy(double threshold, bool readsDefault = false)
      : threshold_(threshold),
        inputs_(readsDefault ? specs() : std::vector<TensorSpec>{specs()[0], specs()[1]}) {}
  std::string describe() const override { return "threshold"; }
  const std::vector<TensorSpec>& inputs() const override { return inputs_; }
  policies::Decision decide(policies::FeatureValues features, DecisionMode mode,
                            RandomStream& rng) const override {
    int64_t advice = features[0] < threshold_ ? 1 : 0;
    if (mode == DecisionMode::Sampling && rng.uniform01() < 0.5)
      advice = 1 - advice;
    return {advice, -0.25 * static_cast<double>(advice + 1)};
  }

private:
  double threshold_;
  std::vector<TensorSpec> inputs_;
};

struct Compiled {
  Trajectory trajectory;
  uint64_t size = 0;
};

// A module of `sites` call sites: each inlined site adds a call site's worth
// of calls to the later ones (so features depend on earlier decisions), and
// the size is a function of the decisions. `weight` is an integer unless
// `fractional`.
Compiled compile(const policies::Policy& policy, size_t sites, DecisionMode mode, uint64_t key,
                 bool withDefaults, bool fractional = true) {
  Compiled c;
  c.trajectory.featureSpecs = specs();
  c.trajectory.width = 3;
  RandomStream rng(key);
  int64_t inlined = 0;
  c.size = 1000;
  for (size_t s = 0; s < sites; ++s) {
    double calls = static_cast<double>(s * 7 % 11) + static_cast<double>(inlined);
    double weight = (fractional ? 0.5 : 0.0) + static_cast<double>(s);
    int64_t heuristic = calls < 5 ? 1 : 0;
    std::vector<double> row{calls, weight, withDefaults ? static_cast<double>(heuristic) : -1.0};
    // The policy's inputs are the first 2 or all 3 columns, in order.
    policies::Decision d =
        policy.decide(std::span<const double>(row.data(), policy.inputs().size()), mode, rng);
    c.trajectory.observations.insert(c.trajectory.observations.end(), row.begin(), row.end());
    c.trajectory.defaultDecisions.push_back(withDefaults ? heuristic : -1);
    c.trajectory.actions.push_back(d.advice);
    c.trajectory.logProbabilities.push_back(d.logProbability);
    inlined += d.advice;
    c.size += d.advice ? 3 * s : 1;
  }
  return c;
}

void learn(ReplayStore& store, const std::string& module, const Compiled& c) {
  Status learned = store.learn(module, c.trajectory, c.size, c.size * 31, 0.2, true);
  ASSERT_TRUE(learned) << learned.error().message;
}

// The register allocator leaves NaN in masked candidates' rows: the same
// NaN after the same decisions is the same row, and the outcome (with its
// RegAllocScore) replays.
TEST(ReplayStore, NanFeaturesAndScoresReplay) {
  ReplayStore store(1 << 20, "inlining_default");
  ThresholdPolicy low(4);
  Compiled run = compile(low, 6, DecisionMode::Deterministic, 0, false);
  for (size_t d = 0; d < run.trajectory.decisions(); ++d)
    run.trajectory.observations[d * run.trajectory.width + 1] = std::nan("");
  for (int twice = 0; twice < 2; ++twice) {
    Status learned = store.learn("m", run.trajectory, run.size, 7, 0.1, true, 12.5);
    ASSERT_TRUE(learned) << learned.error().message;
  }
  ThresholdPolicy same(4);
  std::optional<JobResult> again = store.replay("m", same, DecisionMode::Deterministic, 0, false);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->measured, 12.5);
  Status otherScore = store.learn("m", run.trajectory, run.size, 7, 0.1, true, 13.0);
  EXPECT_FALSE(otherScore) << "the same decisions with another score were accepted";
}

TEST(ReplayStore, AFollowedTrajectoryIsAnsweredAndALeftOneIsNot) {
  ReplayStore store(1 << 20, "inlining_default");
  ThresholdPolicy low(4), high(8);
  Compiled lowRun = compile(low, 12, DecisionMode::Deterministic, 0, false);
  EXPECT_FALSE(store.replay("m", low, DecisionMode::Deterministic, 0, false)); // nothing known
  learn(store, "m", lowRun);

  std::optional<JobResult> again = store.replay("m", low, DecisionMode::Deterministic, 0, false);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, JobStatus::Ok);
  EXPECT_EQ(again->sizeBytes, lowRun.size);
  EXPECT_EQ(again->codeHash, lowRun.size * 31);
  EXPECT_EQ(again->decisions, 12u);
  ASSERT_TRUE(again->trajectory);
  EXPECT_EQ(again->trajectory->actions, lowRun.trajectory.actions);
  EXPECT_EQ(again->trajectory->logProbabilities, lowRun.trajectory.logProbabilities);
  EXPECT_TRUE(again->trajectory->observations.empty()); // features not asked for

  // Another threshold decides otherwise somewhere: it must be compiled.
  Compiled highRun = compile(high, 12, DecisionMode::Deterministic, 0, false);
  ASSERT_NE(highRun.trajectory.actions, lowRun.trajectory.actions);
  EXPECT_FALSE(store.replay("m", high, DecisionMode::Deterministic, 0, false));
  learn(store, "m", highRun);
  std::optional<JobResult> high2 = store.replay("m", high, DecisionMode::Deterministic, 0, false);
  ASSERT_TRUE(high2);
  EXPECT_EQ(high2->sizeBytes, highRun.size);
  // A third policy that agrees with `low` everywhere replays `low`'s outcome.
  ThresholdPolicy sameAsLow(3.5); // the same on integers
  ASSERT_EQ(compile(sameAsLow, 12, DecisionMode::Deterministic, 0, false).trajectory.actions,
            lowRun.trajectory.actions);
  std::optional<JobResult> same =
      store.replay("m", sameAsLow, DecisionMode::Deterministic, 0, false);
  ASSERT_TRUE(same);
  EXPECT_EQ(same->sizeBytes, lowRun.size);
  // Other modules know nothing.
  EXPECT_FALSE(store.replay("other", low, DecisionMode::Deterministic, 0, false));

  ReplayStatistics s = store.statistics();
  EXPECT_EQ(s.modules, 1u);
  EXPECT_EQ(s.trajectories, 2u);
  // Shared prefix: fewer nodes than two separate trajectories of 13 nodes.
  EXPECT_LT(s.nodes, 26u);
  EXPECT_GT(s.bytes, 0u);
}

TEST(ReplayStore, ReplayedFeaturesAreTheStoredOnesExactly) {
  ReplayStore store(1 << 20, "inlining_default");
  ThresholdPolicy policy(6);
  Compiled run = compile(policy, 9, DecisionMode::Deterministic, 0, true);
  learn(store, "m", run);
  std::optional<JobResult> replayed =
      store.replay("m", policy, DecisionMode::Deterministic, 0, true);
  ASSERT_TRUE(replayed);
  const Trajectory& t = *replayed->trajectory;
  EXPECT_EQ(t.featureSpecs, specs());
  EXPECT_EQ(t.observations, run.trajectory.observations); // 0.5 + s survives (not an int)
  EXPECT_EQ(t.defaultDecisions, run.trajectory.defaultDecisions);
}

TEST(ReplayStore, DefaultsAreNeededOnlyWhenReadOrRecorded) {
  ReplayStore store(1 << 20, "inlining_default");
  ThresholdPolicy policy(6), readsDefault(6, true);
  learn(store, "m", compile(policy, 9, DecisionMode::Deterministic, 0, false));
  EXPECT_TRUE(store.replay("m", policy, DecisionMode::Deterministic, 0, false));
  EXPECT_FALSE(store.replay("m", policy, DecisionMode::Deterministic, 0, true));
  EXPECT_FALSE(store.replay("m", readsDefault, DecisionMode::Deterministic, 0, false));
  // A compile that recorded the defaults fills them in.
  learn(store, "m", compile(policy, 9, DecisionMode::Deterministic, 0, true));
  std::optional<JobResult> replayed =
      store.replay("m", policy, DecisionMode::Deterministic, 0, true);
  ASSERT_TRUE(replayed);
  EXPECT_EQ(replayed->trajectory->defaultDecisions,
            compile(policy, 9, DecisionMode::Deterministic, 0, true).trajectory.defaultDecisions);
}

TEST(ReplayStore, SamplingReplaysExactlyWithTheJobsOwnStream) {
  ReplayStore store(1 << 20, "inlining_default");
  ThresholdPolicy policy(6);
  Compiled run = compile(policy, 6, DecisionMode::Sampling, 42, false);
  learn(store, "m", run);
  std::optional<JobResult> replayed = store.replay("m", policy, DecisionMode::Sampling, 42, false);
  ASSERT_TRUE(replayed);
  EXPECT_EQ(replayed->sizeBytes, run.size);
  EXPECT_EQ(replayed->trajectory->actions, run.trajectory.actions);
  // Other streams draw otherwise; whenever a replay answers, it is what the
  // compile with that stream gives.
  size_t answered = 0;
  for (uint64_t key = 0; key < 64; ++key) {
    std::optional<JobResult> r = store.replay("m", policy, DecisionMode::Sampling, key, false);
    if (!r)
      continue;
    ++answered;
    EXPECT_EQ(r->sizeBytes, compile(policy, 6, DecisionMode::Sampling, key, false).size) << key;
  }
  EXPECT_LT(answered, 64u);
}

TEST(ReplayStore, ContradictionsAreErrorsAndForgetTheModule) {
  ReplayStore store(1 << 20, "inlining_default");
  ThresholdPolicy policy(6);
  Compiled run = compile(policy, 8, DecisionMode::Deterministic, 0, false);
  learn(store, "m", run);
  Compiled otherFeatures = run;
  otherFeatures.trajectory.observations[3 * 3] += 1; // decision 3 saw other calls
  Status refused = store.learn("m", otherFeatures.trajectory, run.size, 0, 0.1, true);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("module \"m\""), std::string::npos);
  EXPECT_NE(refused.error().message.find("other features"), std::string::npos)
      << refused.error().message;
  EXPECT_FALSE(store.replay("m", policy, DecisionMode::Deterministic, 0, false));
  EXPECT_EQ(store.statistics().modules, 0u);

  learn(store, "m", run);
  Status otherCode = store.learn("m", run.trajectory, run.size + 1, 0, 0.1, true);
  ASSERT_FALSE(otherCode);
  EXPECT_NE(otherCode.error().message.find("other code"), std::string::npos);

  learn(store, "m", run);
  Compiled shorter = run;
  shorter.trajectory.observations.resize(3 * 5);
  shorter.trajectory.actions.resize(5);
  shorter.trajectory.defaultDecisions.resize(5);
  shorter.trajectory.logProbabilities.resize(5);
  EXPECT_FALSE(store.learn("m", shorter.trajectory, 1, 1, 0.1, true));
}

TEST(ReplayStore, TheBudgetForgetsTheLeastRecentlyUsedModules) {
  ThresholdPolicy policy(6);
  Compiled run = compile(policy, 40, DecisionMode::Deterministic, 0, false);
  ReplayStore probe(size_t{1} << 30, "inlining_default");
  learn(probe, "a", run);
  const size_t oneModule = probe.statistics().bytes;

  ReplayStore store(oneModule * 2 + oneModule / 2, "inlining_default");
  learn(store, "a", run);
  learn(store, "b", run);
  EXPECT_TRUE(store.replay("a", policy, DecisionMode::Deterministic, 0, false)); // a: recent
  learn(store, "c", run); // over budget: b is the least recently used
  ReplayStatistics s = store.statistics();
  EXPECT_EQ(s.modules, 2u);
  EXPECT_EQ(s.evictedModules, 1u);
  EXPECT_LE(s.bytes, store.memoryBudget());
  EXPECT_TRUE(store.replay("a", policy, DecisionMode::Deterministic, 0, false));
  EXPECT_FALSE(store.replay("b", policy, DecisionMode::Deterministic, 0, false));
  EXPECT_TRUE(store.replay("c", policy, DecisionMode::Deterministic, 0, false));
}

TEST(ReplayStore, RowsOfIntegersTakeFourBytesAValue) {
  ThresholdPolicy policy(6);
  ReplayStore integral(size_t{1} << 30, "inlining_default");
  ReplayStore fractional(size_t{1} << 30, "inlining_default");
  learn(integral, "m", compile(policy, 40, DecisionMode::Deterministic, 0, false, false));
  learn(fractional, "m", compile(policy, 40, DecisionMode::Deterministic, 0, false, true));
  // 40 rows of 3 values: 4 bytes less per value.
  EXPECT_EQ(fractional.statistics().bytes - integral.statistics().bytes, 40u * 3u * 4u);
  // Replayed rows of either kind are the recorded ones.
  for (bool asFraction : {false, true}) {
    ReplayStore& store = asFraction ? fractional : integral;
    Compiled run = compile(policy, 40, DecisionMode::Deterministic, 0, true, asFraction);
    ASSERT_TRUE(store.learn("m", run.trajectory, run.size, run.size * 31, 0.1, true));
    std::optional<JobResult> r = store.replay("m", policy, DecisionMode::Deterministic, 0, true);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->trajectory->observations, run.trajectory.observations);
  }
}

TEST(ReplayStore, MeanCompileTimeCountsFullCompilesOnly) {
  ReplayStore store(1 << 20, "inlining_default");
  ThresholdPolicy policy(6);
  Compiled run = compile(policy, 5, DecisionMode::Deterministic, 0, false);
  EXPECT_EQ(store.meanCompileSeconds("m"), 0.0);
  ASSERT_TRUE(store.learn("m", run.trajectory, run.size, 7, 0.4, true));
  ASSERT_TRUE(store.learn("m", run.trajectory, run.size, 7, 0.01, false)); // a cache hit
  ASSERT_TRUE(store.learn("m", run.trajectory, run.size, 7, 0.2, true));
  EXPECT_DOUBLE_EQ(store.meanCompileSeconds("m"), 0.3);
}

} // namespace
} // namespace mlgo::evaluators
