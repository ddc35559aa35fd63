#include "mlgo/policies/Ensemble.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace mlgo::policies {

namespace {

// The part in which `other` differs from `first` ("inputs", "vocabulary",
// "architecture"), or "".
std::string differenceFromFirst(const MlpStructure& first, const MlpStructure& other) {
  if (other.inputs() != first.inputs())
    return "inputs";
  if (other.vocabulary() != first.vocabulary())
    return "vocabulary";
  if (!(other.options() == first.options()))
    return "architecture";
  return "";
}

// The members side by side in one network: their first layers stacked on
// the shared inputs, their hidden layers block-diagonal; `unanimous` keeps
// each member's outputs apart (K·actions of them), otherwise the outputs are
// the mean of the members'.
Expected<MlpPolicy> stackMembers(std::span<const MlpPolicy* const> members, bool unanimous) {
  if (members.empty())
    return makeError("an ensemble needs at least one policy");
  const MlpStructure& first = *members.front()->structure();
  for (size_t m = 1; m < members.size(); ++m)
    if (std::string part = differenceFromFirst(first, *members[m]->structure()); !part.empty())
      return makeError("policy " + std::to_string(m + 1) + " differs from policy 1 in its " + part);
  if (first.members() > 1)
    return makeError("policy 1 is already a unanimous ensemble; combine its members instead");
  const size_t count = members.size();
  MlpOptions options = first.options();
  for (int& width : options.hiddenLayers)
    width *= static_cast<int>(count);
  if (unanimous) {
    if (count < 2)
      return makeError("a unanimous ensemble needs at least two policies");
    if (!first.residualFeatureOffset())
      return makeError("policy 1 is not residual (it does not read the compiler's own "
                       "decision), so there is no decision for its members to agree to flip");
    options.unanimousMembers = static_cast<int>(count);
  }
  Expected<std::shared_ptr<const MlpStructure>> structure =
      MlpStructure::create(first.inputs(), first.vocabulary(), options);
  if (!structure)
    return structure.error();
  const std::vector<MlpStructure::Layer>& layers = first.layers();
  const std::vector<MlpStructure::Layer>& wide = (*structure)->layers();
  Eigen::VectorXd parameters =
      Eigen::VectorXd::Zero(static_cast<Eigen::Index>((*structure)->parameterCount()));
  // Weights are column-major (outputs × inputs): (o, i) at offset + i·outputs + o.
  for (size_t l = 0; l < layers.size(); ++l) {
    const MlpStructure::Layer &member = layers[l], &combined = wide[l];
    const bool firstLayer = l == 0, lastLayer = l + 1 == layers.size();
    for (size_t k = 0; k < count; ++k) {
      std::span<const double> p = members[k]->parameters();
      // Member k's block: its own rows (but for a mean the last layer's are
      // shared: summed, scaled to their mean) and its own columns (but the
      // first layer's inputs are shared).
      const bool shared = lastLayer && !unanimous;
      const size_t row0 = shared ? 0 : k * member.outputs;
      const size_t column0 = firstLayer ? 0 : k * member.inputs;
      const double weightScale = shared ? 1.0 / static_cast<double>(count) : 1.0;
      for (size_t i = 0; i < member.inputs; ++i)
        for (size_t o = 0; o < member.outputs; ++o)
          parameters[static_cast<Eigen::Index>(combined.weightOffset +
                                               (column0 + i) * combined.outputs + row0 + o)] +=
              weightScale * p[member.weightOffset + i * member.outputs + o];
      for (size_t o = 0; o < member.outputs; ++o)
        parameters[static_cast<Eigen::Index>(combined.biasOffset + row0 + o)] +=
            weightScale * p[member.biasOffset + o];
    }
  }
  return MlpPolicy(structure.take(), std::move(parameters));
}

} // namespace

Expected<MlpPolicy> meanLogitEnsemble(std::span<const MlpPolicy* const> members) {
  return stackMembers(members, /*unanimous=*/false);
}

Expected<MlpPolicy> unanimousEnsemble(std::span<const MlpPolicy* const> members) {
  return stackMembers(members, /*unanimous=*/true);
}

Expected<MlpPolicy> withResidualMargin(const MlpPolicy& policy, double margin,
                                       std::optional<std::vector<int>> kept) {
  const MlpStructure& structure = *policy.structure();
  if (!structure.residualFeatureOffset())
    return makeError("the policy is not residual (it does not read the compiler's own decision), "
                     "so it has no margin to change");
  if (!(margin > 0)) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", margin);
    return makeError(std::string("margin ") + text + ": must be > 0");
  }
  MlpOptions options = structure.options();
  options.residualMargin = margin;
  if (kept) {
    std::sort(kept->begin(), kept->end());
    options.residualKept = std::move(*kept);
  }
  Expected<std::shared_ptr<const MlpStructure>> changed =
      MlpStructure::create(structure.inputs(), structure.vocabulary(), options);
  if (!changed)
    return changed.error();
  return MlpPolicy(changed.take(), Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(
                                       policy.parameters().data(),
                                       static_cast<Eigen::Index>(policy.parameterCount()))));
}

} // namespace mlgo::policies
