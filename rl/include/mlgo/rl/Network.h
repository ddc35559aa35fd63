// The policy network both trainers default to.
#pragma once

#include "mlgo/policies/Mlp.h"

namespace mlgo::rl {

// ml-compiler-opt's ppo_nn_agent.gin network: ActorDistributionNetwork with
// fc_layer_params (40, 40, 20), ReLU, quantile-normalised features as x and
// x² (with_sqrt = False), inlining_default excluded.
policies::MlpOptions ppoNetworkDefaults();

} // namespace mlgo::rl
