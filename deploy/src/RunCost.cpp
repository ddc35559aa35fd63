#include "mlgo/deploy/RunCost.h"

#include "mlgo/deploy/Process.h"
#include "mlgo/policies/PolicyLocation.h"
#include "mlgo/support/Files.h"
#include "mlgo/support/Sha256.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace mlgo::deploy {

namespace fs = std::filesystem;

CachegrindCounts& CachegrindCounts::operator+=(const CachegrindCounts& other) {
  ir += other.ir;
  i1mr += other.i1mr;
  ilmr += other.ilmr;
  dr += other.dr;
  d1mr += other.d1mr;
  dlmr += other.dlmr;
  dw += other.dw;
  d1mw += other.d1mw;
  dlmw += other.dlmw;
  return *this;
}

namespace {

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> result;
  for (std::string word; in >> word;)
    result.push_back(word);
  return result;
}

} // namespace

Expected<CachegrindCounts> parseCachegrindSummary(const std::string& text,
                                                  const std::string& where) {
  std::vector<std::string> events, values;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("events:", 0) == 0)
      events = words(line.substr(7));
    else if (line.rfind("summary:", 0) == 0)
      values = words(line.substr(8));
  }
  if (events.empty() || values.size() != events.size())
    return makeError(where + ": no cachegrind \"events:\" and \"summary:\" lines of one length");
  std::map<std::string, uint64_t> count;
  for (size_t i = 0; i < events.size(); ++i) {
    char* end = nullptr;
    count[events[i]] = std::strtoull(values[i].c_str(), &end, 10);
    if (!end || *end)
      return makeError(where + ": summary value \"" + values[i] + "\" is not a count");
  }
  CachegrindCounts counts;
  const std::pair<const char*, uint64_t*> fields[] = {
      {"Ir", &counts.ir}, {"I1mr", &counts.i1mr}, {"ILmr", &counts.ilmr},
      {"Dr", &counts.dr}, {"D1mr", &counts.d1mr}, {"DLmr", &counts.dlmr},
      {"Dw", &counts.dw}, {"D1mw", &counts.d1mw}, {"DLmw", &counts.dlmw}};
  for (const auto& [name, field] : fields) {
    auto found = count.find(name);
    if (found == count.end())
      return makeError(where + ": no " + name + " count (cachegrind needs --cache-sim=yes)");
    *field = found->second;
  }
  return counts;
}

Expected<CachegrindCounts> readCachegrindFile(const fs::path& file) {
  MLGO_ASSIGN_OR_RETURN(std::string text, readFileBytes(file));
  return parseCachegrindSummary(text, file.string());
}

double cycleEstimate(const CachegrindCounts& c) {
  return static_cast<double>(c.ir) + 10.0 * static_cast<double>(c.i1mr + c.d1mr + c.d1mw) +
         100.0 * static_cast<double>(c.ilmr + c.dlmr + c.dlmw);
}

std::vector<std::string> cachegrindArguments(const std::string& pattern) {
  return {"valgrind",
          "--tool=cachegrind",
          "--cache-sim=yes",
          "--I1=32768,8,64",
          "--D1=32768,8,64",
          "--LL=8388608,16,64",
          "--cachegrind-out-file=" + pattern,
          "-q"};
}

WallTime summariseWallTimes(std::vector<double> seconds) {
  WallTime wall;
  wall.seconds = seconds;
  if (seconds.empty())
    return wall;
  std::sort(seconds.begin(), seconds.end());
  const size_t n = seconds.size();
  wall.median = n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  // [x(k), x(n+1-k)] holds the median with probability 1 − 2·P(Bin(n, ½) < k):
  // the largest k whose coverage is still ≥ 0.9 (k = 1, min and max, otherwise).
  auto coverage = [n](size_t k) {
    double tail = 0, choose = 1; // P(Bin(n, ½) ≤ k − 1)
    for (size_t i = 0; i < k; ++i) {
      tail += choose * std::pow(0.5, static_cast<double>(n));
      choose = choose * static_cast<double>(n - i) / static_cast<double>(i + 1);
    }
    return 1 - 2 * tail;
  };
  size_t k = 1;
  while (k + 1 <= (n + 1) / 2 && coverage(k + 1) >= 0.9)
    ++k;
  wall.low = seconds[k - 1];
  wall.high = seconds[n - k];
  wall.coverage = coverage(k);
  return wall;
}

Status RunCostOptions::validate() const {
  if (!fs::is_directory(repository / "corpus" / "recipes"))
    return makeError("run cost: " + repository.string() + " has no corpus/recipes");
  if (workRoot.empty())
    return makeError("run cost: no work directory");
  if (workRoot.string().find_first_of(" \t\n") != std::string::npos)
    return makeError("run cost: the work directory " + workRoot.string() +
                     " has white space (the benchmark's command is split on it)");
  if (workload != "tiny" && workload != "full")
    return makeError("run cost: workload \"" + workload + "\": expected tiny or full");
  static const char* const levels[] = {"Oz", "Os", "O1", "O2", "O3"};
  if (std::find(std::begin(levels), std::end(levels), optLevel) == std::end(levels))
    return makeError("run cost: -O level \"" + optLevel + "\": expected Oz, Os, O1, O2 or O3");
  if (cachegrind && cachegrindRuns == 0)
    return makeError("run cost: cachegrind runs must be at least 1");
  if (!cachegrind && wallRuns == 0)
    return makeError("run cost: neither cachegrind nor timed runs: nothing to measure");
  return Status::ok();
}

std::string DeployedPolicies::describe() const {
  if (plain())
    return "plain clang";
  std::string text;
  for (const auto& [variable, policy] : policies)
    text += (text.empty() ? "" : " + ") + policy;
  return text;
}

std::vector<std::string> benchmarkRecipes(const fs::path& repository) {
  std::vector<std::string> names;
  std::error_code error;
  for (const fs::directory_entry& entry :
       fs::directory_iterator(repository / "corpus" / "recipes", error)) {
    if (entry.path().extension() != ".sh" || entry.path().stem() == "common")
      continue;
    Expected<std::string> text = readFileBytes(entry.path());
    if (text && text->find("recipe_benchmark_link()") != std::string::npos)
      names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// A policy as mlgo-cc is given it: its file, made absolute (builds change
// directory), and its bytes (the build's cache key).
struct PolicyFile {
  std::string path, bytes;
};
Expected<PolicyFile> policyFile(const std::string& spec, const char* what) {
  Expected<fs::path> file = policies::policyFileFor(spec);
  if (!file)
    return makeError(std::string(what) + "=" + spec + ": " + file.error().message);
  MLGO_ASSIGN_OR_RETURN(std::string bytes, readFileBytes(*file));
  return PolicyFile{fs::absolute(*file).string(), std::move(bytes)};
}

// What else makes a build: the compiler, and for a policy build the
// launcher, the plugin and the channel program, each by path, size and
// modification time (a rebuilt plugin or an updated clang builds again).
std::string toolStamps(const RunCostOptions& options) {
  std::string stamps;
  for (const fs::path& tool : {fs::path(MLGO_LLVM_TOOLS_DIR) / "clang", fs::path(options.launcher),
                               fs::path(MLGO_DEFAULT_PLUGIN), fs::path(MLGO_DEFAULT_CHANNEL_CC)}) {
    std::error_code error;
    const fs::path real = fs::canonical(tool, error);
    if (error)
      continue; // absent: a plain build needs only clang, which the recipe checks
    stamps += real.string() + " " + std::to_string(fs::file_size(real, error)) + " " +
              std::to_string(fs::last_write_time(real, error).time_since_epoch().count()) + "\n";
  }
  return stamps;
}

struct Paths {
  fs::path recipeScript, build, workload, run;
  std::vector<std::pair<std::string, std::string>> environment; // the policies
  std::vector<std::string> launcherArguments;
};

Expected<Paths> planPaths(const std::string& recipe, const DeployedPolicies& policies,
                          const RunCostOptions& options) {
  Paths paths;
  paths.recipeScript = options.repository / "corpus" / "recipes" / (recipe + ".sh");
  if (!fs::is_regular_file(paths.recipeScript))
    return makeError("run cost: no recipe " + paths.recipeScript.string());
  // The build is cached by what makes it: the recipe, the shared recipe
  // code, the benchmark's own files, the level and the policies.
  std::string key = recipe + "\n" + options.optLevel + "\n";
  std::vector<fs::path> sources{paths.recipeScript, paths.recipeScript.parent_path() / "common.sh"};
  std::error_code error;
  const fs::path benchmarks = options.repository / "corpus" / "benchmarks";
  for (const fs::directory_entry& file : fs::directory_iterator(benchmarks, error))
    if (file.is_regular_file()) // what every benchmark shares: workloads, driver.h
      sources.push_back(file.path());
  for (const fs::directory_entry& file :
       fs::recursive_directory_iterator(benchmarks / recipe, error))
    if (file.is_regular_file())
      sources.push_back(file.path());
  std::sort(sources.begin() + 2, sources.end());
  for (const fs::path& source : sources) {
    MLGO_ASSIGN_OR_RETURN(std::string bytes, readFileBytes(source));
    key += source.filename().string() + "\n" + bytes;
  }
  const std::string sourcesHash = sha256Hex(key).substr(0, 10); // the workload's too
  key += toolStamps(options);
  for (const auto& [variable, spec] : policies.policies) {
    MLGO_ASSIGN_OR_RETURN(PolicyFile file, policyFile(spec, variable.c_str()));
    paths.environment.emplace_back(variable, file.path);
    key += variable + "\n" + file.bytes;
  }
  if (!policies.plain()) {
    if (options.launcher.empty())
      return makeError("run cost: a policy needs the launcher (mlgo-cc)");
    paths.launcherArguments = {"--launcher", options.launcher};
  }
  // Every build of a recipe and level has a path of one length, and every
  // build runs in one directory: cachegrind's counts move with the lengths
  // of the paths in the program's arguments and environment (the stack's
  // alignment: D1 write misses by 10 % on zlib), which must not pass for
  // the policy's effect.
  // The plain build's name shows it is plain (and has the others' length).
  const std::string hash = sha256Hex(key);
  const std::string name = recipe + "-" + options.optLevel + "-" +
                           (policies.plain() ? "plain-" + hash.substr(0, 10) : hash.substr(0, 16));
  paths.build = options.workRoot / "builds" / name;
  paths.workload =
      options.workRoot / "workloads" / (recipe + "-" + options.workload + "-" + sourcesHash);
  paths.run =
      options.workRoot / "runs" / (recipe + "-" + options.optLevel + "-" + options.workload);
  return paths;
}

// bash RECIPE.sh ARGUMENTS… with its output in `log`; an error names it.
Status runRecipe(const Paths& paths, const std::vector<std::string>& arguments,
                 const std::string& what, const fs::path& output, const fs::path& log,
                 std::vector<std::pair<std::string, std::string>> environment = {}) {
  std::vector<std::string> command{paths.recipeScript.string()};
  command.insert(command.end(), arguments.begin(), arguments.end());
  ChildStreams streams;
  streams.output = output.string();
  streams.errors = log.string();
  streams.environment = std::move(environment);
  const int status = runProgram("bash", command, streams);
  if (status != 0)
    return makeError(paths.recipeScript.stem().string() + ": " + what + " failed (exit " +
                     std::to_string(status) + "; see " + log.string() + ")");
  return Status::ok();
}

Status makeWorkload(const Paths& paths, const RunCostOptions& options) {
  const fs::path done = paths.workload / ".complete";
  if (fs::exists(done))
    return Status::ok();
  const fs::path partial = paths.workload.string() + ".part";
  std::error_code error;
  fs::remove_all(partial, error);
  fs::create_directories(partial);
  MLGO_TRY(runRecipe(paths, {"--benchmark-input", partial.string(), "--workload", options.workload},
                     "making the workload", "/dev/null", partial.string() + ".log"));
  fs::remove_all(paths.workload, error);
  fs::rename(partial, paths.workload);
  return writeFileBytes(done, "");
}

Status buildProgram(const Paths& paths, const RunCostOptions& options, bool force = false) {
  std::vector<std::string> arguments{"--benchmark", "--work-dir", paths.build.string()};
  if (force)
    arguments.push_back("--force");
  if (options.optLevel != "Oz")
    arguments.insert(arguments.end(), {"--opt-level", options.optLevel});
  arguments.insert(arguments.end(), paths.launcherArguments.begin(), paths.launcherArguments.end());
  std::vector<std::pair<std::string, std::string>> environment = paths.environment;
  environment.emplace_back("MLGO_JOBS", "2");
  return runRecipe(paths, arguments, "building the benchmark", "/dev/null",
                   paths.build.string() + ".log", environment);
}

// The benchmark's programs (bench-* in the build's top directory) and their bytes.
Expected<std::map<std::string, std::string>> programsOf(const fs::path& objects) {
  std::map<std::string, std::string> programs;
  std::error_code error;
  for (const fs::directory_entry& file : fs::directory_iterator(objects, error))
    if (file.is_regular_file() && file.path().filename().string().starts_with("bench-")) {
      MLGO_ASSIGN_OR_RETURN(programs[file.path().filename().string()], readFileBytes(file.path()));
    }
  if (programs.empty())
    return makeError(objects.string() + ": no benchmark program (bench-*)");
  return programs;
}

// --verify-builds: a build the cache would serve is made again from scratch
// in the same place, and its programs must be the cached ones byte for byte.
Status verifiedBuild(const Paths& paths, const RunCostOptions& options) {
  const fs::path objects = paths.build / "build";
  if (!fs::exists(paths.build / "benchmark.stamp"))
    return buildProgram(paths, options); // nothing cached: nothing to verify
  MLGO_ASSIGN_OR_RETURN(auto cached, programsOf(objects));
  MLGO_TRY(buildProgram(paths, options, /*force=*/true));
  MLGO_ASSIGN_OR_RETURN(auto rebuilt, programsOf(objects));
  if (cached != rebuilt)
    return makeError(paths.recipeScript.stem().string() + ": the cached build of " +
                     paths.build.string() +
                     " differs from the same build made again (a stale cache, or a build that is "
                     "not reproducible)");
  return Status::ok();
}

// One run of the benchmark in a fresh copy of the workload; MLGO_BENCH_EXEC
// set to `exec` (empty: natively). The output is what it printed; `seconds`
// the run's wall time (the recipe script's start included, not the copy).
Expected<std::string> runOnce(const Paths& paths, const std::string& exec, double& seconds) {
  std::error_code error;
  fs::remove_all(paths.run, error);
  fs::create_directories(paths.run.parent_path());
  fs::copy(paths.workload, paths.run, fs::copy_options::recursive, error);
  if (error)
    return makeError("copying the workload " + paths.workload.string() + ": " + error.message());
  const fs::path output = paths.run.string() + ".out";
  const auto start = std::chrono::steady_clock::now();
  MLGO_TRY(runRecipe(
      paths, {"--benchmark-run", paths.run.string(), "--work-dir", paths.build.string()},
      "running the benchmark", output, paths.run.string() + ".log", {{"MLGO_BENCH_EXEC", exec}}));
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return readFileBytes(output);
}

struct CachegrindRun {
  std::string output;
  CachegrindCounts counts; // every process's, summed
  size_t programs = 0;
};

// One run under cachegrind, each process writing its own counts.
Expected<CachegrindRun> runUnderCachegrind(const Paths& paths) {
  const fs::path counts = paths.run.string() + ".cachegrind";
  std::error_code error;
  fs::remove_all(counts, error);
  fs::create_directories(counts);
  std::string exec;
  for (const std::string& word : cachegrindArguments((counts / "cg.%p").string()))
    exec += (exec.empty() ? "" : " ") + word;
  CachegrindRun run;
  double seconds = 0;
  MLGO_ASSIGN_OR_RETURN(run.output, runOnce(paths, exec, seconds));
  for (const fs::directory_entry& file : fs::directory_iterator(counts)) {
    MLGO_ASSIGN_OR_RETURN(CachegrindCounts one, readCachegrindFile(file.path()));
    run.counts += one;
    ++run.programs;
  }
  if (run.programs == 0)
    return makeError(paths.recipeScript.stem().string() +
                     ": the benchmark ran no program under cachegrind");
  return run;
}

// Runs of one work root one at a time: they share the run directory.
class RunLock {
public:
  explicit RunLock(const fs::path& file)
      : fd_(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0)
      ::flock(fd_, LOCK_EX);
  }
  ~RunLock() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

private:
  int fd_;
};

} // namespace

Expected<RunCost> measureRunCost(const std::string& recipe, const DeployedPolicies& policies,
                                 const RunCostOptions& options) {
  MLGO_TRY(options.validate());
  MLGO_ASSIGN_OR_RETURN(Paths paths, planPaths(recipe, policies, options));
  fs::create_directories(options.workRoot / "builds");
  fs::create_directories(options.workRoot / "workloads");
  auto say = [&](const std::string& what) {
    if (options.verbose)
      std::fprintf(stderr, "run-cost: %s (%s): %s\n", recipe.c_str(), policies.describe().c_str(),
                   what.c_str());
  };
  say("building in " + paths.build.string());
  MLGO_TRY(options.verifyBuilds ? verifiedBuild(paths, options) : buildProgram(paths, options));
  MLGO_TRY(makeWorkload(paths, options));

  fs::create_directories(options.workRoot / "runs");
  const RunLock lock(options.workRoot / "runs" / ".lock");
  RunCost result;
  result.recipe = recipe;
  result.build = paths.build / "build";
  if (options.cachegrind) {
    double smallest = 0, largest = 0;
    for (size_t run = 0; run < options.cachegrindRuns; ++run) {
      say("running under cachegrind");
      MLGO_ASSIGN_OR_RETURN(CachegrindRun counted, runUnderCachegrind(paths));
      const double cost = cycleEstimate(counted.counts);
      if (run == 0) {
        result.output = counted.output;
        result.counts = counted.counts;
        result.programs = counted.programs;
        result.cost = smallest = largest = cost;
      } else if (counted.output != result.output) {
        return makeError(recipe + ": the benchmark printed something else under cachegrind run " +
                         std::to_string(run + 1) + " (not deterministic?)");
      }
      smallest = std::min(smallest, cost);
      largest = std::max(largest, cost);
    }
    result.costSpread = smallest > 0 ? (largest - smallest) / smallest : 0;
  }
  std::vector<double> seconds;
  for (size_t run = 0; run < options.wallRuns; ++run) {
    say("timed run " + std::to_string(run + 1) + " of " + std::to_string(options.wallRuns));
    double elapsed = 0;
    MLGO_ASSIGN_OR_RETURN(std::string output, runOnce(paths, "", elapsed));
    seconds.push_back(elapsed);
    if (!options.cachegrind && run == 0)
      result.output = output;
    else if (output != result.output)
      return makeError(recipe + ": the benchmark printed something else in timed run " +
                       std::to_string(run + 1) + " (not deterministic?); see " +
                       paths.run.string() + ".out");
  }
  result.wall = summariseWallTimes(std::move(seconds));
  return result;
}

std::pair<std::string, std::string> programRecipeAndLevel(const std::string& program,
                                                          const std::string& level) {
  const size_t dash = program.rfind("-O");
  if (dash != std::string::npos && dash + 3 == program.size())
    return {program.substr(0, dash), program.substr(dash + 1)};
  return {program, level};
}

} // namespace mlgo::deploy
