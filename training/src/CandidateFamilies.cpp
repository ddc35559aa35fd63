#include "mlgo/training/CandidateFamilies.h"

#include "mlgo/policies/PolicyFile.h"

#include <cstring>

namespace mlgo::training {

namespace {

// The description's layout: u64 seed, i64 step, u8 sampling, u64 directions,
// u8 with-centre, u64 dimension, centre and scale (dimension doubles each,
// native order: every rank runs the same build), then the policy file
// (its structure; parameters zero).
template <class T> void put(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

class Cursor {
public:
  explicit Cursor(std::string_view in) : in_(in) {}
  template <class T> bool get(T& value) {
    if (in_.size() < sizeof value)
      return false;
    std::memcpy(&value, in_.data(), sizeof value);
    in_.remove_prefix(sizeof value);
    return true;
  }
  bool vector(Eigen::VectorXd& out, uint64_t n) {
    if (in_.size() / sizeof(double) < n)
      return false;
    out.resize(static_cast<Eigen::Index>(n));
    std::memcpy(out.data(), in_.data(), n * sizeof(double));
    in_.remove_prefix(n * sizeof(double));
    return true;
  }
  std::string_view rest() const { return in_; }

private:
  std::string_view in_;
};

class PopulationFamily final : public evaluators::DecodedFamily {
public:
  PopulationFamily(es::Population population, policies::MlpPolicy policy)
      : population_(std::move(population)), policy_(std::move(policy)) {}
  size_t size() const override { return population_.size(); }
  std::unique_ptr<policies::Policy> candidate(size_t index) const override {
    Eigen::VectorXd weights = population_.candidate(index);
    return std::make_unique<policies::MlpPolicy>(
        policy_.withParameters({weights.data(), static_cast<size_t>(weights.size())}));
  }

private:
  es::Population population_;
  policies::MlpPolicy policy_;
};

Expected<std::unique_ptr<evaluators::DecodedFamily>> decodePopulation(std::string_view text) {
  Cursor in(text);
  uint64_t seed = 0, directions = 0, dimension = 0;
  int64_t step = 0;
  uint8_t sampling = 0, withCenter = 0;
  Eigen::VectorXd center, scale;
  if (!in.get(seed) || !in.get(step) || !in.get(sampling) || !in.get(directions) ||
      !in.get(withCenter) || !in.get(dimension) || !in.vector(center, dimension) ||
      !in.vector(scale, dimension) || sampling > 1)
    return makeError("malformed ES population description");
  Expected<std::unique_ptr<policies::Policy>> policy =
      policies::policyFromJson(in.rest(), "ES population's policy");
  if (!policy)
    return policy.error();
  auto* mlp = dynamic_cast<policies::MlpPolicy*>(policy->get());
  if (!mlp || mlp->parameterCount() != dimension)
    return makeError("the ES population's policy is not an MLP of " + std::to_string(dimension) +
                     " parameters");
  es::Population population(seed, step, static_cast<es::Sampling>(sampling), directions,
                            withCenter != 0, std::move(center), std::move(scale));
  return std::unique_ptr<evaluators::DecodedFamily>(
      std::make_unique<PopulationFamily>(std::move(population), std::move(*mlp)));
}

} // namespace

Expected<evaluators::CandidateFamily> describePopulation(const es::Population& population,
                                                         const policies::MlpPolicy& policy) {
  // The policy file carries only the structure (layers, vocabulary): its
  // parameters are the centre's, sent as raw doubles, so zeros print short.
  const std::vector<double> zeros(policy.parameterCount(), 0.0);
  Expected<std::string> json = policies::policyToJson(policy.withParameters(zeros));
  if (!json)
    return json.error();
  std::string out;
  put(out, population.noise().seed());
  put(out, population.step());
  put(out, static_cast<uint8_t>(population.sampling()));
  put(out, static_cast<uint64_t>(population.directions()));
  put(out, static_cast<uint8_t>(population.hasCenter()));
  put(out, static_cast<uint64_t>(population.dimension()));
  out.append(reinterpret_cast<const char*>(population.center().data()),
             population.dimension() * sizeof(double));
  out.append(reinterpret_cast<const char*>(population.scale().data()),
             population.dimension() * sizeof(double));
  out += *json;
  return evaluators::CandidateFamily{std::string(kEsPopulationFamily), std::move(out)};
}

evaluators::FamilyDecoders candidateFamilyDecoders() {
  evaluators::FamilyDecoders decoders;
  decoders.emplace(std::string(kEsPopulationFamily), decodePopulation);
  return decoders;
}

} // namespace mlgo::training
