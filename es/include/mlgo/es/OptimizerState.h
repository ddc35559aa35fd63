// ES optimisers save their state into the project's one state container
// (mlgo::StateArchive). Every archive an optimiser writes holds two integers
// besides its own fields: "optimizer" (an OptimizerKind code, so that one
// optimiser's state is never restored into another) and "dimension" (the
// number of parameters).
#pragma once

#include "mlgo/support/Expected.h"
#include "mlgo/support/StateArchive.h"

#include <Eigen/Core>

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <utility>

namespace mlgo::es {

// Stable codes: they are written into checkpoints.
enum class OptimizerKind : int64_t { GradientEs = 1, TrustRegionEs = 2, SepCmaEs = 3 };

std::string_view optimizerKindName(OptimizerKind kind); // "gradient-es", …

// Writes "optimizer" and "dimension".
void setOptimizerHeader(StateArchive& archive, OptimizerKind kind, size_t dimension);
// Checks "optimizer" against `kind` and "dimension" against `dimension`.
Status checkOptimizerHeader(const StateArchive& archive, OptimizerKind kind, size_t dimension);

// What every optimizer state starts with, read back for a state being
// restored: "dimension" (at least 1), "optimizer" (must be `kind`), "step".
struct OptimizerHeader {
  size_t dimension = 0;
  int64_t step = 0;
};
Expected<OptimizerHeader> readOptimizerHeader(const StateArchive& archive, OptimizerKind kind);

// A vector field of exactly `size` values, as Eigen.
Expected<Eigen::VectorXd> eigenVector(const StateArchive& archive, std::string_view name,
                                      size_t size);
// Several such fields, each into its target; the first missing or
// mis-sized one is the error.
Status
readEigenVectors(const StateArchive& archive, size_t size,
                 std::initializer_list<std::pair<std::string_view, Eigen::VectorXd*>> fields);

// An optimizer's restoreState through its State::fromArchive and setState:
// the header must match the optimizer's own kind and dimension.
template <class Optimizer>
Status restoreOptimizerState(Optimizer& optimizer, const StateArchive& archive) {
  if (Status header = checkOptimizerHeader(archive, optimizer.kind(), optimizer.dimension());
      !header)
    return header;
  Expected<typename Optimizer::State> state = Optimizer::State::fromArchive(archive);
  if (!state)
    return state.error();
  return optimizer.setState(state.take());
}

} // namespace mlgo::es
