#include "mlgo/policies/PolicyLocation.h"

#include "mlgo/support/Files.h"

#include <set>
#include <string>
#include <system_error>

namespace mlgo::policies {

Expected<std::filesystem::path> locatePolicyFile(const char* environmentValue,
                                                 const std::filesystem::path& workingDirectory) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (environmentValue && *environmentValue) {
    fs::path file = environmentValue;
    if (fs::is_regular_file(file, error))
      return file;
    // A shipped policy's name, as --mlgo-policy takes it (MLGO_POLICY=inlining-oz).
    if (!fs::exists(file, error) && isPolicyName(environmentValue)) {
      Expected<fs::path> shipped = shippedPolicy(environmentValue);
      if (!shipped)
        return makeError(std::string(kPolicyEnvironment) + "=" + file.string() + ": " +
                         shipped.error().message);
      return shipped;
    }
    if (!fs::exists(file, error))
      return makeError(std::string(kPolicyEnvironment) + "=" + file.string() +
                       ": no such policy file");
    return makeError(std::string(kPolicyEnvironment) + "=" + file.string() + ": " +
                     checkRegularFile(file, "policy file").error().message);
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

bool isPolicyName(std::string_view spec) {
  return !spec.empty() && spec.find('/') == std::string_view::npos && !spec.ends_with(".json") &&
         !spec.ends_with(".policy");
}

Expected<std::filesystem::path> shippedPolicy(std::string_view name) {
  namespace fs = std::filesystem;
  const fs::path directory = shippedPolicyDirectory();
  std::error_code error;
  // A shipped policy is NAME.json, or NAME.policy in the blob form
  // (PolicyFile.h), which a compile reads faster.
  for (const char* extension : {".json", ".policy"}) {
    fs::path file = directory / (std::string(name) + extension);
    if (isPolicyName(name) && fs::is_regular_file(file, error))
      return file;
  }
  std::set<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, error))
    if (entry.path().extension() == ".json" || entry.path().extension() == ".policy")
      names.insert(entry.path().stem().string());
  std::string known;
  for (const std::string& n : names)
    known += (known.empty() ? "" : ", ") + n;
  return makeError("no shipped policy \"" + std::string(name) + "\" in " + directory.string() +
                   (known.empty() ? std::string(" (none there)") : " (shipped: " + known + ")"));
}

Expected<std::filesystem::path> policyFileFor(const std::string& spec) {
  std::error_code error;
  if (std::filesystem::is_regular_file(spec, error))
    return std::filesystem::path(spec);
  if (isPolicyName(spec) && !std::filesystem::exists(spec, error))
    return shippedPolicy(spec);
  if (std::filesystem::exists(spec, error))
    return checkRegularFile(spec, "policy file").error();
  return makeError("no such policy file");
}

} // namespace mlgo::policies

namespace mlgo::policies {

Expected<bool> policyFallbackRequested(const char* environmentValue) {
  if (!environmentValue || !*environmentValue)
    return false;
  if (std::string_view(environmentValue) == "heuristic")
    return true;
  return makeError(std::string(kFallbackEnvironment) + "=" + environmentValue +
                   ": the only value is \"heuristic\" (compile with LLVM's heuristic and a "
                   "warning when the policy cannot be used); unset it to fail instead");
}

} // namespace mlgo::policies
