// The optimiser factory: one variant of the optimisers' Options gives every
// kind, its defaults, validation, the optimiser itself (seeded as asked) and
// the run file's step columns.
#include "mlgo/es/Optimizers.h"

#include <gtest/gtest.h>

#include <set>

namespace mlgo::es {
namespace {

TEST(Optimizers, EveryKindIsMadeFromItsOptions) {
  const std::vector<OptimizerKind> kinds = optimizerKinds();
  ASSERT_EQ(kinds.size(), std::variant_size_v<OptimizerOptions>);
  std::set<std::string_view> names;
  const Eigen::VectorXd start = Eigen::VectorXd::Constant(5, 0.25);
  for (OptimizerKind kind : kinds) {
    SCOPED_TRACE(std::string(optimizerKindName(kind)));
    names.insert(optimizerKindName(kind));
    const OptimizerOptions options = defaultOptimizerOptions(kind);
    EXPECT_EQ(kindOf(options), kind);
    EXPECT_TRUE(validateOptimizer(options));
    Expected<std::unique_ptr<BlackboxOptimizer>> made =
        createOptimizer(options, start, std::nullopt, 7);
    ASSERT_TRUE(made) << made.error().message;
    EXPECT_EQ((*made)->kind(), kind);
    EXPECT_EQ((*made)->dimension(), 5u);
    EXPECT_EQ((*made)->point(), start);
    // The seed given is the one used: another seed asks other candidates.
    Expected<std::unique_ptr<BlackboxOptimizer>> reseeded =
        createOptimizer(options, start, std::nullopt, 8);
    ASSERT_TRUE(reseeded);
    EXPECT_NE((*made)->ask().candidate(0), (*reseeded)->ask().candidate(0));
    Expected<std::unique_ptr<BlackboxOptimizer>> again =
        createOptimizer(options, start, std::nullopt, 7);
    EXPECT_EQ((*made)->ask().candidate(0), (*again)->ask().candidate(0));
  }
  EXPECT_EQ(names.size(), kinds.size());
}

TEST(Optimizers, InvalidOptionsAreRefusedByField) {
  GradientEs::Options gradient;
  gradient.sampling.sigma = -1;
  Status refused = validateOptimizer(gradient);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("sampling.sigma"), std::string::npos);
  EXPECT_FALSE(createOptimizer(gradient, Eigen::VectorXd::Zero(3), std::nullopt, 1));
  SepCmaEs::Options cma;
  cma.initialSigma = 0;
  EXPECT_FALSE(validateOptimizer(cma));
}

// Each optimiser's diagnostics that run files record, once each; a step
// reports its own (the trust region its radius, CMA-ES its σ) and no other
// optimiser's.
TEST(Optimizers, StepColumnsAreEachOptimisersOwnDiagnostics) {
  const std::vector<std::string_view>& columns = optimizerStepColumns();
  EXPECT_EQ(std::set<std::string_view>(columns.begin(), columns.end()).size(), columns.size());
  EXPECT_EQ(columns, (std::vector<std::string_view>{TrustRegionEs::kRadius, SepCmaEs::kSigma}));
  for (OptimizerKind kind : optimizerKinds()) {
    SCOPED_TRACE(std::string(optimizerKindName(kind)));
    std::unique_ptr<BlackboxOptimizer> optimizer =
        createOptimizer(defaultOptimizerOptions(kind), Eigen::VectorXd::Zero(4), std::nullopt, 3)
            .take();
    const Population population = optimizer->ask();
    std::vector<std::optional<double>> rewards(population.size());
    for (size_t i = 0; i < rewards.size(); ++i)
      rewards[i] = -population.candidate(i).squaredNorm();
    Expected<StepRecord> record = optimizer->tell(rewards);
    ASSERT_TRUE(record) << record.error().message;
    EXPECT_EQ(record->diagnostic(TrustRegionEs::kRadius).has_value(),
              kind == OptimizerKind::TrustRegionEs);
    EXPECT_EQ(record->diagnostic(SepCmaEs::kSigma).has_value(), kind == OptimizerKind::SepCmaEs);
  }
}

} // namespace
} // namespace mlgo::es
