#include "mlgo/es/Perturbations.h"

#include <Random123/philox.h>

#include <cassert>
#include <cmath>
#include <numbers>

namespace mlgo::es {

namespace {

// Second Philox key word: separates this noise from any other use of Philox
// with the same seed ("mlgo-es!").
constexpr uint64_t kNoiseDomain = 0x6d6c676f2d657321ULL;

// Two standard normals from two 64-bit words (Box–Muller).
inline void boxMuller(uint64_t a, uint64_t b, double& z0, double& z1) {
  double u1 = static_cast<double>((a >> 11) + 1) * 0x1.0p-53; // (0, 1]: log is finite
  double u2 = static_cast<double>(b >> 11) * 0x1.0p-53;       // [0, 1)
  double radius = std::sqrt(-2.0 * std::log(u1));
  double angle = 2.0 * std::numbers::pi * u2;
  z0 = radius * std::cos(angle);
  z1 = radius * std::sin(angle);
}

} // namespace

void GaussianNoise::fill(int64_t step, int64_t direction, size_t first,
                         std::span<double> out) const {
  assert(step >= 0 && direction >= 0);
  r123::Philox4x64 philox;
  r123::Philox4x64::key_type key = {{seed_, kNoiseDomain}};
  r123::Philox4x64::ctr_type counter = {
      {static_cast<uint64_t>(step), static_cast<uint64_t>(direction), 0, 0}};
  const size_t end = first + out.size();
  size_t j = first;
  double* dst = out.data();
  while (j < end) {
    size_t block = j / 4;
    counter.v[2] = block;
    r123::Philox4x64::ctr_type bits = philox(counter, key);
    double z[4];
    boxMuller(bits.v[0], bits.v[1], z[0], z[1]);
    boxMuller(bits.v[2], bits.v[3], z[2], z[3]);
    for (size_t k = j - 4 * block; k < 4 && j < end; ++k, ++j)
      *dst++ = z[k];
  }
}

Eigen::VectorXd GaussianNoise::direction(int64_t step, int64_t direction, size_t dimension) const {
  Eigen::VectorXd values(static_cast<Eigen::Index>(dimension));
  fill(step, direction, 0, {values.data(), dimension});
  return values;
}

std::string_view samplingName(Sampling sampling) {
  switch (sampling) {
  case Sampling::Antithetic:
    return "antithetic";
  case Sampling::ForwardDifference:
    return "forward-difference";
  }
  return "unknown";
}

Population::Population(uint64_t seed, int64_t step, Sampling sampling, size_t directions,
                       bool withCenter, Eigen::VectorXd center, Eigen::VectorXd scale)
    : noise_(seed), step_(step), sampling_(sampling), directions_(directions),
      withCenter_(withCenter), center_(std::move(center)), scale_(std::move(scale)) {
  assert(center_.size() == scale_.size());
}

size_t Population::perturbedSize() const {
  return sampling_ == Sampling::Antithetic ? 2 * directions_ : directions_;
}

size_t Population::size() const {
  return perturbedSize() + (withCenter_ ? 1 : 0);
}

Population::Member Population::member(size_t candidate) const {
  assert(candidate < size());
  if (candidate >= perturbedSize())
    return {0, 0};
  if (sampling_ == Sampling::Antithetic)
    return {static_cast<int64_t>(candidate / 2), candidate % 2 == 0 ? 1 : -1};
  return {static_cast<int64_t>(candidate), 1};
}

void Population::candidate(size_t candidate, std::span<double> out) const {
  assert(out.size() == dimension());
  Member m = member(candidate);
  Eigen::Map<Eigen::VectorXd> x(out.data(), static_cast<Eigen::Index>(out.size()));
  if (m.sign == 0) {
    x = center_;
    return;
  }
  noise_.fill(step_, m.direction, 0, out);
  if (m.sign > 0)
    x = center_ + scale_.cwiseProduct(x);
  else
    x = center_ - scale_.cwiseProduct(x);
}

Eigen::VectorXd Population::candidate(size_t index) const {
  Eigen::VectorXd x(center_.size());
  candidate(index, {x.data(), dimension()});
  return x;
}

void Population::displacement(size_t direction, std::span<double> out) const {
  assert(out.size() == dimension() && direction < directions_);
  noise_.fill(step_, static_cast<int64_t>(direction), 0, out);
  Eigen::Map<Eigen::VectorXd> p(out.data(), static_cast<Eigen::Index>(out.size()));
  p = p.cwiseProduct(scale_);
}

Eigen::VectorXd pretrainedScale(const Eigen::VectorXd& weights, double floor) {
  return weights.cwiseAbs().array() + floor;
}

} // namespace mlgo::es
