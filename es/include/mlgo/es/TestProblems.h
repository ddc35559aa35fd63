// Classic test functions for the optimisers (to be minimised; ES maximises
// their negation). All have their global minimum 0, at 0 for sphere and
// Rastrigin and at (1, …, 1) for Rosenbrock.
#pragma once

#include <span>

namespace mlgo::es {

// Σ x_j²: smooth, isotropic; any sound optimiser must solve it.
double sphere(std::span<const double> x);
// Σ 100 (x_{j+1} − x_j²)² + (1 − x_j)²: a curved valley, ill-conditioned.
double rosenbrock(std::span<const double> x);
// 10 n + Σ x_j² − 10 cos(2π x_j): a grid of local minima over a bowl.
double rastrigin(std::span<const double> x);
// Σ 10^(6 j/(n−1)) x_j²: separable, condition number 10⁶; needs per-parameter scales.
double ellipsoid(std::span<const double> x);

} // namespace mlgo::es
