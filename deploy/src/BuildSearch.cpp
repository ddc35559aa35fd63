#include "mlgo/deploy/BuildSearch.h"

#include "mlgo/deploy/Cc1Command.h"
#include "mlgo/deploy/ElfText.h"
#include "mlgo/deploy/Process.h"
#include "mlgo/policies/SearchCache.h"
#include "mlgo/support/Files.h"
#include "mlgo/support/Sha256.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace mlgo::deploy {

namespace fs = std::filesystem;
using policies::SearchCache;
using policies::SearchCacheEntry;

namespace {

// Bumped when what a key stands for changes (the search's rules, the
// entry's meaning, the task searched: the inliner's, for code size): older
// entries then simply miss.
constexpr std::string_view kKeyVersion = "mlgo-search-command 1, inliner for size";

// The unit's scratch directory and the files the launcher writes there,
// removed at the end or on a signal (fixed storage: a signal handler may not
// allocate).
char scratchDirectory[4096] = {};
constexpr const char* kScratchFiles[] = {"unit.bc",       "unit.cmd",    "result",
                                         "previous.json", "chosen.json", "outcome",
                                         "chosen.o",      "oz.o",        "search.log"};

// From a signal handler: the files the launcher writes, by name.
void removeScratchAndReraise(int signal) {
  if (scratchDirectory[0]) {
    char path[4200];
    for (const char* file : kScratchFiles) {
      std::snprintf(path, sizeof path, "%s/%s", scratchDirectory, file);
      ::unlink(path);
    }
    ::rmdir(scratchDirectory);
  }
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

// At the end: everything in it.
void removeScratch() {
  if (!scratchDirectory[0])
    return;
  std::error_code ignored;
  fs::remove_all(scratchDirectory, ignored);
  scratchDirectory[0] = 0;
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

// Everything about the compile but the module: the plugin adds the module's
// bitcode (policies::searchCacheKey).
std::string commandKey(const LaunchPlan& plan, const std::string& policy) {
  std::string arguments;
  for (const std::string& a : plan.expandedArguments)
    arguments += a + '\0';
  std::error_code error;
  return Sha256()
      .field(kKeyVersion)
      .field(arguments)
      .field(fs::current_path(error).string())
      .field(fileIdentity(plan.compilerPath) + " " MLGO_LLVM_VERSION)
      .field(fileIdentity(plan.plugin))
      .field(policy)
      .field(std::to_string(*plan.options.search))
      .hex();
}

void warn(const std::string& message) {
  std::cerr << "mlgo-cc: warning: " << message << "\n";
}

// Step 4: the object with the chosen decisions, from the bitcode; its .text.
Expected<uint64_t> compileChosen(const LaunchPlan& plan, const Cc1Command& cc1,
                                 const fs::path& scratch, const std::string& policy) {
  MLGO_TRY(writeFileBytes(scratch / "chosen.json", policy));
  std::vector<std::string> arguments = cc1.backend(scratch / "unit.bc", scratch / "chosen.o");
  arguments.push_back("-fpass-plugin=" + plan.plugin);
  ChildStreams streams;
  streams.environment.emplace_back("MLGO_POLICY", (scratch / "chosen.json").string());
  if (plan.options.verbose)
    printCommand(cc1.compiler, arguments, streams.environment);
  if (int status = runProgram(cc1.compiler, arguments, streams); status != 0)
    return makeError("the compile with the chosen decisions failed (status " +
                     std::to_string(status) + ")");
  return textBytes(scratch / "chosen.o");
}

// The unit's compile as the user wrote it, with the plugin looking the unit
// up (steps 1 and 2). `adopting`: the compile after a search, which must hit
// the answer just stored (the plugin then counts no lookup).
int compileWithLookup(const LaunchPlan& plan, const std::string& command, const fs::path& scratch,
                      bool adopting) {
  ChildStreams streams;
  streams.environment = {{policies::kSearchCommandKeyEnvironment, command},
                         {policies::kSearchBitcodeEnvironment, (scratch / "unit.bc").string()},
                         {policies::kSearchResultEnvironment, (scratch / "result").string()}};
  if (adopting) {
    streams.environment.emplace_back(policies::kSearchAdoptEnvironment, "1");
    streams.quiet = true; // its diagnostics would repeat the first compile's
  }
  if (plan.options.verbose)
    printCommand(plan.compiler, plan.arguments, streams.environment);
  return runProgram(plan.compiler, plan.arguments, streams);
}

// What the plugin answered: "hit KEY" or "miss KEY" (empty words if nothing).
std::pair<std::string, std::string> lookupResult(const fs::path& scratch) {
  Expected<std::string> result = readFileBytes(scratch / "result");
  std::istringstream words(result ? *result : "");
  std::string answer, unitKey;
  words >> answer >> unitKey;
  return {answer, unitKey};
}

// Step 4: the chosen decisions' object replaces -Oz's if its .text is what
// the search measured (then `entry` records the choice). With a cache, the answer is stored and the
// unit compiled again through the lookup — a hit, exactly the compile a rebuild makes, so the
// rebuild's object is this one byte for byte (the compile from the bitcode gives the same code, but
// private symbols can be numbered otherwise). Without one (or for standard input), from the
// bitcode.
void adoptChosen(const LaunchPlan& plan, const Cc1Command& cc1, const fs::path& scratch,
                 const UnitSearchOutcome& outcome, SearchCache* cache, const std::string& command,
                 SearchCacheEntry& entry) {
  const std::string& object = cc1.output;
  std::error_code error;
  Expected<uint64_t> chosen = makeError("");
  if (cache && !plan.command.readsStandardInput()) {
    fs::copy_file(object, scratch / "oz.o", fs::copy_options::overwrite_existing, error);
    SearchCacheEntry candidate = entry;
    candidate.chosenBytes = outcome.chosenBytes;
    candidate.policy = outcome.chosenPolicy;
    if (error || !cache->store(candidate, command)) {
      warn(object + ": cannot keep -Oz's object aside or store the answer; kept -Oz's object");
      return;
    }
    int status = compileWithLookup(plan, command, scratch, /*adopting=*/true);
    auto [answer, key] = lookupResult(scratch);
    chosen = status != 0 || answer != "hit" || key != entry.key
                 ? Expected<uint64_t>(makeError("the compile with the chosen decisions did not "
                                                "take them from the cache"))
                 : textBytes(object);
    if (!chosen || *chosen != outcome.chosenBytes)
      fs::rename(scratch / "oz.o", object, error); // back to -Oz's
  } else {
    chosen = compileChosen(plan, cc1, scratch, outcome.chosenPolicy);
    if (chosen && *chosen == outcome.chosenBytes)
      fs::rename(scratch / "chosen.o", object, error);
  }
  if (!chosen || error) {
    warn(object + ": " + (error ? error.message() : chosen.error().message) +
         "; kept -Oz's object");
  } else if (*chosen != outcome.chosenBytes) {
    warn(object + ": .text " + std::to_string(*chosen) + " B with the chosen decisions, but the " +
         "search measured " + std::to_string(outcome.chosenBytes) + " B; kept -Oz's object");
  } else {
    entry.chosenBytes = outcome.chosenBytes;
    entry.policy = outcome.chosenPolicy;
  }
}

// Steps 3 and 4 after a miss: the search, the chosen object, the entry.
void searchAfterMiss(const LaunchPlan& plan, const UnitSearcher& searcher, SearchCache* cache,
                     const std::string& unitKey, const std::string& command,
                     const fs::path& scratch) {
  Expected<Cc1Command> cc1 = cc1CommandFor(plan.compiler, plan.expandedArguments);
  if (!cc1) {
    warn("--mlgo-search: " + cc1.error().message + "; kept -Oz's object");
    return;
  }
  const std::string object = cc1->output;
  Expected<uint64_t> ozBytes = textBytes(object);
  if (!ozBytes) {
    warn("--mlgo-search: " + ozBytes.error().message + "; kept -Oz's object");
    return;
  }
  UnitSearchRequest request;
  request.module.name = object;
  request.module.bitcode = scratch / "unit.bc";
  std::error_code error;
  request.module.bitcodeBytes = fs::file_size(request.module.bitcode, error);
  request.module.storedCommand = cc1->corpusArguments();
  request.policyFile = *plan.policyFile;
  request.budget = *plan.options.search;
  request.verify = plan.options.searchVerify;
  request.ozBytes = *ozBytes;
  if (cache) {
    policies::CacheLookup previous = cache->findLatest(command);
    if (!previous.warning.empty())
      warn(previous.warning + "; searching from the policy");
    if (previous.entry)
      request.previousPolicy = previous.entry->policy;
  }
  SearchCacheEntry entry{unitKey, request.budget, *ozBytes, *ozBytes, ""};
  Expected<UnitSearchOutcome> outcome = searcher(request);
  if (!outcome) {
    warn(object + ": the search failed (" + outcome.error().message + "); kept -Oz's object");
    return; // not cached: the next build tries again
  }
  if (outcome->ozBytes != *ozBytes)
    warn(object + ": the search measured -Oz at " + std::to_string(outcome->ozBytes) +
         " B, the compile gave " + std::to_string(*ozBytes) + " B");
  const bool smaller = !outcome->chosenPolicy.empty() && outcome->chosenBytes < *ozBytes;
  if (smaller)
    adoptChosen(plan, *cc1, scratch, *outcome, cache, command, entry);
  // The answer is what was built (-Oz's object unless the chosen one was
  // adopted), so that a rebuild makes the same object.
  if (cache)
    if (Status stored = cache->store(entry, command); !stored)
      warn("search cache: " + stored.error().message);
  if (plan.options.verbose)
    std::cerr << "mlgo-cc: " << object << ": -Oz " << entry.ozBytes << " B, kept "
              << entry.chosenBytes << " B (searched"
              << (request.previousPolicy.empty() ? "" : " from the previous choice") << ": "
              << outcome->summary << ")\n";
}

} // namespace

int runSearchLaunch(const LaunchPlan& plan, const UnitSearcher& searcher) {
  for (const auto& [name, value] : plan.environment)
    ::setenv(name.c_str(), value.c_str(), 1);
  for (const std::string& warning : plan.warnings)
    warn(warning);
  Expected<fs::path> scratch = makeScratch();
  if (!scratch) {
    std::cerr << "mlgo-cc: " << scratch.error().message << "\n";
    return 1;
  }
  auto getenv = [](const char* name) { return std::getenv(name); };
  std::optional<SearchCache> cache;
  Expected<fs::path> directory = SearchCache::defaultDirectory(getenv);
  Expected<uint64_t> limit = SearchCache::defaultLimit(getenv);
  if (directory && limit)
    cache.emplace(*directory, *limit);
  else
    warn("search cache off: " + (directory ? limit.error() : directory.error()).message);
  Expected<std::string> policy = readFileBytes(*plan.policyFile);
  if (!policy) {
    std::cerr << "mlgo-cc: error: " << policy.error().message << "\n";
    removeScratch();
    return 1;
  }
  const std::string command = commandKey(plan, *policy);

  // Step 1 (and 2): the compile, with the plugin looking the unit up.
  int status = compileWithLookup(plan, command, *scratch, /*adopting=*/false);
  if (status != 0) {
    removeScratch();
    return status;
  }
  auto [answer, unitKey] = lookupResult(*scratch);
  if (answer == "miss" && !unitKey.empty())
    searchAfterMiss(plan, searcher, cache ? &*cache : nullptr, unitKey, command, *scratch);
  else if (answer != "hit")
    warn(plan.command.objectPath() + ": the plugin did not look the unit up (" +
         (answer.empty() ? std::string("no answer") : "\"" + answer + "\"") +
         "); compiled without search");
  else if (plan.options.verbose)
    std::cerr << "mlgo-cc: " << plan.command.objectPath() << ": cache hit " << unitKey << "\n";
  removeScratch();
  return 0;
}

UnitSearcher searchProgram(std::string program) {
  return [program](const UnitSearchRequest& request) -> Expected<UnitSearchOutcome> {
    const fs::path scratch = request.module.bitcode.parent_path();
    MLGO_TRY(writeFileBytes(scratch / "unit.cmd",
                            corpus::joinCommandFile(request.module.storedCommand)));
    std::vector<std::string> arguments = {"--bitcode",       request.module.bitcode.string(),
                                          "--command",       (scratch / "unit.cmd").string(),
                                          "--name",          request.module.name,
                                          "--policy",        request.policyFile,
                                          "--budget",        std::to_string(request.budget),
                                          "--oz-bytes",      std::to_string(request.ozBytes),
                                          "--outcome",       (scratch / "outcome").string(),
                                          "--chosen-policy", (scratch / "chosen.json").string()};
    if (!request.previousPolicy.empty()) {
      MLGO_TRY(writeFileBytes(scratch / "previous.json", request.previousPolicy));
      arguments.insert(arguments.end(), {"--previous", (scratch / "previous.json").string()});
    }
    if (request.verify)
      arguments.push_back("--verify");
    ChildStreams streams;
    streams.errors = (scratch / "search.log").string();
    if (int status = runProgram(program, arguments, streams); status != 0) {
      Expected<std::string> log = readFileBytes(scratch / "search.log");
      return makeError(program + " failed (status " + std::to_string(status) + ")" +
                       (log && !log->empty() ? ": " + log->substr(0, 1500) : ""));
    }
    Expected<std::string> text = readFileBytes(scratch / "outcome");
    if (!text)
      return text.error();
    UnitSearchOutcome outcome;
    std::istringstream in(*text);
    std::string word;
    if (!(in >> word >> outcome.ozBytes) || word != "oz-bytes" ||
        !(in >> word >> outcome.chosenBytes) || word != "chosen-bytes" || !(in >> word) ||
        word != "summary")
      return makeError((scratch / "outcome").string() + ": not an outcome: " + *text);
    std::getline(in >> std::ws, outcome.summary);
    if (outcome.chosenBytes < outcome.ozBytes) {
      Expected<std::string> chosen = readFileBytes(scratch / "chosen.json");
      if (!chosen)
        return chosen.error();
      outcome.chosenPolicy = chosen.take();
    }
    return outcome;
  };
}

Expected<SearchProgramCall> parseSearchProgramArguments(const std::vector<std::string>& arguments) {
  SearchProgramCall call;
  std::string commandFile, previousFile;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string& flag = arguments[i];
    if (flag == "--verify") {
      call.request.verify = true;
      continue;
    }
    if (i + 1 == arguments.size())
      return makeError(flag + ": needs a value");
    const std::string& value = arguments[++i];
    if (flag == "--bitcode")
      call.request.module.bitcode = value;
    else if (flag == "--command")
      commandFile = value;
    else if (flag == "--name")
      call.request.module.name = value;
    else if (flag == "--policy")
      call.request.policyFile = value;
    else if (flag == "--previous")
      previousFile = value;
    else if (flag == "--budget")
      call.request.budget = std::stoul(value);
    else if (flag == "--oz-bytes")
      call.request.ozBytes = std::stoull(value);
    else if (flag == "--outcome")
      call.outcomeFile = value;
    else if (flag == "--chosen-policy")
      call.chosenPolicyFile = value;
    else
      return makeError("unknown argument " + flag);
  }
  if (call.request.module.bitcode.empty() || commandFile.empty() ||
      call.request.policyFile.empty() || call.outcomeFile.empty() || call.chosenPolicyFile.empty())
    return makeError("needs --bitcode, --command, --policy, --outcome and --chosen-policy");
  Expected<std::string> command = readFileBytes(commandFile);
  if (!command)
    return command.error();
  call.request.module.storedCommand = corpus::splitCommandFile(*command);
  std::error_code error;
  call.request.module.bitcodeBytes = fs::file_size(call.request.module.bitcode, error);
  if (!previousFile.empty()) {
    Expected<std::string> previous = readFileBytes(previousFile);
    if (!previous)
      return previous.error();
    call.request.previousPolicy = previous.take();
  }
  return call;
}

Status writeSearchOutcome(const SearchProgramCall& call, const UnitSearchOutcome& outcome) {
  if (!outcome.chosenPolicy.empty())
    MLGO_TRY(writeFileBytes(call.chosenPolicyFile, outcome.chosenPolicy));
  return writeFileBytes(call.outcomeFile, "oz-bytes " + std::to_string(outcome.ozBytes) +
                                              "\nchosen-bytes " +
                                              std::to_string(outcome.chosenBytes) + "\nsummary " +
                                              outcome.summary + "\n");
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
  Expected<policies::SearchCacheStats> stats = cache.stats();
  if (!stats) {
    std::cerr << "mlgo-cc: error: " << stats.error().message << "\n";
    return 1;
  }
  const size_t lookups = stats->hits + stats->misses;
  std::printf("search cache: %s\n  entries: %zu answers, %zu latest per command; %.1f KiB of "
              "%.1f MiB\n  lookups: %zu hits, %zu misses (%.0f %% hits), %zu entries refused\n",
              directory->c_str(), stats->entries, stats->units, stats->bytes / 1024.0,
              stats->limitBytes / 1048576.0, stats->hits, stats->misses,
              lookups ? 100.0 * stats->hits / lookups : 0.0, stats->refused);
  return 0;
}

} // namespace mlgo::deploy
