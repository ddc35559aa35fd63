#include "mlgo/deploy/Launcher.h"

#include "mlgo/deploy/BitcodeInputs.h"
#include "mlgo/deploy/ResponseFiles.h"
#include "mlgo/policies/PolicyLocation.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <regex>
#include <unistd.h>

namespace mlgo::deploy {

namespace fs = std::filesystem;

const std::vector<ChannelDeployment>& channelDeployments() {
  static const std::vector<ChannelDeployment> channels{
      {policies::kEvictionPolicyEnvironment, "--mlgo-eviction-policy"},
      {policies::kPriorityPolicyEnvironment, "--mlgo-priority-policy"}};
  return channels;
}

namespace {

constexpr std::string_view kPluginEnvironment = "MLGO_INLINER_PLUGIN";
constexpr std::string_view kPluginFile = "libmlgo-inliner.so";

// A compiler's name: clang, clang++, clang-22, gcc, cc, c++, x86_64-linux-gnu-gcc-12, …
bool looksLikeCompiler(const std::string& argument) {
  if (argument.empty() || argument[0] == '-')
    return false;
  static const std::regex name(R"((.*-)?(clang|clang\+\+|gcc|g\+\+|cc|c\+\+)(-[0-9.]+)?)");
  return std::regex_match(fs::path(argument).filename().string(), name);
}

// `program` as exec would find it (PATH search for a bare name).
std::optional<fs::path> resolveExecutable(const std::string& program,
                                          const EnvironmentLookup& environment) {
  std::error_code error;
  if (program.find('/') != std::string::npos) {
    fs::path resolved = fs::canonical(program, error);
    return error ? std::nullopt : std::optional<fs::path>(resolved);
  }
  const char* path = environment("PATH");
  std::string directories = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= directories.size()) {
    size_t end = directories.find(':', start);
    if (end == std::string::npos)
      end = directories.size();
    fs::path candidate = fs::path(directories.substr(start, end - start)) / program;
    if (::access(candidate.c_str(), X_OK) == 0)
      return fs::canonical(candidate, error);
    start = end + 1;
  }
  return std::nullopt;
}

// The plugin is built against this LLVM's libLLVM: only its clang loads it.
// Returns the compiler's executable (canonical).
Expected<fs::path> checkCompiler(const std::string& compiler,
                                 const EnvironmentLookup& environment) {
  std::optional<fs::path> resolved = resolveExecutable(compiler, environment);
  if (!resolved)
    return makeError(compiler + ": compiler not found");
  std::error_code error;
  fs::path llvmTools = fs::canonical(MLGO_LLVM_TOOLS_DIR, error);
  if (!error && resolved->parent_path() == llvmTools &&
      resolved->filename().string().starts_with("clang"))
    return *resolved;
  return makeError(compiler + " (" + resolved->string() + ") is not clang " + MLGO_LLVM_VERSION +
                   ", the compiler " + std::string(kPluginFile) + " is built for; use " +
                   (llvmTools / "clang").string() + " or clang++");
}

Expected<std::string> locatePlugin(const LauncherOptions& options, const std::string& launcherPath,
                                   const EnvironmentLookup& environment) {
  std::error_code error;
  if (options.plugin || environment(kPluginEnvironment.data())) {
    std::string plugin = options.plugin ? *options.plugin : environment(kPluginEnvironment.data());
    if (!fs::is_regular_file(plugin, error))
      return makeError((options.plugin ? "--mlgo-plugin=" : std::string(kPluginEnvironment) + "=") +
                       plugin + ": no such file");
    return fs::absolute(plugin).string();
  }
  fs::path launcherDirectory = fs::path(launcherPath).parent_path();
  for (const fs::path& candidate :
       {launcherDirectory / kPluginFile, launcherDirectory / ".." / "lib" / kPluginFile,
        fs::path(MLGO_DEFAULT_PLUGIN)})
    if (fs::is_regular_file(candidate, error))
      return fs::weakly_canonical(candidate, error).string();
  return makeError(std::string(kPluginFile) + " not found beside " + launcherPath + " nor at " +
                   MLGO_DEFAULT_PLUGIN + "; set " + std::string(kPluginEnvironment));
}

Expected<std::string> locatePolicy(const LauncherOptions& options,
                                   const EnvironmentLookup& environment) {
  std::error_code error;
  if (options.policy) {
    Expected<fs::path> file = policies::policyFileFor(*options.policy);
    if (!file)
      return makeError("--mlgo-policy=" + *options.policy + ": " + file.error().message);
    return fs::absolute(*file).string();
  }
  Expected<fs::path> file = policies::locatePolicyFile(environment(policies::kPolicyEnvironment),
                                                       fs::current_path(error));
  if (!file)
    return file.error();
  return fs::absolute(*file).string();
}

// An on/off environment switch: unset, "" or "0" off, "1" on; anything else
// is an error (MLGO_BEST_OF=yes must not silently mean "off").
Expected<bool> environmentSwitch(const EnvironmentLookup& environment, const char* name) {
  const char* value = environment(name);
  if (!value || !*value || std::string_view(value) == "0")
    return false;
  if (std::string_view(value) == "1")
    return true;
  return makeError(std::string(name) + "=" + value + ": expected 1 (on) or 0 (off)");
}

// --mlgo-search=BUDGET's or MLGO_SEARCH's value: decisions tried per unit.
Expected<size_t> searchBudget(const std::string& text, const std::string& where) {
  if (text.empty() || text.size() > 6 || !std::all_of(text.begin(), text.end(), ::isdigit))
    return makeError(where + "=" + text +
                     ": expected a budget, the decisions tried per translation "
                     "unit (e.g. 16)");
  return static_cast<size_t>(std::stoul(text));
}

// The channel deployment whose flag `argument` is (--mlgo-eviction-policy=…).
const ChannelDeployment* channelOption(const std::string& argument) {
  for (const ChannelDeployment& channel : channelDeployments())
    if (argument.starts_with(std::string(channel.option) + "="))
      return &channel;
  return nullptr;
}

// One channel is answered per compile: a second channel policy is an error
// naming both (the same one again, a flag over its variable, replaces it).
Status setChannelPolicy(LauncherOptions& options, const ChannelDeployment& channel,
                        std::string policy, const std::string& from) {
  if (options.channelPolicy && options.channelPolicy->variable != channel.variable)
    return makeError(from + " and " + options.channelPolicy->option + " (or " +
                     options.channelPolicy->variable +
                     "): mlgo-channel-cc answers one of clang's channels per compile; give one");
  options.channelPolicy =
      LauncherOptions::ChannelPolicy{channel.variable, channel.option, std::move(policy)};
  return Status::ok();
}

// Takes the launcher's own --mlgo-… options out of the arguments.
Expected<LauncherOptions> takeLauncherOptions(std::vector<std::string>& arguments,
                                              const EnvironmentLookup& environment) {
  LauncherOptions options;
  for (auto [name, field] : {std::pair{"MLGO_BEST_OF", &LauncherOptions::bestOf},
                             std::pair{"MLGO_BEST_OF_VERIFY", &LauncherOptions::bestOfVerify},
                             std::pair{"MLGO_BEST_OF_SET", &LauncherOptions::bestOfSet},
                             std::pair{"MLGO_CCACHE", &LauncherOptions::ccache}}) {
    Expected<bool> on = environmentSwitch(environment, name);
    if (!on)
      return on.error();
    options.*field = *on;
  }
  if (const char* search = environment("MLGO_SEARCH"); search && *search) {
    Expected<size_t> budget = searchBudget(search, "MLGO_SEARCH");
    if (!budget)
      return budget.error();
    if (*budget > 0)
      options.search = *budget;
  }
  if (Expected<bool> fallback =
          policies::policyFallbackRequested(environment(policies::kFallbackEnvironment));
      !fallback)
    return fallback.error();
  if (const char* pipeline = environment(policies::kPipelinePolicyEnvironment);
      pipeline && *pipeline)
    options.pipelinePolicy = pipeline;
  for (const ChannelDeployment& channel : channelDeployments())
    if (const char* policy = environment(channel.variable); policy && *policy)
      MLGO_TRY(setChannelPolicy(options, channel, policy, channel.variable));
  std::vector<std::string> rest;
  for (const std::string& a : arguments) {
    if (!a.starts_with("--mlgo-")) {
      rest.push_back(a);
      continue;
    }
    if (a.starts_with("--mlgo-policy="))
      options.policy = a.substr(a.find('=') + 1);
    else if (a.starts_with("--mlgo-pipeline-policy="))
      options.pipelinePolicy = a.substr(a.find('=') + 1);
    else if (const ChannelDeployment* channel = channelOption(a))
      MLGO_TRY(setChannelPolicy(options, *channel, a.substr(a.find('=') + 1), channel->option));
    else if (a.starts_with("--mlgo-plugin="))
      options.plugin = a.substr(a.find('=') + 1);
    else if (a == "--mlgo-best-of")
      options.bestOf = true;
    else if (a == "--mlgo-best-of-verify")
      options.bestOfVerify = true;
    else if (a == "--mlgo-best-of-set")
      options.bestOfSet = true;
    else if (a == "--mlgo-ccache")
      options.ccache = true;
    else if (a == "--mlgo-search")
      options.search = kDefaultSearchBudget;
    else if (a.starts_with("--mlgo-search=")) {
      Expected<size_t> budget = searchBudget(a.substr(a.find('=') + 1), "--mlgo-search");
      if (!budget)
        return budget.error();
      options.search = *budget;
    } else if (a == "--mlgo-search-verify")
      options.searchVerify = true;
    else if (a == "--mlgo-cache-stats")
      options.cacheStats = true;
    else if (a == "--mlgo-cache-clear")
      options.cacheClear = true;
    else if (a == "--mlgo-passthrough")
      options.passthrough = true;
    else if (a == "--mlgo-verbose")
      options.verbose = true;
    else if (a == "--mlgo-help")
      options.help = true;
    else
      return makeError("unknown launcher option " + a + " (see --mlgo-help)");
  }
  options.help |= rest.size() == 1 && rest[0] == "--help";
  if (options.search && *options.search == 0)
    options.search.reset();
  arguments = std::move(rest);
  return options;
}

bool isCcache(const std::string& program) {
  return fs::path(program).filename().string().starts_with("ccache");
}

// CCACHE_EXTRAFILES' entries (':'-separated), canonical where they exist.
std::vector<std::string> ccacheExtraFiles(const EnvironmentLookup& environment) {
  std::vector<std::string> files;
  const char* value = environment("CCACHE_EXTRAFILES");
  std::string list = value ? value : "";
  for (size_t start = 0; start < list.size();) {
    size_t end = std::min(list.find(':', start), list.size());
    std::error_code error;
    std::string file = list.substr(start, end - start);
    fs::path canonical = fs::weakly_canonical(file, error);
    files.push_back(error ? file : canonical.string());
    start = end + 1;
  }
  return files;
}

// ccache in front of the launcher hashes the launcher's command line, not the
// policy it reads: it would return an object built with an older policy.
// Allowed only when the policy and the plugin are in ccache's hash.
Status checkNotBehindCcache(const std::string& parentProgram, const LaunchPlan& plan,
                            const std::string& plugin, const EnvironmentLookup& environment) {
  if (!isCcache(parentProgram) || plan.options.ccache)
    return Status::ok();
  std::vector<std::string> hashed = ccacheExtraFiles(environment);
  auto isHashed = [&](const std::string& file) {
    std::error_code error;
    std::string canonical = fs::weakly_canonical(file, error).string();
    return std::find(hashed.begin(), hashed.end(), canonical) != hashed.end();
  };
  std::vector<std::string> needed;
  for (const std::optional<std::string>& file : {plan.policyFile, plan.pipelinePolicyFile})
    if (file)
      needed.push_back(*file);
  needed.push_back(plugin);
  std::string files;
  bool all = true;
  for (const std::string& file : needed) {
    files += (files.empty() ? "" : ":") + file;
    all = all && isHashed(file);
  }
  if (all)
    return Status::ok();
  return makeError("ccache runs this launcher and hashes its command line, not the policy's "
                   "content, so after " +
                   needed.front() +
                   " changes it would return objects built with the old policy. Put ccache "
                   "behind the launcher instead (mlgo-cc --mlgo-ccache …; CMake: "
                   "CMAKE_C_COMPILER_LAUNCHER=\"mlgo-cc;--mlgo-ccache\"), or add these files to "
                   "ccache's hash: CCACHE_EXTRAFILES=" +
                   files);
}

// The compiler: given first (launcher mode, optionally after `ccache`),
// else $MLGO_CLANG, else clang-22's clang or clang++ by the launcher's name.
void takeCompiler(const std::string& program, LaunchPlan& plan,
                  const EnvironmentLookup& environment) {
  std::vector<std::string>& arguments = plan.userArguments;
  if (arguments.size() >= 2 && isCcache(arguments.front()) && looksLikeCompiler(arguments[1])) {
    plan.options.ccache = true;
    arguments.erase(arguments.begin());
  }
  if (!arguments.empty() && looksLikeCompiler(arguments.front())) {
    plan.compiler = arguments.front();
    arguments.erase(arguments.begin());
  } else if (const char* clang = environment("MLGO_CLANG")) {
    plan.compiler = clang;
  } else {
    bool cxx = program.size() >= 2 && program.substr(program.size() - 2) == "++";
    plan.compiler = (fs::path(MLGO_LLVM_TOOLS_DIR) / (cxx ? "clang++" : "clang")).string();
  }
}

} // namespace

std::string parentExecutable() {
  std::error_code error;
  return fs::read_symlink("/proc/" + std::to_string(::getppid()) + "/exe", error).string();
}

// A program the launcher hands a compile to (it must not load the
// evaluator's libraries itself): $VARIABLE, else NAME beside the launcher,
// else the one in the build tree it was built in.
Expected<std::string> locateHelperProgram(const std::string& name, const char* variable,
                                          const char* built, const std::string& option,
                                          const std::string& launcherPath,
                                          const EnvironmentLookup& environment) {
  std::error_code error;
  if (const char* program = environment(variable); program && *program) {
    if (!fs::is_regular_file(program, error))
      return makeError(std::string(variable) + "=" + program + ": no such file");
    return std::string(program);
  }
  for (const fs::path& candidate : {fs::path(launcherPath).parent_path() / name, fs::path(built)})
    if (fs::is_regular_file(candidate, error))
      return candidate.string();
  return makeError(name + " (which runs " + option + ") not found beside " + launcherPath +
                   "; set " + variable);
}

// A channel policy (--mlgo-eviction-policy, --mlgo-priority-policy) on a
// compile: the policy's file and the program that runs the compile
// answering its channel. Not with the options that run the compiler their
// own way.
Status planChannel(LaunchPlan& plan, const std::string& launcherPath,
                   const EnvironmentLookup& environment) {
  const LauncherOptions::ChannelPolicy& channel = *plan.options.channelPolicy;
  for (const auto& [on, option] : {std::pair{plan.options.bestOf, "--mlgo-best-of"},
                                   std::pair{plan.options.bestOfSet, "--mlgo-best-of-set"},
                                   std::pair{plan.options.search.has_value(), "--mlgo-search"},
                                   std::pair{plan.options.ccache, "--mlgo-ccache"}})
    if (on)
      return makeError(channel.option + " cannot be combined with " + option + " yet");
  Expected<fs::path> file = policies::policyFileFor(channel.policy);
  if (!file)
    return makeError(channel.option + "=" + channel.policy + ": " + file.error().message);
  plan.channelPolicyFile = fs::absolute(*file).string();
  Expected<std::string> program =
      locateHelperProgram("mlgo-channel-cc", "MLGO_CHANNEL_CC", MLGO_DEFAULT_CHANNEL_CC,
                          channel.option, launcherPath, environment);
  if (!program)
    return program.error();
  plan.channelProgram = program.take();
  return Status::ok();
}

Expected<LaunchPlan> planLaunch(const std::string& program, const std::string& launcherPath,
                                const std::vector<std::string>& arguments,
                                const EnvironmentLookup& environment,
                                const std::string& parentProgram) {
  LaunchPlan plan;
  plan.userArguments = arguments;
  Expected<LauncherOptions> options = takeLauncherOptions(plan.userArguments, environment);
  if (!options)
    return options.error();
  plan.options = options.take();
  if (plan.options.help || plan.options.cacheStats || plan.options.cacheClear)
    return plan;

  takeCompiler(program, plan, environment);
  Expected<fs::path> compilerPath = checkCompiler(plan.compiler, environment);
  if (!compilerPath)
    return compilerPath.error();
  plan.compilerPath = compilerPath->string();

  Expected<std::vector<std::string>> expanded = expandResponseFiles(plan.userArguments);
  if (!expanded)
    return expanded.error();
  plan.expandedArguments = expanded.take();
  plan.command = parseCompilerCommand(plan.expandedArguments);
  plan.arguments = plan.userArguments;
  if (!plan.command.unclassified.empty()) {
    if (plan.options.passthrough)
      return plan; // as asked: as it is, without the policy
    return makeError("cannot tell what this command does (" + plan.command.unclassified +
                     "), so the policy might not reach the code it optimises; give "
                     "--mlgo-passthrough to run such commands without the policy");
  }
  bool compiles = plan.command.optimisesSources();
  std::optional<std::string> bitcodeInput =
      plan.command.links() ? firstBitcodeInput(plan.command) : std::nullopt;
  bool linksLto = plan.command.linksWithLto() || bitcodeInput;
  if (!compiles && !linksLto)
    return plan; // a plain link, preprocessing, --version: nothing to decide
  if (linksLto && !plan.command.usesLld)
    return makeError("an LTO link" +
                     (bitcodeInput ? " (" + *bitcodeInput + " is LLVM bitcode)" : "") +
                     " runs the inliner in the linker, and only lld loads the policy plugin: add "
                     "-fuse-ld=lld");
  if (plan.options.channelPolicy && compiles)
    if (Status channel = planChannel(plan, launcherPath, environment); !channel)
      return channel.error();
  Expected<std::string> policy = locatePolicy(plan.options, environment);
  if (plan.channelPolicyFile && !linksLto && !policy && !plan.options.policy &&
      !plan.options.pipelinePolicy)
    return plan; // the channel policy alone: no plugin
  Expected<std::string> plugin = locatePlugin(plan.options, launcherPath, environment);
  if (!plugin)
    return plugin.error();
  if (plan.options.pipelinePolicy) {
    Expected<fs::path> file = policies::policyFileFor(*plan.options.pipelinePolicy);
    if (!file)
      return makeError("--mlgo-pipeline-policy=" + *plan.options.pipelinePolicy + ": " +
                       file.error().message);
    plan.pipelinePolicyFile = fs::absolute(*file).string();
    if (plan.options.search)
      return makeError("--mlgo-search searches the inliner's decisions under -Oz's pipeline; it "
                       "cannot be combined with --mlgo-pipeline-policy yet");
  } else if (plan.options.bestOfSet) {
    return makeError("--mlgo-best-of-set compiles every alternative of a pipeline policy's "
                     "choice: give one with --mlgo-pipeline-policy");
  }
  if (plan.options.bestOfVerify && !plan.options.bestOf)
    return makeError("--mlgo-best-of-verify checks --mlgo-best-of's skipped compiles: give "
                     "--mlgo-best-of with it");
  if (plan.options.bestOfSet && plan.options.bestOf)
    return makeError("--mlgo-best-of-set and --mlgo-best-of: give one (the set's first "
                     "alternative is usually -Oz already)");
  // With a pipeline or channel policy, the inliner's is optional: none
  // found, LLVM's heuristic inlines (one given by name must still exist).
  if (!policy && ((!plan.pipelinePolicyFile && !plan.options.channelPolicy) || plan.options.policy))
    return policy.error();
  if (policy)
    plan.policyFile = policy.take();
  plan.plugin = *plugin;
  if (Status ccache = checkNotBehindCcache(parentProgram, plan, *plugin, environment); !ccache)
    return ccache.error();
  std::string hashed; // the files ccache must hash beside the source
  if (plan.policyFile) {
    plan.environment.emplace_back(policies::kPolicyEnvironment, *plan.policyFile);
    hashed += *plan.policyFile + ":";
  }
  if (plan.pipelinePolicyFile) {
    plan.environment.emplace_back(policies::kPipelinePolicyEnvironment, *plan.pipelinePolicyFile);
    hashed += *plan.pipelinePolicyFile + ":";
  }
  if (plan.options.ccache) {
    const char* extra = environment("CCACHE_EXTRAFILES");
    std::string files = extra && *extra ? std::string(extra) + ":" : "";
    plan.environment.emplace_back("CCACHE_EXTRAFILES", files + hashed + *plugin);
  }
  if (compiles)
    plan.arguments.push_back("-fpass-plugin=" + *plugin);
  if (linksLto)
    plan.arguments.push_back("-Wl,--load-pass-plugin=" + *plugin);
  if (linksLto && plan.options.channelPolicy)
    plan.warnings.push_back(plan.options.channelPolicy->option +
                            " reaches clang's compile steps only: the code this LTO link "
                            "generates is allocated by LLVM's own advisor");
  plan.search = plan.options.search && plan.command.singleNativeObject() &&
                !plan.command.saveTemps && !plan.options.ccache;
  if (plan.options.search && compiles && !plan.search)
    plan.warnings.push_back("--mlgo-search searches one object of one source (" +
                            (plan.options.ccache
                                 ? std::string("--mlgo-ccache: ccache caches the object instead")
                             : plan.command.saveTemps ? std::string("-save-temps")
                                                      : plan.command.whyNotSingleNativeObject()) +
                            "): compiled with the policy alone");
  plan.bestOf = plan.options.bestOf && !plan.search && plan.command.singleNativeObject();
  plan.bestOfSet = plan.options.bestOfSet && compiles && plan.command.singleNativeObject();
  if (plan.bestOfSet) {
    Expected<std::string> alternatives =
        locateHelperProgram("mlgo-alternatives", "MLGO_ALTERNATIVES", MLGO_DEFAULT_ALTERNATIVES,
                            "--mlgo-best-of-set", launcherPath, environment);
    if (!alternatives)
      return alternatives.error();
    plan.alternativesProgram = alternatives.take();
  }
  if (plan.options.bestOfSet && compiles && !plan.bestOfSet)
    plan.warnings.push_back("--mlgo-best-of-set compares one object of one source (" +
                            plan.command.whyNotSingleNativeObject() +
                            "): compiled with the policy's choice alone");
  if (plan.options.bestOf && compiles && !plan.bestOf)
    plan.warnings.push_back("--mlgo-best-of compares one object of one source (" +
                            plan.command.whyNotSingleNativeObject() +
                            "): compiled with the policy alone");
  return plan;
}

Expected<std::string> locateSearchProgram(const std::string& launcherPath,
                                          const EnvironmentLookup& environment) {
  return locateHelperProgram("mlgo-build-search", "MLGO_BUILD_SEARCH", MLGO_DEFAULT_BUILD_SEARCH,
                             "--mlgo-search", launcherPath, environment);
}

std::string launcherHelp(const std::string& program) {
  std::string name = fs::path(program).filename().string();
  return "Usage: " + name +
         " [--mlgo-OPTION…] [COMPILER] CLANG-ARGUMENTS…\n"
         "\n"
         "Runs clang-22 with libmlgo-inliner.so, so that a trained policy makes every\n"
         "inlining decision. Use it as CC/CXX (" +
         name +
         " ARGS…: runs " MLGO_LLVM_TOOLS_DIR
         "/clang or clang++) or as CMAKE_<LANG>_COMPILER_LAUNCHER (" +
         name +
         " COMPILER ARGS…).\n"
         "Every argument but the launcher's own reaches clang untouched.\n"
         "\n"
         "Options (also accepted anywhere among clang's arguments):\n"
         "  --mlgo-policy=FILE  policy file, or the name of a shipped one (configs/policies:\n"
         "                      --mlgo-policy=inlining-oz); default: $MLGO_POLICY, else the\n"
         "                      nearest mlgo-policy.json in the working directory or a parent\n"
         "  --mlgo-pipeline-policy=FILE  a pass-pipeline policy (mlgo-eval --task\n"
         "                      pass-pipeline) applied beside the inliner's; default:\n"
         "                      $MLGO_PIPELINE_POLICY; with it, no inliner policy found means\n"
         "                      LLVM's own inlining heuristic\n"
         "  --mlgo-eviction-policy=FILE  a register-allocation eviction policy\n"
         "                      (mlgo-eval --task regalloc-eviction): each compile runs under\n"
         "                      mlgo-channel-cc, which answers clang's interactive channel with\n"
         "                      it; default: $MLGO_EVICTION_POLICY; with it, no inliner policy\n"
         "                      found means LLVM's own inlining heuristic\n"
         "  --mlgo-priority-policy=FILE  a live-range priority policy (--task\n"
         "                      regalloc-priority), answered the same way; default:\n"
         "                      $MLGO_PRIORITY_POLICY (one channel policy per compile)\n"
         "  --mlgo-plugin=FILE  the pass plugin (default: $MLGO_INLINER_PLUGIN, else\n"
         "                      libmlgo-inliner.so beside " +
         name +
         ", in ../lib, or\n"
         "                      " MLGO_DEFAULT_PLUGIN ")\n"
         "  --mlgo-best-of      compile each translation unit with the policy and without,\n"
         "                      keep the object with the smaller .text (no object is larger\n"
         "                      than without the policy); also MLGO_BEST_OF=1. The compile\n"
         "                      without is skipped where the plugin reports that the\n"
         "                      policy changed nothing (-Oz's pipeline, every inlining\n"
         "                      decision the heuristic's). A C++ unit's other compiles\n"
         "                      start from its bitcode, not its source (the same code;\n"
         "                      not through ccache). Only for -c of one source to a\n"
         "                      native object; other commands run with the policy alone\n"
         "  --mlgo-best-of-verify\n"
         "                      with --mlgo-best-of: compile without the policy where it\n"
         "                      would be skipped too, and fail if its object differs, and\n"
         "                      a C++ unit's compile from the source too, failing if its\n"
         "                      code differs from the bitcode's (slow; for checking); also\n"
         "                      MLGO_BEST_OF_VERIFY=1\n"
         "  --mlgo-best-of-set  with a --mlgo-pipeline-policy that chooses among a set of\n"
         "                      pipelines: compile each translation unit once per pipeline\n"
         "                      of the set and keep the object with the smallest .text (the\n"
         "                      earliest on a tie); as many compiles as the set has\n"
         "                      pipelines; also MLGO_BEST_OF_SET=1\n"
         "  --mlgo-ccache       run the compile through ccache with the policy's and the\n"
         "                      plugin's contents in its hash, so that a changed policy\n"
         "                      always rebuilds (also MLGO_CCACHE=1, or `ccache` given\n"
         "                      right before the compiler). ccache in front of the\n"
         "                      launcher is refused unless CCACHE_EXTRAFILES holds both\n"
         "  --mlgo-search[=BUDGET]\n"
         "                      search each translation unit's inlining decisions: start\n"
         "                      from the smallest of the policy's and its callee-consistent\n"
         "                      twin's (each discardable callee declined at all of its\n"
         "                      -Oz-inlined calls or none; MLGO_SEARCH_CONSISTENT_START=0:\n"
         "                      the policy's only), try BUDGET single flips (default " +
         std::to_string(kDefaultSearchBudget) +
         ";\n"
         "                      where the policy overrules -Oz and is least sure first), keep\n"
         "                      the smallest object; -Oz's own object is a candidate, so no\n"
         "                      object is larger than -Oz's. Also MLGO_SEARCH=BUDGET. Answers\n"
         "                      are cached ($MLGO_SEARCH_CACHE, else ~/.cache/mlgo-es/search;\n"
         "                      MLGO_SEARCH_CACHE_SIZE, default 64M): an unchanged unit costs\n"
         "                      one compile, an edited one starts from its previous choice\n"
         "  --mlgo-search-verify\n"
         "                      check the search's incremental and replayed answers by full\n"
         "                      compiles (slow)\n"
         "  --mlgo-cache-stats  print the search cache's size and hits, then exit\n"
         "  --mlgo-cache-clear  empty the search cache, then exit\n"
         "  --mlgo-passthrough  run commands the launcher cannot classify (-cc1, another\n"
         "                      --driver-mode, an unknown -x language) without the policy\n"
         "                      instead of failing them\n"
         "  --mlgo-verbose      print the clang command (and --best-of's choice)\n"
         "  --mlgo-help         this help\n"
         "\n"
         "Response files (@FILE) are read as clang reads them, and a source from standard\n"
         "input (-x c -) gets the policy like any other. A command that optimises code and\n"
         "cannot get the policy fails with the reason; it never compiles without it.\n"
         "LTO links (-flto, or bitcode among the inputs) need -fuse-ld=lld: the launcher\n"
         "adds -Wl,--load-pass-plugin=… so that the link-time inliner uses the policy too.\n"
         "Environment: MLGO_CLANG (the compiler in CC mode), MLGO_POLICY_FALLBACK=heuristic\n"
         "(compile with LLVM's heuristic and a warning when the policy cannot be used).\n";
}

} // namespace mlgo::deploy
