#include "mlgo/training/Options.h"

#include <cmath>

#include "mlgo/support/Files.h"
#include <string>

namespace mlgo::training {

Error inGroup(std::string_view group, const Error& error) {
  return makeError(std::string(group) + "." + error.message);
}

Status validateGroups(std::initializer_list<std::pair<std::string_view, Status>> groups) {
  for (const auto& [group, status] : groups)
    if (!status)
      return inGroup(group, status.error());
  return Status::ok();
}

Status CorpusOptions::validate() const {
  if (corpus.empty())
    return makeError("corpus: no training corpus given");
  if (validationInterval < 1)
    return makeError("validationInterval: must be at least 1, got " +
                     std::to_string(validationInterval));
  if (modulesPerStep < 1)
    return makeError("modulesPerStep: must be at least 1");
  return Status::ok();
}

Status PolicyStartOptions::validate() const {
  if (vocabularyQuantiles < 2)
    return makeError("vocabularyQuantiles: must be at least 2, got " +
                     std::to_string(vocabularyQuantiles));
  if (Status s = mlp.validate(); !s)
    return makeError("mlp." + s.error().message);
  return Status::ok();
}

Status RunOptions::validate(bool policyFile) const {
  if (steps < 1)
    return makeError("steps: must be at least 1, got " + std::to_string(steps));
  if (!(maxSeconds >= 0) || !std::isfinite(maxSeconds))
    return makeError("maxSeconds: must be a finite number >= 0, got " + std::to_string(maxSeconds));
  if (snapshotInterval < 1)
    return makeError("snapshotInterval: must be at least 1, got " +
                     std::to_string(snapshotInterval));
  if (output.empty())
    return makeError("output: no run file given");
  if (policyFile && !policyOutput)
    return makeError("policyOutput: no policy file given");
  if (policyOutput && policyOutput->empty())
    return makeError("policyOutput: empty path");
  if (threads < 1)
    return makeError("threads: must be at least 1");
  // Before any compilation: a device or directory here fails only at the end
  // of the first step otherwise.
  if (Status s = checkReplaceable(output); !s)
    return makeError("output: " + s.error().message);
  if (policyOutput)
    if (Status s = checkReplaceable(*policyOutput); !s)
      return makeError("policyOutput: " + s.error().message);
  return Status::ok();
}

} // namespace mlgo::training
