// mlgo-cc / mlgo-c++: runs clang-22 with the policy plugin, as a compiler
// (CC=mlgo-cc) or as a compiler launcher (CMAKE_C_COMPILER_LAUNCHER=mlgo-cc,
// then the compiler comes first). Every argument that is not the launcher's
// own (--mlgo-…) reaches clang untouched; the launcher adds
// -fpass-plugin=libmlgo-inliner.so to commands that optimise sources,
// -Wl,--load-pass-plugin=… to LTO links, and exports MLGO_POLICY.
#pragma once

#include "mlgo/deploy/CompilerCommand.h"
#include "mlgo/support/Expected.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlgo::deploy {

// Reads an environment variable (null: unset); a parameter so tests need
// not change the process's environment.
using EnvironmentLookup = std::function<const char*(const char*)>;

struct LauncherOptions {
  // --mlgo-policy=FILE; default $MLGO_POLICY, else the nearest mlgo-policy.json
  // in the working directory or a parent.
  std::optional<std::string> policy;
  // --mlgo-pipeline-policy=FILE (or MLGO_PIPELINE_POLICY): a pass-pipeline
  // policy (or a shipped one's name) applied beside the inliner's; with it,
  // the inliner policy is optional (none found: LLVM's heuristic).
  std::optional<std::string> pipelinePolicy;
  // A policy that answers one of clang's interactive channels through
  // mlgo-channel-cc (LLVM 22 has no plugin hook for the register
  // allocator's advisors), one per compile (channelDeployments()):
  //   --mlgo-eviction-policy=FILE (or MLGO_EVICTION_POLICY): eviction,
  //     --task regalloc-eviction;
  //   --mlgo-priority-policy=FILE (or MLGO_PRIORITY_POLICY): live-range
  //     priorities, --task regalloc-priority.
  // With it, the inliner policy is optional (none found: LLVM's heuristic,
  // and no plugin).
  struct ChannelPolicy {
    std::string variable; // the task's launcher variable (MLGO_EVICTION_POLICY)
    std::string option;   // its flag (--mlgo-eviction-policy), for messages
    std::string policy;   // a file or a shipped name
  };
  std::optional<ChannelPolicy> channelPolicy;
  // --mlgo-plugin=FILE; default $MLGO_INLINER_PLUGIN, else libmlgo-inliner.so
  // beside the launcher, in ../lib, or in the build tree it was built in.
  std::optional<std::string> plugin;
  // --mlgo-best-of (or MLGO_BEST_OF=1): compile each translation unit with the
  // policy and without, keep the object with the smaller .text. The compile
  // without is skipped where the plugin reports the policy's compile was
  // clang's own (-Oz's pipeline, the heuristic's every inlining decision:
  // policies/CompileReport.h), so the guard costs a compile only where the
  // policy changed something.
  bool bestOf = false;
  // --mlgo-best-of-verify (or MLGO_BEST_OF_VERIFY=1): with --mlgo-best-of,
  // compile without the policy even where the report says it would give
  // the same object, and fail if it does not (exactness as a mode).
  bool bestOfVerify = false;
  // --mlgo-best-of-set (or MLGO_BEST_OF_SET=1): with a pipeline policy that
  // chooses among a set of pipelines, compile each translation unit once per
  // alternative of the set and keep the object with the smallest .text (the
  // earliest alternative on a tie): the per-module best of the set, at the
  // price of one compile per alternative.
  bool bestOfSet = false;
  // --mlgo-ccache (or MLGO_CCACHE=1, or `ccache` right before the compiler):
  // run the compile through ccache with the policy's and the plugin's
  // contents in its hash (CCACHE_EXTRAFILES), so a changed policy rebuilds.
  bool ccache = false;
  // --mlgo-search[=BUDGET] (or MLGO_SEARCH=BUDGET): search each translation
  // unit's inlining decisions within BUDGET tried decisions, starting from
  // the policy's, and keep the smallest object (-Oz's among the candidates);
  // answers are cached (BuildSearch.h). Unset: off.
  std::optional<size_t> search;
  // --mlgo-search-verify: the search compiles every incrementally or replayed
  // answer in full as well and fails on a difference (slow; for checking).
  bool searchVerify = false;
  // --mlgo-cache-stats / --mlgo-cache-clear: the search cache, then exit.
  bool cacheStats = false;
  bool cacheClear = false;
  // --mlgo-passthrough: run commands the launcher cannot classify (the
  // frontend called directly, another driver mode, an unknown -x language)
  // as they are, without the policy, instead of failing them.
  bool passthrough = false;
  // --mlgo-verbose: print the command, and --best-of's choice per object.
  bool verbose = false;
  bool help = false; // --mlgo-help, or --help as the only argument
};

// The policies mlgo-cc deploys on a clang channel: each task's launcher
// variable and its flag. A new channel task is one line here (and its
// CompilerTask::launcherEnvironment).
struct ChannelDeployment {
  const char* variable;
  const char* option;
};
const std::vector<ChannelDeployment>& channelDeployments();

struct LaunchPlan {
  LauncherOptions options;
  std::string compiler;                   // the clang-22 executable, as given
  std::string compilerPath;               // that executable's canonical path
  std::vector<std::string> arguments;     // argv[1…] for it, plugin flags included
  std::vector<std::string> userArguments; // argv[1…] as given (no plugin flags)
  // userArguments with response files expanded: what the command does.
  std::vector<std::string> expandedArguments;
  CompilerCommand command;
  // The environment the compiler runs in beyond the launcher's own
  // (MLGO_POLICY; CCACHE_EXTRAFILES with --mlgo-ccache).
  std::vector<std::pair<std::string, std::string>> environment;
  // Printed before running (e.g. --best-of cannot apply to this command).
  std::vector<std::string> warnings;
  std::optional<std::string> policyFile;         // exported as MLGO_POLICY
  std::optional<std::string> pipelinePolicyFile; // exported as MLGO_PIPELINE_POLICY
  std::string plugin;                            // the pass plugin (when the policy applies)
  // The channel policy's file, and the program that answers its channel
  // (mlgo-channel-cc): the compile runs under it.
  std::optional<std::string> channelPolicyFile;
  std::string channelProgram;
  // --best-of applies (a single native object); otherwise the policy alone.
  bool bestOf = false;
  // --best-of-set applies (a single native object and a choice policy),
  // and the program that writes the alternatives' forced policy files
  // (mlgo-alternatives: parsing a policy loads libLLVM, the launcher must not).
  bool bestOfSet = false;
  std::string alternativesProgram;
  // --mlgo-search applies (a single native object): runSearchLaunch.
  bool search = false;
};

// The default of --mlgo-search's budget: decisions tried per translation unit.
inline constexpr size_t kDefaultSearchBudget = 12;

// The program that runs --mlgo-search (it links the evaluator, which the
// launcher must not load for every compile): $MLGO_BUILD_SEARCH, else
// mlgo-build-search beside the launcher, else the one in the build tree.
Expected<std::string> locateSearchProgram(const std::string& launcherPath,
                                          const EnvironmentLookup& environment);

// `program`: how the launcher was called (argv[0]); a name ending in "++"
// runs clang++ when no compiler is given. `launcherPath`: the launcher's own
// executable (to find the plugin beside it). `parentProgram`: the executable
// of the process that started the launcher (to notice ccache in front of it).
Expected<LaunchPlan> planLaunch(const std::string& program, const std::string& launcherPath,
                                const std::vector<std::string>& arguments,
                                const EnvironmentLookup& environment,
                                const std::string& parentProgram = "");

// The executable of this process's parent ("" when it cannot be read).
std::string parentExecutable();

std::string launcherHelp(const std::string& program);

// Runs the plan: replaces this process by the compiler (or ccache), or for
// --best-of compiles twice and keeps the smaller object (a source read from
// standard input is kept in a temporary file and given to both compiles).
// Returns the exit status.
int runLaunch(const LaunchPlan& plan);

} // namespace mlgo::deploy
