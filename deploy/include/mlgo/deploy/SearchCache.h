// The build-time search's persistent cache (mlgo-cc --mlgo-search): what a
// translation unit's search chose, so that a rebuild of an unchanged unit
// costs one compile and an edited unit starts from its previous choice.
//
// An entry is small text: the key it answers, the budget, the -Oz and chosen
// .text bytes, and the chosen decisions as a flip-set policy file (decision-
// state hashes, as `mlgo-eval search` writes them), sealed by a SHA-256 of
// the rest. Two indexes, one file per entry each:
//   entries/KK/KEY      KEY = the unit's inputs (bitcode, cc1 command,
//                       compiler, task, policy, budget): an exact answer;
//   units/KK/UNITKEY    UNITKEY = the unit's place (source, object, command
//                       without the bitcode): its latest answer, the start
//                       of the next search after an edit.
// Files are written beside their target and renamed over it, so concurrent
// builds and a killed launcher never leave half an entry; an entry that does
// not parse, fails its checksum or answers another key is refused with a
// warning (and recomputed by the caller). The cache is trimmed to its size
// limit, least recently used entries first (a hit touches its entry).
#pragma once

#include "mlgo/deploy/Launcher.h"
#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::deploy {

struct SearchCacheEntry {
  std::string key; // the key it answers (SHA-256 hex)
  size_t budget = 0;
  uint64_t ozBytes = 0;     // .text at -Oz, as measured in the search
  uint64_t chosenBytes = 0; // .text with the policy below (≤ ozBytes)
  // The chosen decisions: a flip-set policy file's text (-Oz's decisions
  // except at the listed decision states); empty: -Oz's own.
  std::string policy;
};

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
  static Expected<std::filesystem::path> defaultDirectory(const EnvironmentLookup& environment);
  // $MLGO_SEARCH_CACHE_SIZE (bytes, or with a K, M or G suffix), else 64 MiB.
  static Expected<uint64_t> defaultLimit(const EnvironmentLookup& environment);

  SearchCache(std::filesystem::path directory, uint64_t limitBytes)
      : directory_(std::move(directory)), limit_(limitBytes) {}

  CacheLookup find(const std::string& key);
  CacheLookup findUnit(const std::string& unitKey);
  // Writes the entry under its key and under `unitKey`, then trims now and
  // then. Errors name the file.
  Status store(const SearchCacheEntry& entry, const std::string& unitKey);
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

} // namespace mlgo::deploy
