#include "mlgo/es/StateArchive.h"

#include <string>

namespace mlgo::es {

namespace {

Error fieldError(std::string_view name, const std::string& what) {
  return makeError("state field \"" + std::string(name) + "\": " + what);
}

} // namespace

std::string_view optimizerKindName(OptimizerKind kind) {
  switch (kind) {
  case OptimizerKind::GradientEs:
    return "gradient-es";
  case OptimizerKind::TrustRegionEs:
    return "trust-region-es";
  case OptimizerKind::SepCmaEs:
    return "sep-cma-es";
  }
  return "unknown";
}

void StateArchive::setVector(const std::string& name, std::vector<double> values) {
  vectors_[name] = std::move(values);
}

void StateArchive::setVector(const std::string& name, const Eigen::VectorXd& values) {
  vectors_[name] = std::vector<double>(values.data(), values.data() + values.size());
}

Expected<int64_t> StateArchive::integer(std::string_view name) const {
  auto it = integers_.find(name);
  if (it == integers_.end())
    return fieldError(name, "missing integer");
  return it->second;
}

Expected<std::vector<double>> StateArchive::vector(std::string_view name) const {
  auto it = vectors_.find(name);
  if (it == vectors_.end())
    return fieldError(name, "missing vector");
  return it->second;
}

Expected<Eigen::VectorXd> StateArchive::vector(std::string_view name, size_t expectedSize) const {
  auto it = vectors_.find(name);
  if (it == vectors_.end())
    return fieldError(name, "missing vector");
  if (it->second.size() != expectedSize)
    return fieldError(name, "expected " + std::to_string(expectedSize) + " values, got " +
                                std::to_string(it->second.size()));
  return Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(
      it->second.data(), static_cast<Eigen::Index>(expectedSize)));
}

Expected<double> StateArchive::real(std::string_view name) const {
  Expected<Eigen::VectorXd> values = vector(name, 1);
  if (!values)
    return values.error();
  return (*values)[0];
}

Expected<bool> StateArchive::flag(std::string_view name) const {
  Expected<int64_t> value = integer(name);
  if (!value)
    return value.error();
  if (*value != 0 && *value != 1)
    return fieldError(name, "expected 0 or 1, got " + std::to_string(*value));
  return *value == 1;
}

void StateArchive::setHeader(OptimizerKind kind, size_t dimension) {
  setInteger("optimizer", static_cast<int64_t>(kind));
  setInteger("dimension", static_cast<int64_t>(dimension));
}

Status StateArchive::checkHeader(OptimizerKind kind, size_t dimension) const {
  Expected<int64_t> stored = integer("optimizer");
  if (!stored)
    return stored.error();
  if (*stored != static_cast<int64_t>(kind))
    return fieldError("optimizer", "holds the state of optimizer kind " + std::to_string(*stored) +
                                       " (" +
                                       std::string(optimizerKindName(OptimizerKind(*stored))) +
                                       "), expected " + std::string(optimizerKindName(kind)));
  Expected<int64_t> storedDimension = integer("dimension");
  if (!storedDimension)
    return storedDimension.error();
  if (*storedDimension != static_cast<int64_t>(dimension))
    return fieldError("dimension", "the state has " + std::to_string(*storedDimension) +
                                       " parameters, the optimizer " + std::to_string(dimension));
  return Status::ok();
}

} // namespace mlgo::es
