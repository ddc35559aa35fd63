// The build-time search's cache (policies/SearchCache.h): entries survive a
// round trip, damaged or foreign entries are refused with a warning, the
// size limit is kept, and concurrent writers leave only whole entries.
#include "mlgo/policies/SearchCache.h"
#include "mlgo/support/Files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sys/wait.h>
#include <unistd.h>

namespace mlgo::policies {
namespace {

namespace fs = std::filesystem;

struct TemporaryDirectory {
  fs::path path;
  TemporaryDirectory() {
    std::string pattern = (fs::temp_directory_path() / "mlgo-search-cache-test-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

std::string keyOf(int n) {
  return searchCacheKey("command " + std::to_string(n), "bitcode");
}

SearchCacheEntry entryFor(int n) {
  return {keyOf(n), 16, 1000, 990 - static_cast<uint64_t>(n % 10),
          "{\"format\":\"mlgo-es-policy\",\n \"flips\":[\"" + std::to_string(n) + "\"]}\n"};
}

TEST(SearchCache, EntriesRoundTripThroughTheirText) {
  for (const SearchCacheEntry& entry : {entryFor(1), SearchCacheEntry{keyOf(2), 4, 77, 77, ""}}) {
    Expected<SearchCacheEntry> parsed = parseEntry(formatEntry(entry));
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_EQ(parsed->key, entry.key);
    EXPECT_EQ(parsed->budget, entry.budget);
    EXPECT_EQ(parsed->ozBytes, entry.ozBytes);
    EXPECT_EQ(parsed->chosenBytes, entry.chosenBytes);
    EXPECT_EQ(parsed->policy, entry.policy);
  }
  EXPECT_NE(searchCacheKey("a", "bc"), searchCacheKey("ab", "c"));
}

TEST(SearchCache, DamagedTextIsRefusedWithTheReason) {
  const std::string text = formatEntry(entryFor(3));
  std::string flipped = text;
  flipped[text.find("\"3\"") + 1] = '4';
  EXPECT_NE(parseEntry(flipped).error().message.find("checksum"), std::string::npos);
  EXPECT_FALSE(parseEntry(text.substr(0, text.size() / 2)));
  EXPECT_FALSE(parseEntry(""));
  // A sealed entry that claims a choice larger than -Oz is refused too.
  SearchCacheEntry larger = entryFor(4);
  larger.chosenBytes = larger.ozBytes + 1;
  EXPECT_NE(parseEntry(formatEntry(larger)).error().message.find("above"), std::string::npos);
}

TEST(SearchCache, FindsStoredEntriesAndTheLatestPerCommand) {
  TemporaryDirectory dir;
  SearchCache cache(dir.path, 1 << 20);
  EXPECT_FALSE(cache.find(keyOf(1)).entry);
  ASSERT_TRUE(cache.store(entryFor(1), "command-a"));
  ASSERT_TRUE(cache.store(entryFor(2), "command-a")); // an edit: a new module, same command
  CacheLookup hit = cache.find(keyOf(1));
  ASSERT_TRUE(hit.entry);
  EXPECT_TRUE(hit.warning.empty());
  EXPECT_EQ(hit.entry->policy, entryFor(1).policy);
  CacheLookup latest = cache.findLatest("command-a");
  ASSERT_TRUE(latest.entry);
  EXPECT_EQ(latest.entry->key, keyOf(2));
  EXPECT_FALSE(cache.findLatest("command-b").entry);
}

TEST(SearchCache, CorruptAndForeignEntriesAreRefusedWithAWarning) {
  TemporaryDirectory dir;
  SearchCache cache(dir.path, 1 << 20);
  ASSERT_TRUE(cache.store(entryFor(1), "c1"));
  ASSERT_TRUE(cache.store(entryFor(2), "c2"));
  const fs::path first = dir.path / "entries" / keyOf(1).substr(0, 2) / keyOf(1);
  const fs::path second = dir.path / "entries" / keyOf(2).substr(0, 2) / keyOf(2);
  // Foreign: another key's entry under this key's name.
  fs::copy_file(second, first, fs::copy_options::overwrite_existing);
  CacheLookup foreign = cache.find(keyOf(1));
  EXPECT_FALSE(foreign.entry);
  EXPECT_NE(foreign.warning.find("another key"), std::string::npos) << foreign.warning;
  // Corrupt: a byte changed on disk.
  Expected<std::string> text = readFileBytes(second);
  ASSERT_TRUE(text);
  (*text)[text->size() / 2] ^= 1;
  ASSERT_TRUE(writeFileBytes(second, *text));
  CacheLookup corrupt = cache.find(keyOf(2));
  EXPECT_FALSE(corrupt.entry);
  EXPECT_NE(corrupt.warning.find(second.string()), std::string::npos) << corrupt.warning;
  // Recomputed and stored again, it is found.
  ASSERT_TRUE(cache.store(entryFor(2), "c2"));
  EXPECT_TRUE(cache.find(keyOf(2)).entry);
}

TEST(SearchCache, TrimKeepsTheLimitAndTheRecentlyUsed) {
  TemporaryDirectory dir;
  const uint64_t entryBytes = formatEntry(entryFor(0)).size();
  SearchCache unlimited(dir.path, 1 << 20);
  auto old = fs::file_time_type::clock::now() - std::chrono::hours(2);
  for (int n = 0; n < 30; ++n) {
    ASSERT_TRUE(unlimited.store(entryFor(n), "command " + std::to_string(n)));
    for (const char* index : {"entries", "units"}) {
      const std::string key =
          index == std::string("entries") ? keyOf(n) : "command " + std::to_string(n);
      fs::last_write_time(dir.path / index / key.substr(0, 2) / key, old + std::chrono::seconds(n));
    }
  }
  SearchCache cache(dir.path, 20 * entryBytes);
  ASSERT_TRUE(cache.find(keyOf(0)).entry); // used now: the newest
  cache.trim();
  Expected<SearchCacheStats> stats = cache.stats();
  ASSERT_TRUE(stats);
  EXPECT_LE(stats->bytes, 20 * entryBytes);
  EXPECT_GT(stats->entries, 0u);
  EXPECT_TRUE(cache.find(keyOf(0)).entry);
  EXPECT_FALSE(cache.find(keyOf(1)).entry); // the least recently used went first
}

TEST(SearchCache, ConcurrentWritersLeaveOnlyWholeEntries) {
  TemporaryDirectory dir;
  std::vector<pid_t> children;
  for (int writer = 0; writer < 4; ++writer) {
    pid_t pid = ::fork();
    if (pid == 0) {
      SearchCache cache(dir.path, 1 << 20);
      for (int n = 0; n < 50; ++n) {
        cache.count("miss");
        if (!cache.store(entryFor(n), "shared command"))
          ::_exit(1);
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  SearchCache cache(dir.path, 1 << 20);
  for (int n = 0; n < 50; ++n) {
    CacheLookup hit = cache.find(keyOf(n));
    ASSERT_TRUE(hit.entry) << n << ": " << hit.warning;
  }
  EXPECT_TRUE(cache.findLatest("shared command").entry);
  Expected<SearchCacheStats> stats = cache.stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->entries, 50u);
  EXPECT_EQ(stats->misses, 200u);
  ASSERT_TRUE(cache.clear());
  EXPECT_EQ(cache.stats()->entries, 0u);
  EXPECT_EQ(cache.stats()->misses, 0u);
}

TEST(SearchCache, LocationAndLimitComeFromTheEnvironment) {
  auto env = [](std::map<std::string, std::string> values) {
    return [values](const char* name) -> const char* {
      auto found = values.find(name);
      return found == values.end() ? nullptr : found->second.c_str();
    };
  };
  EXPECT_EQ(*SearchCache::defaultDirectory(env({{"MLGO_SEARCH_CACHE", "/x/c"}, {"HOME", "/h"}})),
            fs::path("/x/c"));
  EXPECT_EQ(*SearchCache::defaultDirectory(env({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}})),
            fs::path("/x/mlgo-es/search"));
  EXPECT_EQ(*SearchCache::defaultDirectory(env({{"HOME", "/h"}})),
            fs::path("/h/.cache/mlgo-es/search"));
  EXPECT_FALSE(SearchCache::defaultDirectory(env({})));
  EXPECT_EQ(*SearchCache::defaultLimit(env({})), uint64_t{64} << 20);
  EXPECT_EQ(*SearchCache::defaultLimit(env({{"MLGO_SEARCH_CACHE_SIZE", "3M"}})), uint64_t{3} << 20);
  EXPECT_EQ(*SearchCache::defaultLimit(env({{"MLGO_SEARCH_CACHE_SIZE", "4096"}})), 4096u);
  Expected<uint64_t> bad = SearchCache::defaultLimit(env({{"MLGO_SEARCH_CACHE_SIZE", "lots"}}));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("MLGO_SEARCH_CACHE_SIZE=lots"), std::string::npos);
}

} // namespace
} // namespace mlgo::policies
