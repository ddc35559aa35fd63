// The policy files --mlgo-best-of-set compiles with: one per alternative of
// a pipeline policy's choice, each forcing that alternative. The
// mlgo-alternatives program writes them, not the launcher: making them
// parses the policy with LLVM's JSON reader, and a launcher that loads
// libLLVM pays ~45 ms on every compile (tests: deploy.launcher-no-libllvm).
#pragma once

#include "mlgo/support/Expected.h"

#include <cstddef>
#include <filesystem>
#include <string>

namespace mlgo::deploy {

// The most alternatives --mlgo-best-of-set compiles for one object.
inline constexpr size_t kMaxAlternatives = 16;

// The file of alternative `index` in a directory of forced files, and the
// file holding their number (written last: its presence means whole).
// (Inline: the launcher uses them, and this header's .cpp loads libLLVM.)
inline std::filesystem::path forcedAlternativeFile(const std::filesystem::path& directory,
                                                   size_t index) {
  return directory / (std::to_string(index) + ".json");
}
inline std::filesystem::path forcedAlternativeCount(const std::filesystem::path& directory) {
  return directory / "count";
}

// Writes the forced files of the pipeline policy `policyFile` into
// `directory` (created), each file atomically and the count last. Errors
// name the file: not a pipeline policy with a choice, or more than
// kMaxAlternatives alternatives.
Status writeForcedAlternatives(const std::string& policyFile,
                               const std::filesystem::path& directory);

} // namespace mlgo::deploy
