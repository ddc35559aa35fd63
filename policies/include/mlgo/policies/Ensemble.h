// The mean-logit ensemble of MLP policies as one MLP policy: the members'
// first layers stacked, their hidden layers block-diagonal (each member's
// units see only its own), their output layers side by side divided by their
// number, the output biases averaged. Its logits are exactly the mean of the
// members' (a candidate-scoring network's scores alike), a residual margin is
// added once as in each member, so every tool runs it as it runs any MLP.
// It measures how much of a policy's result is its seed (BC runs on one
// trace that differ only in --seed): docs/inlining-results.md.
#pragma once

#include "mlgo/policies/Mlp.h"
#include "mlgo/support/Expected.h"

#include <optional>
#include <span>
#include <vector>

namespace mlgo::policies {

// The members must share their inputs, vocabulary and architecture; the
// error names the first member (1-based) that differs, and in what.
Expected<MlpPolicy> meanLogitEnsemble(std::span<const MlpPolicy* const> members);

// The unanimous ensemble (MlpOptions::unanimousMembers): the same stacked
// network, but every member keeps its own outputs, and the policy flips the
// compiler's decision only where every member does. A rule for using a
// policy alone: a flip that only some seeds make is a flip the data does not
// settle. The members must be residual policies of one architecture.
Expected<MlpPolicy> unanimousEnsemble(std::span<const MlpPolicy* const> members);

// The same residual policy with another margin: it keeps the compiler's own
// decision unless the network's logit difference exceeds `margin`, so a
// larger margin flips only where the policy is more confident (the rule that
// makes a policy safe to use alone, chosen on validation code). The weights
// are unchanged. Refused for a policy that is not residual or a margin <= 0.
// With `kept`, the compiler's decisions it names are never overruled
// (MlpOptions::residualKept: a policy that flips one way only); nullopt
// leaves the policy's own.
Expected<MlpPolicy> withResidualMargin(const MlpPolicy& policy, double margin,
                                       std::optional<std::vector<int>> kept = std::nullopt);

} // namespace mlgo::policies
