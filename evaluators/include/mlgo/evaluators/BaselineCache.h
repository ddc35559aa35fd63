// The plain -Oz size of a module (and its value in the task's measure, when
// that is not the size, e.g. its RegAllocScore) does not change while the bitcode, the
// command line and the compiler stay the same: cache it on disk, keyed by a
// hash of all three, so runs and sweeps compile each baseline once.
#pragma once

#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/evaluators/ObjectCode.h"
#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::evaluators {

class BaselineCache {
public:
  explicit BaselineCache(std::filesystem::path directory);

  // Hex SHA-256 over the bitcode bytes, the command line (with the file
  // paths left out) and the compiler's identity.
  static std::string key(std::string_view bitcode, const std::vector<std::string>& command,
                         std::string_view compilerIdentity);

  // The cached size, nothing if there is no entry, or an error (naming the
  // file) for an entry that is not exactly what store() writes for this
  // key: a corrupt entry is never trusted.
  Expected<std::optional<uint64_t>> lookup(const std::string& key) const;
  // Atomic (write + rename); failures are ignored: the cache is an
  // optimisation, never a source of errors.
  void store(const std::string& key, uint64_t sizeBytes) const;
  // The baseline in a measure other than the size (one file per measure,
  // named after it), alike.
  Expected<std::optional<double>> lookupMeasure(const std::string& key, Measure measure) const;
  void storeMeasure(const std::string& key, Measure measure, double value) const;
  // The baseline object's COMDAT groups (JobResult::comdat), alike.
  Expected<std::optional<std::vector<ComdatCode>>> lookupComdat(const std::string& key) const;
  void storeComdat(const std::string& key, const std::vector<ComdatCode>& comdat) const;

  const std::filesystem::path& directory() const { return directory_; }

private:
  Expected<std::optional<std::string>> lookupText(const std::string& key,
                                                  const std::string& suffix) const;
  void storeText(const std::string& key, const std::string& suffix, const std::string& value) const;

  std::filesystem::path directory_;
};

// $XDG_CACHE_HOME/mlgo-es/baselines, or ~/.cache/mlgo-es/baselines.
std::filesystem::path defaultBaselineCacheDirectory();

} // namespace mlgo::evaluators
