#include "mlgo/policies/Policy.h"

#include "PoliciesTestSupport.h"

#include <gtest/gtest.h>

namespace mlgo::policies {
namespace {

using testing::inlinerHeader;
using testing::loadHeader;

// A policy that only declares inputs, to exercise binding.
class InputsOnlyPolicy : public Policy {
public:
  explicit InputsOnlyPolicy(std::vector<TensorSpec> inputs) : inputs_(std::move(inputs)) {}
  std::string describe() const override { return "inputs-only"; }
  const std::vector<TensorSpec>& inputs() const override { return inputs_; }
  Decision decide(FeatureValues, DecisionMode, RandomStream&) const override { return {}; }

private:
  std::vector<TensorSpec> inputs_;
};

TEST(BindPolicyInputs, MapsInputsToHeaderIndicesByName) {
  InputsOnlyPolicy policy({{"inlining_default", TensorType::Int64, {1}, 0},
                           {"callee_users", TensorType::Int64, {1}, 0},
                           {"sroa_savings", TensorType::Int64, {1}, 0}});
  Expected<std::vector<size_t>> binding = bindPolicyInputs(policy, inlinerHeader());
  ASSERT_TRUE(binding) << binding.error().message;
  EXPECT_EQ(*binding, (std::vector<size_t>{38, 35, 0}));
}

TEST(BindPolicyInputs, TypeMismatchNamesFeatureAndBothSpecs) {
  InputsOnlyPolicy policy(
      {{"sroa_savings", TensorType::Int64, {1}, 0}, {"callee_users", TensorType::Int64, {1}, 0}});
  ChannelHeader header = inlinerHeader();
  header.features[35].type = TensorType::Float;
  Expected<std::vector<size_t>> binding = bindPolicyInputs(policy, header);
  ASSERT_FALSE(binding);
  EXPECT_EQ(binding.error().message,
            "policy feature \"callee_users\" is int64_t[1] but clang sends float[1]");
}

TEST(BindPolicyInputs, ShapeMismatchIsAnError) {
  InputsOnlyPolicy policy({{"mask", TensorType::Int64, {33}, 0}});
  Expected<std::vector<size_t>> binding =
      bindPolicyInputs(policy, loadHeader("regalloc-evict-header-llvm22.json"));
  ASSERT_FALSE(binding);
  EXPECT_EQ(binding.error().message,
            "policy feature \"mask\" is int64_t[33] but clang sends int64_t[1,33]");
}

TEST(BindPolicyInputs, MissingFeatureIsAnError) {
  InputsOnlyPolicy policy({{"caller_embedding", TensorType::Float, {75}, 0}});
  Expected<std::vector<size_t>> binding = bindPolicyInputs(policy, inlinerHeader());
  ASSERT_FALSE(binding);
  EXPECT_EQ(binding.error().message,
            "policy feature \"caller_embedding\" (float[75]) is missing from clang's header");
}

TEST(HeuristicEchoPolicy, BindsToTheInlinerAndEchoesTheDefault) {
  std::unique_ptr<Policy> policy = makeHeuristicEchoPolicy("inlining_default");
  EXPECT_EQ(policy->describe(), "heuristic");
  ASSERT_EQ(policy->inputs().size(), 1u);
  EXPECT_EQ(policy->inputs()[0].describe(), "inlining_default: int64_t[1]");
  Expected<std::vector<size_t>> binding = bindPolicyInputs(*policy, inlinerHeader());
  ASSERT_TRUE(binding);
  EXPECT_EQ(*binding, std::vector<size_t>{38});

  RandomStream rng(1);
  for (double value : {0.0, 1.0}) {
    for (DecisionMode mode : {DecisionMode::Deterministic, DecisionMode::Sampling}) {
      Decision decision = policy->decide(std::span<const double>(&value, 1), mode, rng);
      EXPECT_EQ(decision.advice, static_cast<int64_t>(value));
      EXPECT_EQ(decision.logProbability, 0.0);
    }
  }
}

TEST(HeuristicEchoPolicy, HasNoDefaultFeatureInRegallocHeaders) {
  std::unique_ptr<Policy> policy = makeHeuristicEchoPolicy("inlining_default");
  Expected<std::vector<size_t>> binding =
      bindPolicyInputs(*policy, loadHeader("regalloc-priority-header-llvm22.json"));
  ASSERT_FALSE(binding);
  EXPECT_EQ(binding.error().message,
            "policy feature \"inlining_default\" (int64_t[1]) is missing from clang's header");
}

TEST(HeuristicEchoPolicy, FeatureNameIsConfigurable) {
  std::unique_ptr<Policy> policy = makeHeuristicEchoPolicy("is_multiple_blocks");
  Expected<std::vector<size_t>> binding = bindPolicyInputs(*policy, inlinerHeader());
  ASSERT_TRUE(binding);
  EXPECT_EQ(*binding, std::vector<size_t>{21});
}

TEST(ConstantPolicy, AlwaysGivesItsAdviceAndReadsNothing) {
  RandomStream rng(1);
  for (int64_t advice : {0, 1}) {
    std::unique_ptr<Policy> policy = makeConstantPolicy(advice);
    EXPECT_EQ(policy->describe(), "constant(" + std::to_string(advice) + ")");
    EXPECT_TRUE(policy->inputs().empty());
    Expected<std::vector<size_t>> binding = bindPolicyInputs(*policy, inlinerHeader());
    ASSERT_TRUE(binding);
    EXPECT_TRUE(binding->empty());
    Decision decision = policy->decide({}, DecisionMode::Sampling, rng);
    EXPECT_EQ(decision.advice, advice);
    EXPECT_EQ(decision.logProbability, 0.0);
  }
}

} // namespace
} // namespace mlgo::policies
