// ml-compiler-opt compatibility: GradientEs in the MlCompilerOpt convention
// reproduces MonteCarloBlackboxOptimizer (with its Adam and momentum) on the
// reference vectors in shared/reference/es-step-vectors.json, two steps per
// case with the optimiser state carried over.
#include "mlgo/es/GradientEs.h"

#include <gtest/gtest.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>

#include <string>
#include <vector>

namespace mlgo::es {
namespace {

struct ReferenceCase {
  std::string name;
  Sampling sampling = Sampling::Antithetic;
  double sigma = 0;
  bool normalize = false;
  int topK = 0;
  StepRule rule = StepRule::Adam;
  double learningRate = 0, beta1 = 0, beta2 = 0, momentum = 0, currentValue = 0;
  Eigen::VectorXd x0, after1, after2;
  std::vector<Eigen::VectorXd> perturbations;
  std::vector<double> rewards1, rewards2;
};

Eigen::VectorXd toVector(const llvm::json::Array& array) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(array.size()));
  for (size_t i = 0; i < array.size(); ++i)
    v[static_cast<Eigen::Index>(i)] = *array[i].getAsNumber();
  return v;
}

std::vector<ReferenceCase> loadCases() {
  auto buffer = llvm::MemoryBuffer::getFile(MLGO_ES_REFERENCE_VECTORS);
  if (!buffer)
    return {};
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse((*buffer)->getBuffer());
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return {};
  }
  std::vector<ReferenceCase> cases;
  for (const llvm::json::Value& value : *parsed->getAsObject()->getArray("cases")) {
    const llvm::json::Object& o = *value.getAsObject();
    ReferenceCase c;
    c.name = o.getString("name")->str();
    c.sampling = *o.getString("estimator") == "antithetic" ? Sampling::Antithetic
                                                           : Sampling::ForwardDifference;
    c.sigma = *o.getNumber("sigma");
    c.normalize = *o.getBoolean("normalize");
    c.topK = static_cast<int>(*o.getInteger("top_k"));
    c.rule = *o.getString("step_rule") == "adam" ? StepRule::Adam : StepRule::Momentum;
    c.learningRate = *o.getNumber("learning_rate");
    c.beta1 = *o.getNumber("beta1");
    c.beta2 = *o.getNumber("beta2");
    c.momentum = *o.getNumber("momentum");
    c.currentValue = *o.getNumber("current_value");
    c.x0 = toVector(*o.getArray("x0"));
    c.after1 = toVector(*o.getArray("x_after_step1"));
    c.after2 = toVector(*o.getArray("x_after_step2"));
    for (const llvm::json::Value& p : *o.getArray("perturbations"))
      c.perturbations.push_back(toVector(*p.getAsArray()));
    for (auto [key, rewards] :
         {std::pair{"rewards_step1", &c.rewards1}, std::pair{"rewards_step2", &c.rewards2}})
      for (const llvm::json::Value& r : *o.getArray(key))
        rewards->push_back(*r.getAsNumber());
    cases.push_back(std::move(c));
  }
  return cases;
}

TEST(MlCompilerOptCompatibility, ReproducesEveryReferenceCase) {
  std::vector<ReferenceCase> cases = loadCases();
  ASSERT_EQ(cases.size(), 10u) << "cannot read " << MLGO_ES_REFERENCE_VECTORS;
  for (const ReferenceCase& c : cases) {
    SCOPED_TRACE(c.name);
    const bool antithetic = c.sampling == Sampling::Antithetic;
    GradientEs::Options options =
        GradientEs::Options::mlCompilerOpt(c.sigma, c.sampling, c.learningRate,
                                           c.topK > 0 ? std::optional<int>(c.topK) : std::nullopt);
    if (!c.normalize)
      options.shaping.method = FitnessShaping::None;
    options.stepRule.rule = c.rule;
    options.stepRule.beta1 = c.beta1;
    options.stepRule.beta2 = c.beta2;
    options.stepRule.momentum = c.momentum;
    // The reference passes its own current_value: feed it as the centre's reward.
    options.sampling.evaluateCenter = true;
    const size_t directions = antithetic ? c.perturbations.size() / 2 : c.perturbations.size();
    options.sampling.directions = static_cast<int>(directions);
    Expected<GradientEs> es = GradientEs::create(options, c.x0);
    ASSERT_TRUE(es) << es.error().message;

    GradientEs::ExplicitSamples samples;
    samples.displacements.resize(c.x0.size(), static_cast<Eigen::Index>(directions));
    for (size_t d = 0; d < directions; ++d) {
      const Eigen::VectorXd& p = c.perturbations[antithetic ? 2 * d : d];
      if (antithetic) {
        ASSERT_EQ(c.perturbations[2 * d + 1], -p) << "pairs must be interleaved ±p";
      }
      samples.displacements.col(static_cast<Eigen::Index>(d)) = p;
    }
    samples.centerReward = c.currentValue;

    for (int step = 1; step <= 2; ++step) {
      const std::vector<double>& rewards = step == 1 ? c.rewards1 : c.rewards2;
      samples.rewards.assign(rewards.begin(), rewards.end());
      Expected<StepRecord> record = es->update(samples);
      ASSERT_TRUE(record) << record.error().message;
      EXPECT_FALSE(record->skipped);
      const Eigen::VectorXd& expected = step == 1 ? c.after1 : c.after2;
      for (Eigen::Index j = 0; j < expected.size(); ++j)
        EXPECT_NEAR(es->point()[j], expected[j], 1e-6) << "step " << step << ", coordinate " << j;
    }
  }
}

} // namespace
} // namespace mlgo::es
