#include "mlgo/support/StateArchive.h"

namespace mlgo {

Error stateFieldError(std::string_view name, const std::string& what) {
  return makeError("state field \"" + std::string(name) + "\": " + what);
}

Expected<int64_t> StateArchive::integer(std::string_view name) const {
  auto it = integers_.find(name);
  if (it == integers_.end())
    return stateFieldError(name, "missing integer");
  return it->second;
}

Expected<std::vector<double>> StateArchive::vector(std::string_view name) const {
  auto it = vectors_.find(name);
  if (it == vectors_.end())
    return stateFieldError(name, "missing vector");
  return it->second;
}

Expected<std::vector<double>> StateArchive::vector(std::string_view name,
                                                   size_t expectedSize) const {
  Expected<std::vector<double>> values = vector(name);
  if (values && values->size() != expectedSize)
    return stateFieldError(name, "expected " + std::to_string(expectedSize) + " values, got " +
                                     std::to_string(values->size()));
  return values;
}

Expected<double> StateArchive::real(std::string_view name) const {
  Expected<std::vector<double>> values = vector(name, 1);
  if (!values)
    return values.error();
  return (*values)[0];
}

Expected<bool> StateArchive::flag(std::string_view name) const {
  Expected<int64_t> value = integer(name);
  if (!value)
    return value.error();
  if (*value != 0 && *value != 1)
    return stateFieldError(name, "expected 0 or 1, got " + std::to_string(*value));
  return *value == 1;
}

double StateArchive::realOr(std::string_view name, double fallback) const {
  auto it = vectors_.find(name);
  return it != vectors_.end() && it->second.size() == 1 ? it->second[0] : fallback;
}

} // namespace mlgo
