// ES engine benchmark: prints figures, asserts nothing.
// The time of one tell (regenerate the kept perturbations, shape, estimate,
// step) for 10,000 parameters and 200 candidates, per estimator; plus ask()
// and materialising every candidate, which an evaluator does once per step.
// Rewards are −sphere(candidate), computed outside the timed region.
//
// Usage: mlgo_bench_es_tell [--parameters N] [--candidates K] [--repeat R]
#include "mlgo/es/GradientEs.h"
#include "mlgo/es/SepCmaEs.h"
#include "mlgo/es/TestProblems.h"
#include "mlgo/es/TrustRegion.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace mlgo;
using namespace mlgo::es;
using Clock = std::chrono::steady_clock;

namespace {

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Timing {
  double askMs = 0;         // ask(): describe the population
  double materialiseMs = 0; // every candidate's parameters
  double tellMs = 0;        // tell(): the update
};

// Times `repeat` steps of a freshly created optimiser; reports the minimum of
// each phase (the least disturbed run).
template <class Make> Timing timeSteps(Make make, int repeat) {
  Timing best{1e300, 1e300, 1e300};
  for (int r = 0; r < repeat; ++r) {
    auto optimizer = make();
    auto start = Clock::now();
    Population population = optimizer.ask();
    best.askMs = std::min(best.askMs, millisecondsSince(start));

    std::vector<std::optional<double>> rewards(population.size());
    std::vector<double> x(population.dimension());
    start = Clock::now();
    for (size_t i = 0; i < population.size(); ++i) {
      population.candidate(i, x);
      rewards[i] = -sphere(x); // cheap; the candidate generation dominates
    }
    best.materialiseMs = std::min(best.materialiseMs, millisecondsSince(start));

    start = Clock::now();
    Expected<StepRecord> record = optimizer.tell(rewards);
    best.tellMs = std::min(best.tellMs, millisecondsSince(start));
    if (!record || record->skipped) {
      std::fprintf(stderr, "tell failed\n");
      std::exit(1);
    }
  }
  return best;
}

void print(const char* name, const Timing& t) {
  std::printf("%-34s ask %8.3f ms   materialise all %8.1f ms   tell %9.1f ms\n", name, t.askMs,
              t.materialiseMs, t.tellMs);
}

} // namespace

int main(int argc, char** argv) {
  int parameters = 10000, candidates = 200, repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--parameters"))
      parameters = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--candidates"))
      candidates = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--repeat"))
      repeat = std::atoi(argv[i + 1]);
  }
  if (parameters < 1 || candidates < 2 || repeat < 1) {
    std::fprintf(stderr,
                 "usage: mlgo_bench_es_tell [--parameters N] [--candidates K] [--repeat R]\n");
    return 2;
  }
  std::printf("one ES step: %d parameters, %d candidates (antithetic: %d pairs), best of %d\n",
              parameters, candidates, candidates / 2, repeat);
  const Eigen::VectorXd x0 = Eigen::VectorXd::Constant(parameters, 0.5);

  auto gradientEs = [&](Sampling sampling, GradientEstimator estimator) {
    GradientEs::Options options;
    options.sampling.seed = 1;
    options.sampling.sampling = sampling;
    options.sampling.directions = sampling == Sampling::Antithetic ? candidates / 2 : candidates;
    options.estimator.method = estimator;
    options.estimator.regularization = 1e-4;
    return [options, &x0] { return GradientEs::create(options, x0).take(); };
  };
  print("monte-carlo antithetic, adam",
        timeSteps(gradientEs(Sampling::Antithetic, GradientEstimator::MonteCarlo), repeat));
  print("monte-carlo forward, adam",
        timeSteps(gradientEs(Sampling::ForwardDifference, GradientEstimator::MonteCarlo), repeat));
  for (GradientEstimator estimator :
       {GradientEstimator::LeastSquares, GradientEstimator::Ridge, GradientEstimator::Lasso}) {
    std::string name = std::string(gradientEstimatorName(estimator)) + " forward, adam";
    print(name.c_str(), timeSteps(gradientEs(Sampling::ForwardDifference, estimator), repeat));
    name = std::string(gradientEstimatorName(estimator)) + " antithetic, adam";
    print(name.c_str(), timeSteps(gradientEs(Sampling::Antithetic, estimator), repeat));
  }

  TrustRegionEs::Options trust;
  trust.sampling.seed = 1;
  trust.sampling.directions = candidates / 2;
  print("trust region (monte-carlo antithetic)",
        timeSteps([&] { return TrustRegionEs::create(trust, x0).take(); }, repeat));

  SepCmaEs::Options cma;
  cma.seed = 1;
  cma.populationSize = candidates;
  print("sep-CMA-ES", timeSteps([&] { return SepCmaEs::create(cma, x0).take(); }, repeat));
  return 0;
}
