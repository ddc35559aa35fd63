// Gaussian perturbations that any process regenerates from integers alone.
//
// ε(seed, step, direction) is a standard normal vector whose coordinate j is a
// pure function of (seed, step, direction, j): coordinates 4b … 4b+3 come
// from one Philox4x64-10 block (Random123) with key (seed, a fixed domain
// tag) and counter (step, direction, b, 0); each pair of 64-bit outputs gives
// two normals by Box–Muller (u1 ∈ (0, 1] from the top 53 bits of the first
// word, u2 ∈ [0, 1) from the second; z = √(−2 ln u1)·(cos 2πu2, sin 2πu2)).
// So an MPI rank or a resumed run regenerates any candidate's noise, or any
// slice of its coordinates, without storing it. The values depend on the C
// library's log/cos/sin, identical on every machine with the same libm.
//
// A Population is one step's candidates described, not stored: a centre, a
// per-coordinate scale and the noise key. Candidate i is
//   centre + sign_i · scale ⊙ ε(seed, step, direction_i)
// or the centre itself, and is materialised on demand by whoever evaluates it.
#pragma once

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace mlgo::es {

class GaussianNoise {
public:
  explicit GaussianNoise(uint64_t seed) : seed_(seed) {}
  uint64_t seed() const { return seed_; }

  // Writes coordinates [first, first + out.size()) of ε(seed, step, direction).
  // step and direction must be non-negative.
  void fill(int64_t step, int64_t direction, size_t first, std::span<double> out) const;
  Eigen::VectorXd direction(int64_t step, int64_t direction, size_t dimension) const;

private:
  uint64_t seed_;
};

// How candidates are formed from directions.
enum class Sampling {
  // Mirrored pairs: candidates 2d and 2d+1 are centre ± scale ⊙ ε_d.
  Antithetic,
  // One candidate per direction, centre + scale ⊙ ε_d, compared with a
  // baseline value of the centre (forward finite differences).
  ForwardDifference,
};

std::string_view samplingName(Sampling sampling); // "antithetic", "forward-difference"

class Population {
public:
  // Which direction and sign a candidate uses; sign 0 marks the centre.
  struct Member {
    int64_t direction = 0;
    int sign = 1;
  };

  // `scale` has the centre's size and includes any global σ. With
  // `withCenter`, the unperturbed centre is the last candidate.
  Population(uint64_t seed, int64_t step, Sampling sampling, size_t directions, bool withCenter,
             Eigen::VectorXd center, Eigen::VectorXd scale);

  int64_t step() const { return step_; }
  Sampling sampling() const { return sampling_; }
  size_t directions() const { return directions_; }
  bool hasCenter() const { return withCenter_; }
  // Number of candidates: directions (×2 when antithetic), +1 with the centre.
  size_t size() const;
  // Candidates that carry a perturbation (size() without the centre).
  size_t perturbedSize() const;
  size_t dimension() const { return static_cast<size_t>(center_.size()); }
  const Eigen::VectorXd& center() const { return center_; }
  const Eigen::VectorXd& scale() const { return scale_; }
  const GaussianNoise& noise() const { return noise_; }

  Member member(size_t candidate) const;
  bool isCenter(size_t candidate) const { return member(candidate).sign == 0; }

  // Writes candidate `candidate`'s parameters (dimension() values). Const and
  // allocation-free: safe to call from many threads at once.
  void candidate(size_t candidate, std::span<double> out) const;
  Eigen::VectorXd candidate(size_t candidate) const;
  // Writes scale ⊙ ε_direction: the displacement of the direction's + member.
  void displacement(size_t direction, std::span<double> out) const;

private:
  GaussianNoise noise_;
  int64_t step_;
  Sampling sampling_;
  size_t directions_;
  bool withCenter_;
  Eigen::VectorXd center_;
  Eigen::VectorXd scale_;
};

// The per-parameter scale for a pretrained start: |w| + floor, so that large
// weights move proportionally and zero weights still move.
Eigen::VectorXd pretrainedScale(const Eigen::VectorXd& weights, double floor = 0.01);

} // namespace mlgo::es
