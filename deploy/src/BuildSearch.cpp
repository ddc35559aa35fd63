#include "mlgo/deploy/BuildSearch.h"

#include "mlgo/deploy/Cc1Command.h"
#include "mlgo/deploy/ElfText.h"
#include "mlgo/deploy/Process.h"
#include "mlgo/deploy/SearchCache.h"
#include "mlgo/support/Files.h"
#include "mlgo/support/Sha256.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace mlgo::deploy {

namespace fs = std::filesystem;

namespace {

// Bumped when what a key stands for changes (the search's rules, the
// entry's meaning): older entries then simply miss.
constexpr std::string_view kKeyVersion = "mlgo-search-key 1";

// The unit's scratch files, removed at the end or on a signal (fixed
// storage: a signal handler may not allocate).
char scratchDirectory[4096] = {};
constexpr const char* kScratchFiles[] = {"unit.bc", "chosen.json", "previous.json", "oz.o"};

void removeScratch() {
  if (!scratchDirectory[0])
    return;
  char path[4200];
  for (const char* file : kScratchFiles) {
    std::snprintf(path, sizeof path, "%s/%s", scratchDirectory, file);
    ::unlink(path);
  }
  ::rmdir(scratchDirectory);
  scratchDirectory[0] = 0;
}

void removeScratchAndReraise(int signal) {
  removeScratch();
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

Expected<fs::path> makeScratch() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/mlgo-search-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    return makeError(pattern + ": cannot create: " + std::strerror(errno));
  std::snprintf(scratchDirectory, sizeof scratchDirectory, "%s", pattern.c_str());
  for (int signal : {SIGINT, SIGTERM, SIGHUP})
    std::signal(signal, removeScratchAndReraise);
  return fs::path(pattern);
}

// What a file is without reading it all: path, size and modification time
// (the compiler and the plugin are large and change only when replaced).
std::string fileIdentity(const std::string& file) {
  std::error_code error;
  fs::path canonical = fs::canonical(file, error);
  struct stat info {};
  if (error || ::stat(canonical.c_str(), &info) != 0)
    return file + " (missing)";
  return canonical.string() + " " + std::to_string(info.st_size) + " " +
         std::to_string(info.st_mtim.tv_sec) + "." + std::to_string(info.st_mtim.tv_nsec);
}

std::string joined(const std::vector<std::string>& arguments) {
  std::string text;
  for (const std::string& a : arguments)
    text += a + '\0';
  return text;
}

struct UnitKeys {
  std::string exact; // the unit's inputs
  std::string unit;  // the unit's place: its previous result after an edit
};

UnitKeys unitKeys(const LaunchPlan& plan, const Cc1Command& cc1, const std::string& bitcode,
                  const std::string& policy) {
  const std::string compiler = fileIdentity(cc1.compiler) + " " MLGO_LLVM_VERSION;
  const std::string plugin = fileIdentity(plan.plugin);
  const std::string budget = std::to_string(*plan.options.search);
  std::error_code error;
  UnitKeys keys;
  keys.exact = Sha256()
                   .field(kKeyVersion)
                   .field(bitcode)
                   .field(joined(cc1.corpusArguments()))
                   .field(compiler)
                   .field(plugin)
                   .field(kSearchTask)
                   .field(policy)
                   .field(budget)
                   .hex();
  keys.unit = Sha256()
                  .field(kKeyVersion)
                  .field(fs::absolute(cc1.input, error).string())
                  .field(fs::absolute(cc1.output, error).string())
                  .field(compiler)
                  .field(kSearchTask)
                  .field(policy)
                  .field(budget)
                  .hex();
  return keys;
}

void warn(const std::string& message) {
  std::cerr << "mlgo-cc: warning: " << message << "\n";
}

int compileObject(const LaunchPlan& plan, const Cc1Command& cc1, const fs::path& bitcode,
                  const std::string& object, const std::string& policyText,
                  const fs::path& policyFile) {
  std::vector<std::string> arguments = cc1.backend(bitcode, object);
  ChildStreams streams;
  if (!policyText.empty()) {
    if (Status written = writeFileBytes(policyFile, policyText); !written) {
      std::cerr << "mlgo-cc: " << written.error().message << "\n";
      return 1;
    }
    arguments.push_back("-fpass-plugin=" + plan.plugin);
    streams.environment.emplace_back("MLGO_POLICY", policyFile.string());
  }
  if (plan.options.verbose) {
    std::cerr << "mlgo-cc:";
    for (const auto& [name, value] : streams.environment)
      std::cerr << " " << name << "=" << value;
    std::cerr << " " << cc1.compiler;
    for (const std::string& a : arguments)
      std::cerr << " " << a;
    std::cerr << "\n";
  }
  return runProgram(cc1.compiler, arguments, streams);
}

// The search's answer for the unit: the cache's, or a new search's (then
// cached). Never fails: a search that cannot run gives -Oz's own decisions.
SearchCacheEntry chooseDecisions(const LaunchPlan& plan, const Cc1Command& cc1,
                                 const fs::path& bitcodeFile, const std::string& bitcode,
                                 const UnitSearcher& searcher, SearchCache* cache,
                                 std::string& how) {
  Expected<std::string> policy = readFileBytes(*plan.policyFile);
  const UnitKeys keys = unitKeys(plan, cc1, bitcode, policy ? *policy : "");
  if (cache) {
    CacheLookup hit = cache->find(keys.exact);
    if (!hit.warning.empty()) {
      warn(hit.warning + "; searching again");
      cache->count("refused");
    }
    if (hit.entry) {
      cache->count("hit");
      how = "cache hit";
      return *hit.entry;
    }
    cache->count("miss");
  }
  UnitSearchRequest request;
  request.module.name = cc1.output;
  request.module.bitcode = bitcodeFile;
  request.module.bitcodeBytes = bitcode.size();
  request.module.storedCommand = cc1.corpusArguments();
  request.policyFile = *plan.policyFile;
  request.budget = *plan.options.search;
  request.verify = plan.options.searchVerify;
  if (cache) {
    CacheLookup previous = cache->findUnit(keys.unit);
    if (!previous.warning.empty())
      warn(previous.warning + "; searching from the policy");
    if (previous.entry)
      request.previousPolicy = previous.entry->policy;
  }
  Expected<UnitSearchOutcome> outcome = searcher(request);
  if (!outcome) {
    warn(cc1.output + ": the search failed (" + outcome.error().message +
         "); compiling with -Oz's own decisions");
    how = "search failed";
    return {};
  }
  SearchCacheEntry entry{keys.exact, request.budget, outcome->ozBytes, outcome->chosenBytes,
                         outcome->chosenPolicy};
  how = "searched" +
        std::string(request.previousPolicy.empty() ? "" : " from the previous choice") + ": " +
        outcome->summary;
  if (cache)
    if (Status stored = cache->store(entry, keys.unit); !stored)
      warn("search cache: " + stored.error().message);
  return entry;
}

} // namespace

int runSearchLaunch(const LaunchPlan& plan, const UnitSearcher& searcher) {
  Expected<Cc1Command> cc1 = cc1CommandFor(plan.compiler, plan.expandedArguments);
  if (!cc1) {
    warn("--mlgo-search: " + cc1.error().message + "; compiled with the policy alone");
    return runLaunch(plan);
  }
  for (const auto& [name, value] : plan.environment)
    ::setenv(name.c_str(), value.c_str(), 1);
  for (const std::string& warning : plan.warnings)
    warn(warning);
  Expected<fs::path> scratch = makeScratch();
  if (!scratch) {
    std::cerr << "mlgo-cc: " << scratch.error().message << "\n";
    return 1;
  }
  const fs::path bitcodeFile = *scratch / "unit.bc";
  int status = runProgram(cc1->compiler, cc1->frontend(bitcodeFile));
  Expected<std::string> bitcode =
      status == 0 ? readFileBytes(bitcodeFile) : Expected<std::string>(makeError(""));
  if (status != 0 || !bitcode) {
    removeScratch();
    return status != 0 ? status : 1;
  }
  std::optional<SearchCache> cache;
  Expected<fs::path> directory =
      SearchCache::defaultDirectory([](const char* name) { return std::getenv(name); });
  Expected<uint64_t> limit =
      SearchCache::defaultLimit([](const char* name) { return std::getenv(name); });
  if (directory && limit)
    cache.emplace(*directory, *limit);
  else
    warn("search cache off: " + (directory ? limit.error() : directory.error()).message);

  std::string how;
  SearchCacheEntry chosen =
      chooseDecisions(plan, *cc1, bitcodeFile, *bitcode, searcher, cache ? &*cache : nullptr, how);
  status =
      compileObject(plan, *cc1, bitcodeFile, cc1->output, chosen.policy, *scratch / "chosen.json");
  if (status == 0 && !chosen.policy.empty()) {
    // The object must be what the search measured; otherwise -Oz's.
    Expected<uint64_t> text = textBytes(cc1->output);
    if (!text || *text != chosen.chosenBytes) {
      warn(cc1->output + ": .text " + (text ? std::to_string(*text) + " B" : "unreadable") +
           ", but the search measured " + std::to_string(chosen.chosenBytes) +
           " B for these decisions; writing -Oz's object instead");
      status = compileObject(plan, *cc1, bitcodeFile, cc1->output, "", "");
    }
  }
  if (plan.options.verbose && status == 0)
    std::cerr << "mlgo-cc: " << cc1->output << ": -Oz " << chosen.ozBytes << " B, chosen "
              << chosen.chosenBytes << " B (" << how << ")\n";
  removeScratch();
  return status;
}

int runCacheCommand(const LaunchPlan& plan, const EnvironmentLookup& environment) {
  Expected<fs::path> directory = SearchCache::defaultDirectory(environment);
  Expected<uint64_t> limit = SearchCache::defaultLimit(environment);
  if (!directory || !limit) {
    std::cerr << "mlgo-cc: error: " << (directory ? limit.error() : directory.error()).message
              << "\n";
    return 1;
  }
  SearchCache cache(*directory, *limit);
  if (plan.options.cacheClear) {
    if (Status cleared = cache.clear(); !cleared) {
      std::cerr << "mlgo-cc: error: " << cleared.error().message << "\n";
      return 1;
    }
    std::cout << "search cache " << directory->string() << " cleared\n";
    return 0;
  }
  Expected<SearchCacheStats> stats = cache.stats();
  if (!stats) {
    std::cerr << "mlgo-cc: error: " << stats.error().message << "\n";
    return 1;
  }
  const size_t lookups = stats->hits + stats->misses;
  std::printf("search cache: %s\n  entries: %zu units, %zu answers, %.1f KiB of %.1f MiB\n"
              "  lookups: %zu hits, %zu misses (%.0f %% hits), %zu entries refused\n",
              directory->c_str(), stats->units, stats->entries, stats->bytes / 1024.0,
              stats->limitBytes / 1048576.0, stats->hits, stats->misses,
              lookups ? 100.0 * stats->hits / lookups : 0.0, stats->refused);
  return 0;
}

} // namespace mlgo::deploy
