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
#include <string_view>

namespace mlgo::es {

// Stable codes: they are written into checkpoints.
enum class OptimizerKind : int64_t { GradientEs = 1, TrustRegionEs = 2, SepCmaEs = 3 };

std::string_view optimizerKindName(OptimizerKind kind); // "gradient-es", …

// Writes "optimizer" and "dimension".
void setOptimizerHeader(StateArchive& archive, OptimizerKind kind, size_t dimension);
// Checks "optimizer" against `kind` and "dimension" against `dimension`.
Status checkOptimizerHeader(const StateArchive& archive, OptimizerKind kind, size_t dimension);

// A vector field of exactly `size` values, as Eigen.
Expected<Eigen::VectorXd> eigenVector(const StateArchive& archive, std::string_view name,
                                      size_t size);

} // namespace mlgo::es
