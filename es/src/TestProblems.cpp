#include "mlgo/es/TestProblems.h"

#include <cmath>
#include <numbers>

namespace mlgo::es {

double sphere(std::span<const double> x) {
  double sum = 0;
  for (double v : x)
    sum += v * v;
  return sum;
}

double rosenbrock(std::span<const double> x) {
  double sum = 0;
  for (size_t j = 0; j + 1 < x.size(); ++j) {
    double valley = x[j + 1] - x[j] * x[j];
    double offset = 1 - x[j];
    sum += 100 * valley * valley + offset * offset;
  }
  return sum;
}

double rastrigin(std::span<const double> x) {
  double sum = 10.0 * double(x.size());
  for (double v : x)
    sum += v * v - 10 * std::cos(2 * std::numbers::pi * v);
  return sum;
}

double ellipsoid(std::span<const double> x) {
  const size_t n = x.size();
  double sum = 0;
  for (size_t j = 0; j < n; ++j) {
    double weight = n > 1 ? std::pow(1e6, double(j) / double(n - 1)) : 1.0;
    sum += weight * x[j] * x[j];
  }
  return sum;
}

} // namespace mlgo::es
