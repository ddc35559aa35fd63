#include "mlgo/evaluators/BaselineCache.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/SHA256.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace mlgo::evaluators {

BaselineCache::BaselineCache(fs::path directory) : directory_(std::move(directory)) {}

std::string BaselineCache::key(std::string_view bitcode, const std::vector<std::string>& command,
                               std::string_view compilerIdentity) {
  llvm::SHA256 hash;
  auto add = [&](std::string_view bytes) {
    uint64_t size = bytes.size();
    hash.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(&size), sizeof size));
    hash.update(llvm::StringRef(bytes.data(), bytes.size()));
  };
  add("mlgo-es baseline v1");
  add(compilerIdentity);
  add(bitcode);
  for (const std::string& argument : command)
    add(argument);
  std::array<uint8_t, 32> digest = hash.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

std::optional<uint64_t> BaselineCache::lookup(const std::string& key) const {
  std::ifstream in(directory_ / (key + ".size"));
  uint64_t size = 0;
  if (in >> size)
    return size;
  return std::nullopt;
}

void BaselineCache::store(const std::string& key, uint64_t sizeBytes) const {
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec)
    return;
  fs::path target = directory_ / (key + ".size");
  static std::atomic<uint64_t> counter{0};
  fs::path temporary = directory_ / (key + ".size." + std::to_string(getpid()) + "." +
                                     std::to_string(counter++) + ".tmp");
  {
    std::ofstream out(temporary);
    out << sizeBytes << "\n";
    if (!out)
      return;
  }
  fs::rename(temporary, target, ec);
  if (ec)
    fs::remove(temporary, ec);
}

fs::path defaultBaselineCacheDirectory() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fs::path(xdg) / "mlgo-es" / "baselines";
  if (const char* home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".cache" / "mlgo-es" / "baselines";
  return fs::temp_directory_path() / "mlgo-es-baselines";
}

} // namespace mlgo::evaluators
