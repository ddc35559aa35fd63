#include "mlgo/rl/Network.h"

namespace mlgo::rl {

policies::MlpOptions ppoNetworkDefaults() {
  policies::MlpOptions options;
  options.hiddenLayers = {40, 40, 20};
  options.activation = policies::Activation::Relu;
  options.withSqrt = false;
  return options;
}

} // namespace mlgo::rl
