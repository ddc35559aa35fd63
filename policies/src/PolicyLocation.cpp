#include "mlgo/policies/PolicyLocation.h"

#include <system_error>

namespace mlgo::policies {

Expected<std::filesystem::path> locatePolicyFile(const char* environmentValue,
                                                 const std::filesystem::path& workingDirectory) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (environmentValue && *environmentValue) {
    fs::path file = environmentValue;
    if (!fs::is_regular_file(file, error))
      return makeError(std::string(kPolicyEnvironment) + "=" + file.string() +
                       ": no such policy file");
    return file;
  }
  for (fs::path directory = workingDirectory;; directory = directory.parent_path()) {
    fs::path candidate = directory / kPolicyFileName;
    if (fs::is_regular_file(candidate, error))
      return candidate;
    if (directory == directory.parent_path() || directory.empty())
      break;
  }
  return makeError("no policy: set " + std::string(kPolicyEnvironment) + "=FILE or put " +
                   std::string(kPolicyFileName) + " in " + workingDirectory.string() +
                   " or a parent directory");
}

} // namespace mlgo::policies
