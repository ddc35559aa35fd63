// Only mlgo-alternatives links this file: the launcher reads the files it
// writes (Run.cpp) and must stay free of libLLVM.
#include "mlgo/deploy/ForcedAlternatives.h"

#include "mlgo/policies/PassPipeline.h"
#include "mlgo/policies/PolicyFile.h"
#include "mlgo/support/Files.h"

namespace mlgo::deploy {

Status writeForcedAlternatives(const std::string& policyFile,
                               const std::filesystem::path& directory) {
  Expected<std::string> bytes = readFileBytes(policyFile);
  if (!bytes)
    return makeError(policyFile + ": " + bytes.error().message);
  Expected<std::unique_ptr<policies::Policy>> loaded = policies::policyFromJson(*bytes, policyFile);
  if (!loaded)
    return makeError(policyFile + ": " + loaded.error().message);
  const auto* pipeline = dynamic_cast<const policies::PipelinePolicy*>(loaded->get());
  if (!pipeline || !pipeline->choice())
    return makeError(policyFile + " is not a pipeline policy with a choice among pipelines");
  std::vector<std::shared_ptr<const policies::PipelinePolicy>> alternatives =
      policies::forcedAlternatives(*pipeline);
  if (alternatives.size() > kMaxAlternatives)
    return makeError(policyFile + " chooses among " + std::to_string(alternatives.size()) +
                     " pipelines, more than " + std::to_string(kMaxAlternatives));
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error)
    return makeError(directory.string() + ": cannot create: " + error.message());
  // In the policy's own form: a choice in the blob form has many examples,
  // which every compile of the set reads again.
  const policies::PolicyEncoding encoding = policies::hasBlobArea(*bytes)
                                                ? policies::PolicyEncoding::Blobs
                                                : policies::PolicyEncoding::Text;
  for (size_t a = 0; a < alternatives.size(); ++a)
    MLGO_TRY(policies::savePolicy(*alternatives[a], forcedAlternativeFile(directory, a), encoding));
  return writeFileAtomically(forcedAlternativeCount(directory),
                             std::to_string(alternatives.size()));
}

} // namespace mlgo::deploy
