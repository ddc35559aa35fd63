// The build-time search's persistent cache (mlgo-cc --mlgo-search): what a
// translation unit's search chose, so that a rebuild of an unchanged unit
// costs one compile and an edited unit starts from its previous choice.
//
// Keys. The launcher hashes what it knows of a compile into a command key
// (the driver's arguments, working directory, compiler, plugin, policy,
// task, budget); the plugin, inside that compile, hashes the command key
// with the module's bitcode as the frontend made it into the unit key
// (searchCacheKey). Two indexes, one file per entry each:
//   entries/KK/UNITKEY     an exact answer for that command and module;
//   units/KK/COMMANDKEY    the latest answer for that command, whatever the
//                          module: the start of the next search after an edit.
//
// An entry is small text: the key it answers, the budget, the -Oz and chosen
// .text bytes, and the chosen decisions as a flip-set policy file (decision-
// state hashes, as `mlgo-eval search` writes them), sealed by a SHA-256 of
// the rest. Files are written beside their target and renamed over it, so
// concurrent builds and a killed build never leave half an entry; an entry
// that does not parse, fails its checksum or answers another key is refused
// with a warning (and searched again). The cache is trimmed to its size
// limit, least recently used entries first (a hit touches its entry). No
// LLVM here: the launcher and the plugin both read it.
#pragma once

#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::policies {

struct SearchCacheEntry {
  std::string key; // the key it answers (SHA-256 hex)
  size_t budget = 0;
  uint64_t ozBytes = 0;     // .text at -Oz, as measured in the search
  uint64_t chosenBytes = 0; // .text with the policy below (≤ ozBytes)
  // The chosen decisions: a flip-set policy file's text (-Oz's decisions
  // except at the listed decision states); empty: -Oz's own.
  std::string policy;
};

// Reads an environment variable (null: unset).
using EnvironmentGetter = std::function<const char*(const char*)>;

// The unit key: the command key and the module's bitcode.
std::string searchCacheKey(std::string_view commandKey, std::string_view bitcode);

// Names of the variables through which the launcher asks the plugin, in a
// compile, to look the unit up (BuildSearch.h).
inline constexpr const char* kSearchCommandKeyEnvironment = "MLGO_SEARCH_COMMAND_KEY";
// On a miss the plugin writes the module's bitcode here.
inline constexpr const char* kSearchBitcodeEnvironment = "MLGO_SEARCH_BITCODE";
// The plugin writes "hit KEY" or "miss KEY" here.
inline constexpr const char* kSearchResultEnvironment = "MLGO_SEARCH_RESULT";
// Set for the compile that adopts a search's answer just stored: a hit the
// statistics do not count.
inline constexpr const char* kSearchAdoptEnvironment = "MLGO_SEARCH_ADOPT";

std::string formatEntry(const SearchCacheEntry& entry);
// Errors say what is wrong ("checksum mismatch", "line 3: …").
Expected<SearchCacheEntry> parseEntry(std::string_view text);

struct CacheLookup {
  std::optional<SearchCacheEntry> entry;
  std::string warning; // set when a file was there but refused
};

struct SearchCacheStats {
  std::filesystem::path directory;
  uint64_t limitBytes = 0;
  size_t entries = 0, units = 0;
  uint64_t bytes = 0;
  size_t hits = 0, misses = 0, refused = 0; // since the last clear
};

class SearchCache {
public:
  // $MLGO_SEARCH_CACHE, else $XDG_CACHE_HOME/mlgo-es/search, else
  // $HOME/.cache/mlgo-es/search.
  static Expected<std::filesystem::path> defaultDirectory(const EnvironmentGetter& environment);
  // $MLGO_SEARCH_CACHE_SIZE (bytes, or with a K, M or G suffix), else 64 MiB.
  static Expected<uint64_t> defaultLimit(const EnvironmentGetter& environment);

  SearchCache(std::filesystem::path directory, uint64_t limitBytes)
      : directory_(std::move(directory)), limit_(limitBytes) {}

  CacheLookup find(const std::string& key);
  // The latest answer for a command key.
  CacheLookup findLatest(const std::string& commandKey);
  // Writes the entry under its key and under `commandKey`, then trims now
  // and then. Errors name the file.
  Status store(const SearchCacheEntry& entry, const std::string& commandKey);
  // Appends an event ("hit", "miss", "refused") to the statistics log.
  void count(std::string_view event);
  Expected<SearchCacheStats> stats() const;
  Status clear();
  // Removes the least recently used files until the cache is within 90 % of
  // its limit, and temporary files of writers that died (older than an hour).
  void trim();

  const std::filesystem::path& directory() const { return directory_; }

private:
  std::filesystem::path entryPath(const std::string& index, const std::string& key) const;
  CacheLookup read(const std::filesystem::path& file, const std::string& key);

  std::filesystem::path directory_;
  uint64_t limit_;
};

} // namespace mlgo::policies
