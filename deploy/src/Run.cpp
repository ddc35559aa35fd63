// Running the plan: exec for the plain case (the build system then sees
// clang's own exit status and signals), two children for --best-of.
#include "mlgo/deploy/Launcher.h"

#include "mlgo/deploy/Cc1Command.h"
#include "mlgo/deploy/ElfText.h"
#include "mlgo/deploy/ForcedAlternatives.h"
#include "mlgo/deploy/Process.h"
#include "mlgo/deploy/ResponseFiles.h"
#include "mlgo/policies/CompileReport.h"
#include "mlgo/policies/PolicyLocation.h"
#include "mlgo/support/Files.h"
#include "mlgo/support/Sha256.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <optional>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace mlgo::deploy {

namespace {

std::vector<char*> argvOf(const std::string& program, const std::vector<std::string>& arguments) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& a : arguments)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  return argv;
}

// Files of --best-of's own (the second object, its response file, the saved
// standard input), removed when the launcher ends or is interrupted. Fixed
// storage: the signal handler may not allocate.
// --best-of-set: an object and a response file per alternative, and without
// a cache the forced files, their count and their directory (last).
// With the unit's bitcode, that file and a verified alternative's object
// from the source.
constexpr size_t kPendingFiles = 4 + 4 * kMaxAlternatives + 2;
char pendingFiles[kPendingFiles][4096] = {};

// Files first, then what was a directory (rmdir once its files are gone).
void removePendingFiles() {
  for (char* file : pendingFiles)
    if (file[0] && (::unlink(file) == 0 || errno == ENOENT))
      file[0] = 0;
  for (char* directory : pendingFiles)
    if (directory[0]) {
      ::rmdir(directory);
      directory[0] = 0;
    }
}

void removePendingFilesAndReraise(int signal) {
  removePendingFiles();
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void addPendingFile(const std::string& file) {
  for (char* slot : pendingFiles)
    if (!slot[0]) {
      std::snprintf(slot, sizeof pendingFiles[0], "%s", file.c_str());
      return;
    }
}

// The compile goes through ccache with --mlgo-ccache: ccache COMPILER ARGS….
struct Invocation {
  std::string program;
  std::vector<std::string> arguments;
};

Invocation invocationOf(const LaunchPlan& plan, const std::vector<std::string>& arguments) {
  if (plan.channelPolicyFile) { // the compile answers the allocator's channel
    std::vector<std::string> channel{"--through", plan.options.channelPolicy->variable,
                                     "--policy",  *plan.channelPolicyFile,
                                     "--",        plan.compiler};
    channel.insert(channel.end(), arguments.begin(), arguments.end());
    return {plan.channelProgram, channel};
  }
  if (!plan.options.ccache)
    return {plan.compiler, arguments};
  std::vector<std::string> withCompiler{plan.compiler};
  withCompiler.insert(withCompiler.end(), arguments.begin(), arguments.end());
  return {"ccache", withCompiler};
}

int run(const LaunchPlan& plan, const std::vector<std::string>& arguments, bool quiet,
        const std::string& input,
        const std::vector<std::pair<std::string, std::string>>& environment = {}) {
  Invocation invocation = invocationOf(plan, arguments);
  if (plan.options.verbose)
    printCommand(invocation.program, invocation.arguments, environment);
  ChildStreams streams;
  streams.input = input;
  streams.quiet = quiet;
  streams.environment = environment;
  return runProgram(invocation.program, invocation.arguments, streams);
}

// Standard input saved to a file, so that both compiles can read it.
Expected<std::string> saveStandardInput() {
  const char* directory = std::getenv("TMPDIR");
  std::string pattern =
      std::string(directory && *directory ? directory : "/tmp") + "/mlgo-cc-stdin-XXXXXX";
  int fd = ::mkstemp(pattern.data());
  if (fd < 0)
    return makeError(pattern + ": cannot create: " + std::strerror(errno));
  addPendingFile(pattern);
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n == 0)
      break;
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 || ::write(fd, buffer, size_t(n)) != n) {
      ::close(fd);
      return makeError("saving standard input to " + pattern + ": " + std::strerror(errno));
    }
  }
  if (::close(fd) != 0)
    return makeError("saving standard input to " + pattern + ": " + std::strerror(errno));
  return pattern;
}

// A second compile, writing only `object`, with `extra` flags (the
// plugin's, or none: plain). When the user's command came in response files, so
// does this one (it may be too long for one command line).
Expected<std::vector<std::string>>
plainCompileArguments(const LaunchPlan& plan, const std::string& object,
                      const std::vector<std::string>& extra = {}) {
  std::vector<std::string> arguments = withOnlyObjectOutput(plan.expandedArguments, object);
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  if (!usesResponseFiles(plan.userArguments))
    return arguments;
  std::string file = object + ".rsp";
  std::string text;
  for (const std::string& a : arguments)
    text += quoteGnuArgument(a) + "\n";
  addPendingFile(file);
  if (Status written = writeFileBytes(file, text); !written)
    return written.error();
  return std::vector<std::string>{"@" + file};
}

// The plan's environment for one alternative of --best-of-set: its policy
// file in place of the choice's (for the plugin, and for ccache's hash).
std::vector<std::pair<std::string, std::string>> alternativeEnvironment(const LaunchPlan& plan,
                                                                        const std::string& file) {
  std::vector<std::pair<std::string, std::string>> environment;
  for (auto [name, value] : plan.environment) {
    if (name == policies::kPipelinePolicyEnvironment)
      value = file;
    else if (name == "CCACHE_EXTRAFILES")
      if (size_t at = value.find(*plan.pipelinePolicyFile); at != std::string::npos)
        value.replace(at, plan.pipelinePolicyFile->size(), file);
    environment.emplace_back(name, value);
  }
  return environment;
}

// Where the forced files of a policy are kept between compiles:
// $XDG_CACHE_HOME/mlgo-es/alternatives, else $HOME/.cache/mlgo-es/alternatives.
std::optional<std::filesystem::path> alternativesCacheDirectory() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "mlgo-es" / "alternatives";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".cache" / "mlgo-es" / "alternatives";
  return std::nullopt;
}

// The forced files in a directory mlgo-alternatives wrote ("count" last,
// each file renamed into place whole, so that concurrent compiles never
// read half a file); none when it is not whole.
std::optional<std::vector<std::string>> forcedFilesIn(const std::filesystem::path& directory) {
  Expected<std::string> count = readFileBytes(forcedAlternativeCount(directory));
  if (!count)
    return std::nullopt;
  const size_t n = std::strtoul(count->c_str(), nullptr, 10);
  std::vector<std::string> files;
  for (size_t a = 0; a < n; ++a)
    files.push_back(forcedAlternativeFile(directory, a).string());
  const bool whole = n > 0 && n <= kMaxAlternatives &&
                     std::all_of(files.begin(), files.end(),
                                 [](const std::string& f) { return std::filesystem::exists(f); });
  return whole ? std::optional(files) : std::nullopt;
}

// One policy file per alternative of the choice: from the cache when an
// earlier compile had them written for this policy's contents, else written
// by mlgo-alternatives into the cache, or beside the object (removed
// afterwards) when there is none.
Expected<std::vector<std::string>> alternativePolicyFiles(const LaunchPlan& plan,
                                                          const std::string& object) {
  const std::string& file = *plan.pipelinePolicyFile;
  Expected<std::string> bytes = readFileBytes(file);
  if (!bytes)
    return makeError(file + ": " + bytes.error().message);
  const std::optional<std::filesystem::path> root = alternativesCacheDirectory();
  // The format of the forced files is part of the key: another version of
  // the launcher writes its own.
  const std::filesystem::path directory =
      root ? *root / sha256Hex("mlgo-es forced alternatives v1\n" + *bytes)
           : std::filesystem::path(object + ".mlgo-alternatives");
  if (root) {
    if (std::optional<std::vector<std::string>> cached = forcedFilesIn(directory))
      return *cached;
  } else { // every file it may write, then the directory: removed at the end
    for (size_t a = 0; a < kMaxAlternatives; ++a)
      addPendingFile(forcedAlternativeFile(directory, a).string());
    addPendingFile(forcedAlternativeCount(directory).string());
    addPendingFile(directory.string());
  }
  if (plan.options.verbose)
    printCommand(plan.alternativesProgram, {file, directory.string()});
  if (int status = runProgram(plan.alternativesProgram, {file, directory.string()}); status != 0)
    return makeError("--mlgo-best-of-set: " + plan.alternativesProgram + " " + file + " " +
                     directory.string() + " failed (exit status " + std::to_string(status) + ")");
  if (std::optional<std::vector<std::string>> written = forcedFilesIn(directory))
    return *written;
  return makeError("--mlgo-best-of-set: " + plan.alternativesProgram + " did not write " +
                   forcedAlternativeCount(directory).string());
}

// One way to compile the unit, for --best-of and --best-of-set.
struct Alternative {
  std::string name; // in --mlgo-verbose's line: "the policy", "-Oz", "alternative 2"
  // The command that writes the user's outputs: the first alternative's,
  // and a kept one's again under -save-temps (so that the saved .i/.bc/.s
  // are the kept object's; clang is deterministic).
  std::vector<std::string> arguments;
  // What an object-only compile adds to the user's command.
  std::vector<std::string> objectOnlyFlags;
  std::vector<std::pair<std::string, std::string>> environment; // beside the plan's
};

bool sameBytes(const std::string& a, const std::string& b) {
  Expected<std::string> x = readFileBytes(a), y = readFileBytes(b);
  return x && y && *x == *y;
}

// Whether the first compile's report (`report`, written by the plugin:
// policies/CompileReport.h) proves it was clang's own compile.
bool reportedPlain(const std::string& report) {
  if (report.empty())
    return false;
  Expected<std::string> text = readFileBytes(report);
  return text && policies::reportShowsPlainCompile(*text);
}

// Where the compiles after the first start: the source, or the unit's module
// as the first compile's plugin wrote it before any pass (C++ units: their
// frontend is about half of a compile; the backend compile from the module
// gives the source compile's code, checked by --mlgo-best-of-verify).
struct UnitBitcode {
  std::string file;              // empty: every compile from the source
  std::optional<Cc1Command> cc1; // the plain compile's frontend job, once asked for
};

// C++ units, and not where compiling from the module would change what the
// user gets: through ccache (whose cache of the source compile makes the
// rebuild cheap), the allocator's channel program, -save-temps (the kept
// alternative is compiled from its source again), -fembed-bitcode (the
// object embeds the frontend's module), response files (cc1's command would
// be as long).
bool othersFromBitcode(const LaunchPlan& plan) {
  const auto& arguments = plan.expandedArguments;
  return plan.command.cxxSource && !plan.options.ccache && !plan.channelPolicyFile &&
         !plan.command.saveTemps && !usesResponseFiles(plan.userArguments) &&
         std::none_of(arguments.begin(), arguments.end(),
                      [](const std::string& a) { return a.starts_with("-fembed-bitcode"); });
}

// One alternative after the first, to `other`: from the unit's module when
// the first compile wrote it (else, or if that fails, from the source).
// Returns the compile's status.
int compileOther(const LaunchPlan& plan, const Alternative& alternative, const std::string& other,
                 const std::string& input, UnitBitcode& unit) {
  if (!unit.file.empty() && !unit.cc1 && std::filesystem::exists(unit.file)) {
    Expected<std::vector<std::string>> query = plainCompileArguments(plan, other);
    Expected<Cc1Command> cc1 =
        query ? cc1CommandFor(plan.compiler, *query) : Expected<Cc1Command>(query.error());
    if (cc1) {
      unit.cc1 = cc1.take();
    } else { // asked once: every alternative from the source
      if (plan.options.verbose)
        std::cerr << "mlgo-cc: " << other << ": compiling from the source: " << cc1.error().message
                  << "\n";
      unit.file.clear();
    }
  }
  if (unit.cc1 && std::filesystem::exists(unit.file)) {
    std::vector<std::string> arguments = unit.cc1->backend(unit.file, other);
    arguments.insert(arguments.end(), alternative.objectOnlyFlags.begin(),
                     alternative.objectOnlyFlags.end());
    if (plan.options.verbose)
      printCommand(unit.cc1->compiler, arguments, alternative.environment);
    ChildStreams streams;
    streams.quiet = true;
    streams.environment = alternative.environment;
    if (runProgram(unit.cc1->compiler, arguments, streams) == 0)
      return 0;
    unit.file.clear(); // a module clang cannot compile: the sources from now on
  }
  Expected<std::vector<std::string>> arguments =
      plainCompileArguments(plan, other, alternative.objectOnlyFlags);
  return arguments ? run(plan, *arguments, /*quiet=*/true, input, alternative.environment) : 1;
}

// --mlgo-best-of-verify: `other`, compiled from the unit's module, has the
// code of the compile from the source. Returns that compile's object, or
// what differs.
Expected<std::string> sameCodeFromSource(const LaunchPlan& plan, const Alternative& alternative,
                                         const std::string& other, const std::string& input) {
  const std::string fromSource = other + ".source.o";
  addPendingFile(fromSource);
  UnitBitcode none;
  if (compileOther(plan, alternative, fromSource, input, none) != 0)
    return makeError(alternative.name + " did not compile from the source");
  Expected<std::string> a = textContents(other), b = textContents(fromSource);
  if (!a || !b)
    return a ? b.error() : a.error();
  if (*a != *b)
    return makeError(alternative.name + " compiled from the unit's bitcode has other code than " +
                     "from the source");
  return fromSource;
}

// Every alternative compiled, the object with the smallest .text kept (the
// earliest on a tie). The first writes the user's outputs (dependency files
// included); the others only an object of their own, quietly (their
// diagnostics would repeat the first's), and one that does not compile is
// passed over. Standard input is saved to a file every compile reads.
// With `report` (--best-of: the first alternative's compile report, whose
// second alternative is the plain compile), the second is skipped where the
// report proves the first was that compile; --mlgo-best-of-verify compiles
// it anyway and fails unless the objects are the same bytes. Where
// othersFromBitcode, the first compile writes the unit's module beside the
// object and the others start from it.
int runAlternatives(const LaunchPlan& plan, std::vector<Alternative> alternatives,
                    const std::string& report = "") {
  const std::string object = plan.command.objectPath();
  const std::string bitcode = othersFromBitcode(plan) ? object + ".mlgo-unit.bc" : "";
  std::string input;
  if (plan.command.readsStandardInput()) {
    Expected<std::string> saved = saveStandardInput();
    if (!saved) {
      std::cerr << "mlgo-cc: " << saved.error().message << "\n";
      removePendingFiles();
      return 1;
    }
    input = *saved;
  }
  // Stale ones from an interrupted compile prove nothing.
  for (const std::string& file : {report, bitcode})
    if (!file.empty()) {
      addPendingFile(file);
      ::unlink(file.c_str());
    }
  if (!bitcode.empty())
    alternatives.front().environment.emplace_back(policies::kUnitBitcodeEnvironment, bitcode);
  const Alternative& first = alternatives.front();
  int status = run(plan, first.arguments, /*quiet=*/false, input, first.environment);
  if (status != 0) {
    removePendingFiles();
    return status; // clang's diagnostics are out; nothing to compare
  }
  const bool plain = reportedPlain(report);
  std::vector<Expected<uint64_t>> sizes{textBytes(object)};
  size_t kept = 0;
  std::string keptObject = object;
  UnitBitcode unit{bitcode, std::nullopt};
  for (size_t a = 1; a < alternatives.size(); ++a) {
    if (plain && a == 1 && !plan.options.bestOfVerify) {
      sizes.push_back(makeError("skipped: the policy's compile was clang's own"));
      continue;
    }
    const std::string other = object + ".mlgo-alternative-" + std::to_string(a) + ".o";
    addPendingFile(other);
    sizes.push_back(makeError("did not compile"));
    if (compileOther(plan, alternatives[a], other, input, unit) == 0)
      sizes.back() = textBytes(other);
    // What the verify flag holds against the policy's object: the plain
    // compile from the source.
    std::string plainObject = other;
    if (plan.options.bestOfVerify && unit.cc1 && !unit.file.empty() && sizes.back()) {
      Expected<std::string> fromSource = sameCodeFromSource(plan, alternatives[a], other, input);
      if (!fromSource) {
        std::cerr << "mlgo-cc: --mlgo-best-of-verify: " << object << ": "
                  << fromSource.error().message << "\n";
        removePendingFiles();
        return 1;
      }
      plainObject = *fromSource;
    }
    if (plain && a == 1 && !sameBytes(object, plainObject)) {
      std::cerr << "mlgo-cc: --mlgo-best-of-verify: " << object
                << ": the plugin reported a compile of clang's own, but the object without the "
                   "policy differs\n";
      removePendingFiles();
      return 1;
    }
    if (sizes[0] && sizes.back() && *sizes.back() < *sizes[kept]) {
      kept = a;
      keptObject = other;
    }
  }
  int result = 0;
  std::error_code error;
  if (kept != 0 && plan.command.saveTemps)
    result = run(plan, alternatives[kept].arguments, /*quiet=*/false, input,
                 alternatives[kept].environment);
  else if (kept != 0)
    std::filesystem::rename(keptObject, object, error);
  removePendingFiles();
  if (plan.options.verbose) {
    std::cerr << "mlgo-cc: " << object << ": .text";
    for (size_t a = 0; a < alternatives.size(); ++a)
      std::cerr << (a ? ", " : " ") << alternatives[a].name << " "
                << (sizes[a] ? std::to_string(*sizes[a]) + " B" : sizes[a].error().message);
    std::cerr << ": kept " << alternatives[kept].name << "\n";
  }
  if (error) {
    std::cerr << "mlgo-cc: " << object << ": " << error.message() << "\n";
    return 1;
  }
  return result;
}

// --best-of: with the policy, and plain (the user's command as written).
int runBestOf(const LaunchPlan& plan) {
  const std::string report = plan.command.objectPath() + ".mlgo-report";
  return runAlternatives(
      plan,
      {{"the policy", plan.arguments, {}, {{policies::kCompileReportEnvironment, report}}},
       {"without", plan.userArguments, {}, {}}},
      report);
}

// --best-of-set: each alternative of the choice, its forced policy file in
// place of the choice's.
int runBestOfSet(const LaunchPlan& plan) {
  Expected<std::vector<std::string>> files =
      alternativePolicyFiles(plan, plan.command.objectPath());
  if (!files) {
    std::cerr << "mlgo-cc: " << files.error().message << "\n";
    removePendingFiles();
    return 1;
  }
  std::vector<Alternative> alternatives;
  for (size_t a = 0; a < files->size(); ++a)
    alternatives.push_back({"alternative " + std::to_string(a),
                            plan.arguments,
                            {"-fpass-plugin=" + plan.plugin},
                            alternativeEnvironment(plan, (*files)[a])});
  return runAlternatives(plan, alternatives);
}

} // namespace

void printCommand(const std::string& program, const std::vector<std::string>& arguments,
                  const std::vector<std::pair<std::string, std::string>>& environment) {
  std::cerr << "mlgo-cc:";
  for (const auto& [name, value] : environment)
    std::cerr << " " << name << "=" << value;
  std::cerr << " " << program;
  for (const std::string& a : arguments)
    std::cerr << " " << a;
  std::cerr << "\n";
}

int runProgram(const std::string& program, const std::vector<std::string>& arguments,
               const ChildStreams& streams) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!streams.input.empty())
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, streams.input.c_str(), O_RDONLY, 0);
  const int created = O_WRONLY | O_CREAT | O_TRUNC;
  if (streams.quiet || !streams.output.empty())
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO,
                                     streams.quiet ? "/dev/null" : streams.output.c_str(), created,
                                     0644);
  if (streams.quiet || !streams.errors.empty())
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO,
                                     streams.quiet ? "/dev/null" : streams.errors.c_str(), created,
                                     0644);
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    bool replaced = false;
    for (const auto& [name, value] : streams.environment)
      replaced |= entry.starts_with(name + "=");
    if (!replaced)
      environment.emplace_back(entry);
  }
  for (const auto& [name, value] : streams.environment)
    environment.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& e : environment)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> argv = argvOf(program, arguments);
  pid_t pid = -1;
  int error = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    std::cerr << "mlgo-cc: cannot run " << program << ": " << std::strerror(error) << "\n";
    return 127;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int runLaunch(const LaunchPlan& plan) {
  for (const auto& [name, value] : plan.environment)
    ::setenv(name.c_str(), value.c_str(), 1);
  for (const std::string& warning : plan.warnings)
    std::cerr << "mlgo-cc: warning: " << warning << "\n";
  if (plan.bestOf || plan.bestOfSet)
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) // their own files go with them
      std::signal(signal, removePendingFilesAndReraise);
  if (plan.bestOf)
    return runBestOf(plan);
  if (plan.bestOfSet)
    return runBestOfSet(plan);
  Invocation invocation = invocationOf(plan, plan.arguments);
  if (plan.options.verbose)
    printCommand(invocation.program, invocation.arguments);
  std::vector<char*> argv = argvOf(invocation.program, invocation.arguments);
  ::execvp(invocation.program.c_str(), argv.data());
  std::cerr << "mlgo-cc: cannot run " << invocation.program << ": " << std::strerror(errno) << "\n";
  return 127;
}

} // namespace mlgo::deploy
