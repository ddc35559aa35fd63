#include "mlgo/policies/SearchCache.h"

#include "mlgo/support/Files.h"
#include "mlgo/support/Sha256.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fcntl.h>
#include <sstream>
#include <unistd.h>

namespace mlgo::policies {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kHeader = "mlgo-search-cache 1";
constexpr std::string_view kChecksum = "checksum ";
constexpr const char* kStatsLog = "stats.log";
constexpr uint64_t kDefaultLimit = uint64_t{64} << 20;

bool isHexKey(std::string_view key) {
  return key.size() >= 8 && std::all_of(key.begin(), key.end(), [](char c) {
           return std::isxdigit(c) && !std::isupper(c);
         });
}

} // namespace

std::string searchCacheKey(std::string_view commandKey, std::string_view bitcode) {
  return Sha256().field("mlgo-search-unit 1").field(commandKey).field(bitcode).hex();
}

std::string formatEntry(const SearchCacheEntry& entry) {
  const std::string body = std::string(kHeader) + "\nkey " + entry.key + "\nbudget " +
                           std::to_string(entry.budget) + "\noz-bytes " +
                           std::to_string(entry.ozBytes) + "\nchosen-bytes " +
                           std::to_string(entry.chosenBytes) + "\npolicy " +
                           std::to_string(entry.policy.size()) + "\n" + entry.policy + "\n";
  return body + std::string(kChecksum) + sha256Hex(body) + "\n";
}

Expected<SearchCacheEntry> parseEntry(std::string_view text) {
  const size_t sealed = text.rfind(kChecksum);
  if (sealed == std::string_view::npos || (sealed > 0 && text[sealed - 1] != '\n'))
    return makeError("no checksum line");
  const std::string_view body = text.substr(0, sealed);
  std::string_view checksum = text.substr(sealed + kChecksum.size());
  if (!checksum.empty() && checksum.back() == '\n')
    checksum.remove_suffix(1);
  if (checksum != sha256Hex(body))
    return makeError("checksum mismatch (a damaged or edited entry)");
  std::istringstream in{std::string(body)};
  std::string line, word;
  if (!std::getline(in, line) || line != kHeader)
    return makeError("line 1: expected \"" + std::string(kHeader) + "\"");
  SearchCacheEntry entry;
  if (!(in >> word) || word != "key" || !(in >> entry.key) || !isHexKey(entry.key))
    return makeError("expected key HEX");
  size_t policyBytes = 0;
  for (auto [name, field] :
       {std::pair{"budget", &entry.budget}, std::pair{"oz-bytes", &entry.ozBytes},
        std::pair{"chosen-bytes", &entry.chosenBytes}, std::pair{"policy", &policyBytes}})
    if (!(in >> word) || word != name || !(in >> *field))
      return makeError(std::string("expected ") + name + " COUNT");
  if (in.get() != '\n')
    return makeError("expected a new line after the policy's size");
  entry.policy.resize(policyBytes);
  if (!in.read(entry.policy.data(), static_cast<std::streamsize>(policyBytes)) ||
      in.get() != '\n' || in.peek() != std::char_traits<char>::eof())
    return makeError("the policy is not " + std::to_string(policyBytes) + " bytes");
  if (entry.chosenBytes > entry.ozBytes)
    return makeError("chosen-bytes above oz-bytes");
  return entry;
}

Expected<fs::path> SearchCache::defaultDirectory(const EnvironmentGetter& environment) {
  if (const char* dir = environment("MLGO_SEARCH_CACHE"); dir && *dir)
    return fs::absolute(dir);
  if (const char* xdg = environment("XDG_CACHE_HOME"); xdg && *xdg)
    return fs::path(xdg) / "mlgo-es" / "search";
  if (const char* home = environment("HOME"); home && *home)
    return fs::path(home) / ".cache" / "mlgo-es" / "search";
  return makeError("no search cache directory: set MLGO_SEARCH_CACHE (or HOME)");
}

Expected<uint64_t> SearchCache::defaultLimit(const EnvironmentGetter& environment) {
  const char* value = environment("MLGO_SEARCH_CACHE_SIZE");
  if (!value || !*value)
    return kDefaultLimit;
  std::string text = value;
  uint64_t scale = 1;
  switch (text.back()) {
  case 'K':
  case 'k':
    scale = uint64_t{1} << 10;
    break;
  case 'M':
  case 'm':
    scale = uint64_t{1} << 20;
    break;
  case 'G':
  case 'g':
    scale = uint64_t{1} << 30;
    break;
  default:
    break;
  }
  if (scale != 1)
    text.pop_back();
  if (text.empty() || !std::all_of(text.begin(), text.end(), ::isdigit))
    return makeError(std::string("MLGO_SEARCH_CACHE_SIZE=") + value +
                     ": expected bytes, or a number with K, M or G");
  return std::stoull(text) * scale;
}

fs::path SearchCache::entryPath(const std::string& index, const std::string& key) const {
  return directory_ / index / key.substr(0, 2) / key;
}

CacheLookup SearchCache::read(const fs::path& file, const std::string& key) {
  CacheLookup lookup;
  std::error_code error;
  if (!fs::is_regular_file(file, error))
    return lookup;
  Expected<std::string> text = readFileBytes(file);
  if (!text)
    return lookup; // removed by a trim in between: a miss
  Expected<SearchCacheEntry> entry = parseEntry(*text);
  if (!entry) {
    lookup.warning = file.string() + ": refused: " + entry.error().message;
    return lookup;
  }
  if (!key.empty() && entry->key != key) {
    lookup.warning = file.string() + ": refused: it answers another key (" + entry->key + ")";
    return lookup;
  }
  fs::last_write_time(file, fs::file_time_type::clock::now(), error); // recently used
  lookup.entry = entry.take();
  return lookup;
}

CacheLookup SearchCache::find(const std::string& key) {
  return read(entryPath("entries", key), key);
}

CacheLookup SearchCache::findLatest(const std::string& commandKey) {
  return read(entryPath("units", commandKey), "");
}

Status SearchCache::store(const SearchCacheEntry& entry, const std::string& commandKey) {
  const std::string text = formatEntry(entry);
  for (const fs::path& file : {entryPath("entries", entry.key), entryPath("units", commandKey)}) {
    std::error_code error;
    fs::create_directories(file.parent_path(), error);
    if (error)
      return makeError(file.parent_path().string() + ": cannot create: " + error.message());
    MLGO_TRY(writeFileAtomically(file, text));
  }
  // Trimming walks the cache: done for one store in 16, chosen by the key
  // so that which build trims does not depend on timing.
  if (entry.key[0] == '0')
    trim();
  return Status::ok();
}

void SearchCache::count(std::string_view event) {
  std::error_code error;
  fs::create_directories(directory_, error);
  // O_APPEND writes of one short line do not interleave between processes.
  int fd = ::open((directory_ / kStatsLog).c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0)
    return;
  std::string line = std::string(event) + "\n";
  [[maybe_unused]] ssize_t written = ::write(fd, line.data(), line.size());
  ::close(fd);
}

Expected<SearchCacheStats> SearchCache::stats() const {
  SearchCacheStats stats;
  stats.directory = directory_;
  stats.limitBytes = limit_;
  std::error_code error;
  for (auto [index, count] :
       {std::pair{"entries", &stats.entries}, std::pair{"units", &stats.units}}) {
    if (!fs::is_directory(directory_ / index, error))
      continue;
    for (const fs::directory_entry& file :
         fs::recursive_directory_iterator(directory_ / index, error))
      if (file.is_regular_file(error)) {
        ++*count;
        stats.bytes += file.file_size(error);
      }
  }
  if (Expected<std::string> log = readFileBytes(directory_ / kStatsLog)) {
    std::istringstream in(*log);
    for (std::string event; in >> event;) {
      stats.hits += event == "hit";
      stats.misses += event == "miss";
      stats.refused += event == "refused";
    }
  }
  return stats;
}

Status SearchCache::clear() {
  std::error_code error;
  for (const char* part : {"entries", "units", kStatsLog}) {
    fs::remove_all(directory_ / part, error);
    if (error)
      return makeError((directory_ / part).string() + ": cannot remove: " + error.message());
  }
  return Status::ok();
}

void SearchCache::trim() {
  struct File {
    fs::path path;
    fs::file_time_type used;
    uint64_t bytes;
  };
  std::vector<File> files;
  uint64_t total = 0;
  std::error_code error;
  const auto stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const char* index : {"entries", "units"}) {
    if (!fs::is_directory(directory_ / index, error))
      continue;
    for (const fs::directory_entry& file :
         fs::recursive_directory_iterator(directory_ / index, error)) {
      if (!file.is_regular_file(error))
        continue;
      File f{file.path(), file.last_write_time(error), file.file_size(error)};
      if (f.path.filename().string().find(".tmp.") != std::string::npos) {
        if (f.used < stale)
          fs::remove(f.path, error); // a writer that died before its rename
        continue;
      }
      total += f.bytes;
      files.push_back(std::move(f));
    }
  }
  if (total <= limit_)
    return;
  std::sort(files.begin(), files.end(),
            [](const File& a, const File& b) { return a.used < b.used; });
  for (const File& f : files) {
    if (total <= limit_ / 10 * 9)
      break;
    if (fs::remove(f.path, error))
      total -= f.bytes;
  }
}

} // namespace mlgo::policies
