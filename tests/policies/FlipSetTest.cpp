// Flip-set policies: the compiler's decision except at listed states; the
// state hash ignores the default decision; the policy file round trip.
#include "mlgo/policies/FlipSet.h"
#include "mlgo/policies/PolicyFile.h"

#include "PoliciesTestSupport.h"

#include <gtest/gtest.h>

namespace mlgo::policies {
namespace {

using testing::inlinerHeader;
using testing::randomStates;
using testing::ScratchDirectory;
using testing::writeText;

TEST(FlipSetPolicy, FollowsTheDefaultButAtListedStates) {
  ChannelHeader header = inlinerHeader();
  Expected<FlipSetPolicy> policy = FlipSetPolicy::create(header.features, "inlining_default");
  ASSERT_TRUE(policy) << policy.error().message;
  const size_t at = policy->defaultFeatureIndex();
  EXPECT_EQ(header.features[at].name, "inlining_default");
  std::vector<std::vector<double>> states = randomStates(50, header.features.size(), 3);
  RandomStream rng(1);
  for (std::vector<double>& state : states) {
    state[at] = static_cast<double>(state[0] > 30 ? 1 : 0);
    EXPECT_EQ(policy->decide(state, DecisionMode::Deterministic, rng).advice, state[at]);
  }
  // The hash does not depend on the default decision, so a flip holds for
  // the state whatever the heuristic said there.
  std::vector<double> flipped = states[7];
  const uint64_t hash = policy->stateHash(flipped);
  flipped[at] = 1 - flipped[at];
  EXPECT_EQ(policy->stateHash(flipped), hash);
  EXPECT_NE(policy->stateHash(states[8]), hash);
  policy->toggle(hash);
  EXPECT_EQ(policy->describe(), "flip-set(1)");
  for (size_t s = 0; s < states.size(); ++s) {
    int64_t expected = static_cast<int64_t>(states[s][at]);
    if (s == 7)
      expected = 1 - expected;
    EXPECT_EQ(policy->decide(states[s], DecisionMode::Deterministic, rng).advice, expected) << s;
  }
  policy->toggle(hash); // back to the compiler's decision
  EXPECT_EQ(policy->decide(states[7], DecisionMode::Deterministic, rng).advice, states[7][at]);

  std::vector<TensorSpec> without(header.features.begin(), header.features.end());
  without.erase(without.begin() + static_cast<std::ptrdiff_t>(at));
  EXPECT_FALSE(FlipSetPolicy::create(without, "inlining_default"));
}

TEST(FlipSetPolicy, RoundTripsThroughAPolicyFile) {
  ChannelHeader header = inlinerHeader();
  Expected<FlipSetPolicy> policy = FlipSetPolicy::create(header.features, "inlining_default");
  ASSERT_TRUE(policy);
  for (const std::vector<double>& state : randomStates(5, header.features.size(), 9))
    policy->toggle(policy->stateHash(state));
  ScratchDirectory dir;
  ASSERT_TRUE(savePolicy(*policy, dir / "flips.json"));
  Expected<std::unique_ptr<Policy>> loaded = loadPolicy(dir / "flips.json");
  ASSERT_TRUE(loaded) << loaded.error().message;
  const auto* back = dynamic_cast<const FlipSetPolicy*>(loaded->get());
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->flipSet(), policy->flipSet());
  EXPECT_EQ(back->inputs(), policy->inputs());
  EXPECT_EQ(*policyToJson(*back), *policyToJson(*policy));

  std::string text = *policyToJson(*policy);
  size_t first = text.find("\"flips\"");
  ASSERT_NE(first, std::string::npos);
  std::string bad = text;
  bad.replace(bad.find('"', bad.find('[', first)) + 1, 3, "xyz");
  writeText(dir / "bad.json", bad);
  Expected<std::unique_ptr<Policy>> refused = loadPolicy(dir / "bad.json");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("flips[0]: must be 16 hex digits"), std::string::npos)
      << refused.error().message;
}

} // namespace
} // namespace mlgo::policies
