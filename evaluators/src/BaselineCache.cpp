#include "mlgo/evaluators/BaselineCache.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/SHA256.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cinttypes>
#include <cstdio>
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
  add("mlgo-es baseline v2"); // v2: entries carry a check
  add(compilerIdentity);
  add(bitcode);
  for (const std::string& argument : command)
    add(argument);
  std::array<uint8_t, 32> digest = hash.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

namespace {

// Binds an entry's value to its key, so that an edited, truncated or swapped
// entry is recognised instead of trusted.
std::string checkOf(const std::string& key, std::string_view value) {
  llvm::SHA256 hash;
  std::string text = key + ":" + std::string(value);
  hash.update(llvm::StringRef(text));
  std::array<uint8_t, 32> digest = hash.final();
  return llvm::toHex(llvm::ArrayRef<uint8_t>(digest.data(), 8), /*LowerCase=*/true);
}

// The score as text that reads back to the same double.
std::string scoreText(double score) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", score);
  return text;
}

} // namespace

// An entry is "<value> <check>\n": the value's text, then the check of
// exactly this key and text.
Expected<std::optional<std::string>> BaselineCache::lookupText(const std::string& key,
                                                               const std::string& suffix) const {
  fs::path entry = directory_ / (key + suffix);
  std::ifstream in(entry, std::ios::binary);
  if (!in)
    return std::optional<std::string>();
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t space = text.find(' ');
  bool wellFormed = space != std::string::npos && space > 0 && text.size() > space + 1 &&
                    text.back() == '\n' &&
                    text.substr(space + 1, text.size() - space - 2) ==
                        checkOf(key, std::string_view(text).substr(0, space));
  if (!wellFormed) {
    std::string shown = text.substr(0, 40);
    std::replace_if(
        shown.begin(), shown.end(), [](char c) { return c < ' '; }, ' ');
    return makeError("baseline cache entry " + entry.string() + " is corrupt (\"" + shown +
                     "\"); compiling the baseline again");
  }
  return std::optional<std::string>(text.substr(0, space));
}

void BaselineCache::storeText(const std::string& key, const std::string& suffix,
                              const std::string& value) const {
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec)
    return;
  fs::path target = directory_ / (key + suffix);
  static std::atomic<uint64_t> counter{0};
  fs::path temporary = directory_ / (key + suffix + "." + std::to_string(getpid()) + "." +
                                     std::to_string(counter++) + ".tmp");
  {
    std::ofstream out(temporary);
    out << value << " " << checkOf(key, value) << "\n";
    if (!out)
      return;
  }
  fs::rename(temporary, target, ec);
  if (ec)
    fs::remove(temporary, ec);
}

Expected<std::optional<uint64_t>> BaselineCache::lookup(const std::string& key) const {
  Expected<std::optional<std::string>> text = lookupText(key, ".size");
  if (!text || !*text)
    return text ? std::optional<uint64_t>() : Expected<std::optional<uint64_t>>(text.error());
  uint64_t size = 0;
  const char* begin = (*text)->data();
  const char* end = begin + (*text)->size();
  auto [stop, error] = std::from_chars(begin, end, size);
  if (error != std::errc() || stop != end)
    return makeError("baseline cache entry for " + key + ".size: not a size");
  return std::optional<uint64_t>(size);
}

void BaselineCache::store(const std::string& key, uint64_t sizeBytes) const {
  storeText(key, ".size", std::to_string(sizeBytes));
}

Expected<std::optional<double>> BaselineCache::lookupMeasure(const std::string& key,
                                                             Measure measure) const {
  const std::string suffix = "." + std::string(measureName(measure));
  Expected<std::optional<std::string>> text = lookupText(key, suffix);
  if (!text || !*text)
    return text ? std::optional<double>() : Expected<std::optional<double>>(text.error());
  char* end = nullptr;
  const double value = std::strtod((*text)->c_str(), &end);
  if (end != (*text)->c_str() + (*text)->size() || scoreText(value) != **text)
    return makeError("baseline cache entry for " + key + suffix + ": not a value");
  return std::optional<double>(value);
}

void BaselineCache::storeMeasure(const std::string& key, Measure measure, double value) const {
  storeText(key, "." + std::string(measureName(measure)), scoreText(value));
}

// "group:bytes" in hex, comma-separated; "none" for an object without groups.
void BaselineCache::storeComdat(const std::string& key,
                                const std::vector<ComdatCode>& comdat) const {
  std::string text;
  char entry[48];
  for (const ComdatCode& code : comdat) {
    std::snprintf(entry, sizeof entry, "%s%" PRIx64 ":%" PRIx64, text.empty() ? "" : ",",
                  code.group, code.bytes);
    text += entry;
  }
  storeText(key, ".comdat", text.empty() ? "none" : text);
}

Expected<std::optional<std::vector<ComdatCode>>>
BaselineCache::lookupComdat(const std::string& key) const {
  Expected<std::optional<std::string>> text = lookupText(key, ".comdat");
  if (!text || !*text)
    return text ? std::optional<std::vector<ComdatCode>>()
                : Expected<std::optional<std::vector<ComdatCode>>>(text.error());
  std::vector<ComdatCode> comdat;
  if (**text == "none")
    return std::optional(comdat);
  const char* at = (*text)->data();
  const char* end = at + (*text)->size();
  while (at < end) {
    ComdatCode code;
    auto group = std::from_chars(at, end, code.group, 16);
    if (group.ec != std::errc() || group.ptr == end || *group.ptr != ':')
      return makeError("baseline cache entry for " + key + ".comdat: not a group list");
    auto bytes = std::from_chars(group.ptr + 1, end, code.bytes, 16);
    if (bytes.ec != std::errc() || (bytes.ptr != end && *bytes.ptr != ','))
      return makeError("baseline cache entry for " + key + ".comdat: not a group list");
    comdat.push_back(code);
    at = bytes.ptr == end ? end : bytes.ptr + 1;
  }
  return std::optional(comdat);
}

fs::path defaultBaselineCacheDirectory() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fs::path(xdg) / "mlgo-es" / "baselines";
  if (const char* home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".cache" / "mlgo-es" / "baselines";
  return fs::temp_directory_path() / "mlgo-es-baselines";
}

} // namespace mlgo::evaluators
