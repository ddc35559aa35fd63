// libmlgo-inliner.so: a pass plugin for stock clang-22 (and lld-22's LTO)
// that answers every inlining decision with a trained policy, through the
// advisor the in-process evaluator uses (PolicyAdvisor), so a build makes
// the decisions the evaluator measured.
//
//   clang-22 -Oz -fpass-plugin=libmlgo-inliner.so …      (MLGO_POLICY=policy.json)
//   clang-22 -flto=thin -fuse-ld=lld -Wl,--load-pass-plugin=libmlgo-inliner.so …
//
// clang consults a registered PluginInlineAdvisorAnalysis before any advisor
// mode. Under mlgo-cc --mlgo-search the launcher asks the plugin to look
// the unit up in the search cache instead (MLGO_SEARCH_COMMAND_KEY): at the
// pipeline's start the module is hashed, and the cached choice (or on a
// miss -Oz's own decisions, with the module's bitcode written for the
// search) makes the decisions. The policy is loaded once per process, at
// the first decision (an inliner policy alone: loadsLazily); a missing, unreadable or
// mismatched policy is a compile error naming the file (or, opted in with
// MLGO_POLICY_FALLBACK=heuristic, a warning and LLVM's own heuristic).
//
// A pass-pipeline policy (MLGO_PIPELINE_POLICY, or MLGO_POLICY of kind
// "pipeline") changes the -Oz pipeline as the evaluator's pass-pipeline
// task does (PipelineHooks.h); with no inliner policy beside it the inliner
// is LLVM's heuristic. A pipeline that cannot be read or parsed is a
// compile error naming the file; there is no fallback for it.
#include "PipelineHooks.h"
#include "PolicyAdvisor.h"
#include "mlgo/evaluators/CompilerTask.h"

#include "mlgo/policies/CompileReport.h"
#include "mlgo/policies/PassPipeline.h"
#include "mlgo/policies/PolicyFile.h"
#include "mlgo/policies/PolicyLocation.h"
#include "mlgo/policies/SearchCache.h"
#include "mlgo/support/Files.h"

#include <llvm-c/Core.h>
#include <llvm/Analysis/InlineAdvisor.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Plugins/PassPlugin.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace {

using mlgo::inprocess::AdvisorSession;
namespace policies = mlgo::policies;

struct ProcessPolicy {
  std::shared_ptr<const policies::Policy> policy;
  std::string file;
  std::string problem; // why there is no policy
  bool fallback = false;
};

// The loaded policies live until the process ends and are never freed:
// clang exits right after the compile, and freeing a pipeline policy with
// thousands of examples cost every compile about 2 M instructions (clang's
// own -disable-free skips freeing its AST for the same reason).
template <typename Load> const ProcessPolicy& kept(Load load) {
  return *new ProcessPolicy(load());
}

// The pipeline policy of MLGO_PIPELINE_POLICY, if set.
const ProcessPolicy& pipelinePolicy() {
  static const ProcessPolicy& loaded = kept([] {
    ProcessPolicy result;
    const char* file = std::getenv(policies::kPipelinePolicyEnvironment);
    if (!file || !*file)
      return result;
    result.file = file;
    mlgo::Expected<std::unique_ptr<policies::Policy>> policy = policies::loadPolicy(file);
    if (!policy)
      result.problem = policy.error().message;
    else if (!dynamic_cast<const policies::PipelinePolicy*>(policy->get()))
      result.problem = std::string(policies::kPipelinePolicyEnvironment) + "=" + file +
                       ": not a pipeline policy (" + (*policy)->describe() + ")";
    else
      result.policy = policy.take();
    return result;
  });
  return loaded;
}

// Only a pipeline policy given: the inliner is the one it carries, else
// LLVM's own.
bool pipelineOnly() {
  return !std::getenv(policies::kPolicyEnvironment) && pipelinePolicy().policy;
}

// The inliner policy's file (MLGO_POLICY, else the nearest mlgo-policy.json)
// and the fallback, known without reading the file.
const ProcessPolicy& policySource() {
  static const ProcessPolicy source = [] {
    ProcessPolicy result;
    mlgo::Expected<bool> fallback =
        policies::policyFallbackRequested(std::getenv(policies::kFallbackEnvironment));
    if (!fallback) {
      result.problem = fallback.error().message;
      return result;
    }
    result.fallback = *fallback;
    std::error_code ignored;
    mlgo::Expected<std::filesystem::path> file = policies::locatePolicyFile(
        std::getenv(policies::kPolicyEnvironment), std::filesystem::current_path(ignored));
    if (!file)
      result.problem = file.error().message;
    else
      result.file = file->string();
    return result;
  }();
  return source;
}

const ProcessPolicy& processPolicy() {
  static const ProcessPolicy& loaded = kept([] {
    ProcessPolicy result;
    if (pipelineOnly()) {
      const ProcessPolicy& pipeline = pipelinePolicy();
      result.policy = static_cast<const policies::PipelinePolicy&>(*pipeline.policy).inliner();
      result.file = pipeline.file + " (its inliner)";
      return result;
    }
    result = policySource();
    if (!result.problem.empty())
      return result;
    mlgo::Expected<std::unique_ptr<policies::Policy>> policy = policies::loadPolicy(result.file);
    if (!policy)
      result.problem = policy.error().message;
    else
      result.policy = policy.take();
    return result;
  });
  return loaded;
}

// The top-level "kind" of a policy file, read from its first bytes: found
// only before any nested object (the project writes "format", "version" and
// "kind" first), else none.
std::optional<std::string> peekPolicyKind(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const size_t open = head.find('{');
  const size_t key = head.find("\"kind\"");
  if (open == std::string::npos || key == std::string::npos ||
      head.find_first_of("{[", open + 1) < key)
    return std::nullopt;
  const size_t colon = head.find_first_not_of(" \t\r\n", key + 6);
  const size_t quote = colon == std::string::npos || head[colon] != ':'
                           ? std::string::npos
                           : head.find_first_not_of(" \t\r\n", colon + 1);
  if (quote == std::string::npos || head[quote] != '"')
    return std::nullopt;
  const size_t end = head.find('"', quote + 1);
  if (end == std::string::npos)
    return std::nullopt;
  return head.substr(quote + 1, end - quote - 1);
}

// Whether the inliner policy can be parsed at a compile's first decision
// instead of when the plugin loads: no pipeline policy beside it, and its
// file is not one (a pipeline policy changes the pipeline being built). A
// configure probe or a file without calls to defined functions then never
// parses the policy (11.6 M instructions for a [40,40,20] network).
bool loadsLazily() {
  static const bool lazy = [] {
    if (const char* pipeline = std::getenv(policies::kPipelinePolicyEnvironment);
        pipeline && *pipeline)
      return false;
    const ProcessPolicy& source = policySource();
    if (!source.problem.empty())
      return false;
    std::optional<std::string> kind = peekPolicyKind(source.file);
    return kind && *kind != "pipeline";
  }();
  return lazy;
}

// The inliner policy of a loaded policy: itself, or a pipeline policy's
// inliner (null: none).
const policies::Policy* inlinerOf(const ProcessPolicy& loaded) {
  if (const auto* pipeline = dynamic_cast<const policies::PipelinePolicy*>(loaded.policy.get()))
    return pipeline->inliner().get();
  return loaded.policy.get();
}

// The search cache's answer for this compile's unit (--mlgo-search).
struct SearchLookup {
  bool active = false; // the launcher asked for a lookup
  std::unique_ptr<policies::Policy> policy;
  std::string problem;
};

SearchLookup& searchLookup() {
  static SearchLookup lookup;
  return lookup;
}

void warn(const std::string& message) {
  llvm::errs() << "mlgo-cc: warning: " << message << "\n";
}

// The module as bitcode, use-list order kept: what the launcher compiles
// again from (the build-time search, --mlgo-best-of's other compiles) gives
// the source compile's code.
std::string moduleBitcode(const llvm::Module& module) {
  std::string bitcode;
  llvm::raw_string_ostream stream(bitcode);
  llvm::WriteBitcodeToFile(module, stream, /*ShouldPreserveUseListOrder=*/true);
  stream.flush();
  return bitcode;
}

// The unit's decisions from the cache: the entry's flip set, or -Oz's own
// (an entry that chose -Oz, or a miss: then the module's bitcode as it is
// now, before any pass, goes to the launcher for the search).
void lookUpUnit(llvm::Module& module) {
  SearchLookup& lookup = searchLookup();
  if (lookup.active)
    return; // one module per compile
  lookup.active = true;
  const std::string bitcode = moduleBitcode(module);
  const std::string key =
      policies::searchCacheKey(std::getenv(policies::kSearchCommandKeyEnvironment), bitcode);
  const std::string defaultFeature =
      mlgo::evaluators::CompilerTask::inliningForSize().defaultDecisionFeature;
  auto getenv = [](const char* name) { return std::getenv(name); };
  mlgo::Expected<std::filesystem::path> directory = policies::SearchCache::defaultDirectory(getenv);
  mlgo::Expected<uint64_t> limit = policies::SearchCache::defaultLimit(getenv);
  std::optional<policies::SearchCache> cache;
  if (directory && limit)
    cache.emplace(*directory, *limit);
  policies::CacheLookup hit;
  if (cache)
    hit = cache->find(key);
  if (hit.entry && !hit.entry->policy.empty()) {
    mlgo::Expected<std::unique_ptr<policies::Policy>> policy =
        policies::policyFromJson(hit.entry->policy, "search cache entry " + key);
    if (policy)
      lookup.policy = policy.take();
    else
      hit = {std::nullopt, "search cache entry " + key + ": refused: " + policy.error().message};
  }
  if (!hit.warning.empty()) {
    warn(hit.warning + "; searching again");
    cache->count("refused");
  }
  std::string result = (hit.entry ? "hit " : "miss ") + key + "\n";
  const bool adopting = std::getenv(policies::kSearchAdoptEnvironment) != nullptr;
  if (hit.entry) {
    if (!adopting)
      cache->count("hit");
  } else {
    if (cache && !adopting)
      cache->count("miss");
    if (const char* file = std::getenv(policies::kSearchBitcodeEnvironment))
      if (mlgo::Status written = mlgo::writeFileBytes(file, bitcode); !written)
        lookup.problem = written.error().message;
  }
  if (!lookup.policy)
    lookup.policy = policies::makeHeuristicEchoPolicy(defaultFeature);
  if (const char* file = std::getenv(policies::kSearchResultEnvironment))
    if (mlgo::Status written = mlgo::writeFileBytes(file, result); !written)
      lookup.problem = written.error().message;
}

struct SearchLookupPass : llvm::PassInfoMixin<SearchLookupPass> {
  llvm::PreservedAnalyses run(llvm::Module& module, llvm::ModuleAnalysisManager&) {
    lookUpUnit(module);
    return llvm::PreservedAnalyses::all();
  }
};

// The module analyses of the pipeline being built on this thread: the
// advisor factory is a plain function pointer given only the function
// analyses. lld runs ThinLTO backends on parallel threads, each with its
// own pipeline, hence per thread.
thread_local llvm::ModuleAnalysisManager* moduleAnalyses = nullptr;
// The pipeline policy's run in the pipeline being built on this thread (null:
// no pipeline policy): its choice may give a module LLVM's heuristic.
thread_local const mlgo::inprocess::PipelineRun* pipelineRun = nullptr;

void reportError(llvm::Module& module, const std::string& message) {
  module.getContext().diagnose(llvm::DiagnosticInfoGeneric("mlgo-inliner: " + message));
}

// An error, or with the fallback opted in a warning (once per process, on
// stderr itself: -w must not hide it, -Werror must not turn it into an error);
// the caller then inlines with LLVM's own heuristic.
void reportProblem(llvm::Module& module, const std::string& problem) {
  const bool fallback = !pipelineOnly() && policySource().fallback;
  if (!fallback) {
    reportError(module, problem);
  } else {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      llvm::errs() << "mlgo-inliner: warning: " << problem << "; using LLVM's inlining heuristic ("
                   << policies::kFallbackEnvironment << "=heuristic)\n";
    });
  }
}

llvm::InlineAdvisor* refuse(llvm::Module& module, llvm::FunctionAnalysisManager& functions,
                            const llvm::InlineParams& params, llvm::InlineContext context,
                            const std::string& problem) {
  reportProblem(module, problem);
  return new llvm::DefaultInlineAdvisor(module, functions, params, context);
}

std::string mismatchMessage(const std::string& source, const std::string& mismatch) {
  return source + " does not fit LLVM " LLVM_VERSION_STRING "'s inliner: " + mismatch;
}

// What this compile changed, for mlgo-cc --mlgo-best-of's report
// (MLGO_COMPILE_REPORT, policies/CompileReport.h).
std::atomic<bool> inlinerOverruled{false};
std::atomic<bool> inlinerUnknown{false};

bool reportsCompile() {
  static const bool on = [] {
    const char* file = std::getenv(policies::kCompileReportEnvironment);
    return file && *file;
  }();
  return on;
}

// When the optimisation pipeline ends (every inlining decision made): one
// line, "plain" only for clang's own pipeline and the heuristic's decisions.
// A write that fails leaves no proof, so the launcher compiles without the
// policy as well: nothing to report to the user.
struct ReportCompilePass : llvm::PassInfoMixin<ReportCompilePass> {
  const mlgo::inprocess::PipelineRun* pipeline = nullptr; // null: -Oz's own
  llvm::PreservedAnalyses run(llvm::Module&, llvm::ModuleAnalysisManager&) {
    std::string changes;
    auto add = [&](const std::string& change) {
      changes += (changes.empty() ? "" : ", ") + change;
    };
    if (pipeline && pipeline->choice && !pipeline->choiceMade)
      add("pipeline not chosen");
    else if (pipeline && !pipeline->pipeline().neutral())
      add("pipeline " + pipeline->pipeline().describe());
    if (inlinerOverruled)
      add("inliner overruled");
    if (inlinerUnknown)
      add("inliner's heuristic unknown");
    const std::string line =
        changes.empty() ? std::string(policies::kReportPlain) : "changed: " + changes;
    std::ofstream(std::getenv(policies::kCompileReportEnvironment),
                  std::ios::app | std::ios::binary)
        << line << '\n';
    return llvm::PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

// The unit's module before any pass, for mlgo-cc's other compiles of it
// (MLGO_UNIT_BITCODE).
struct WriteUnitBitcodePass : llvm::PassInfoMixin<WriteUnitBitcodePass> {
  llvm::PreservedAnalyses run(llvm::Module& module, llvm::ModuleAnalysisManager&) {
    static std::atomic<bool> written{false};
    if (written.exchange(true))
      return llvm::PreservedAnalyses::all(); // one module per compile
    const char* file = std::getenv(policies::kUnitBitcodeEnvironment);
    if (!mlgo::writeFileBytes(file, moduleBitcode(module))) {
      std::error_code ignored;
      std::filesystem::remove(file, ignored); // half a module must not be compiled
    }
    return llvm::PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

// The advisor of a compile whose policy is parsed at its first decision
// (loadsLazily): a policy that cannot be read or does not fit is reported
// then, and the heuristic's decisions answer.
// A session for one module's advisor, told which feature carries the
// heuristic's decision.
std::unique_ptr<AdvisorSession> newSession() {
  static const std::string defaultFeature =
      mlgo::evaluators::CompilerTask::inliningForSize().defaultDecisionFeature;
  auto session = std::make_unique<AdvisorSession>();
  session->defaultDecisionFeature = defaultFeature;
  if (reportsCompile())
    session->onOverrule = [](bool known) { (known ? inlinerOverruled : inlinerUnknown) = true; };
  return session;
}

llvm::InlineAdvisor* createLazyAdvisor(llvm::Module& module, const llvm::InlineParams& params) {
  std::unique_ptr<AdvisorSession> session = newSession();
  session->resolvePolicy = [](std::string& problem) -> const policies::Policy* {
    const ProcessPolicy& loaded = processPolicy();
    if (!loaded.policy)
      problem = loaded.problem;
    return loaded.policy ? inlinerOf(loaded) : nullptr;
  };
  session->onProblem = [&module](const std::string& problem) {
    const ProcessPolicy& loaded = processPolicy();
    reportProblem(module,
                  loaded.policy ? mismatchMessage("policy " + loaded.file, problem) : problem);
  };
  return mlgo::inprocess::createPolicyAdvisor(module, *moduleAnalyses, params, std::move(session));
}

llvm::InlineAdvisor* createAdvisor(llvm::Module& module, llvm::FunctionAnalysisManager& functions,
                                   llvm::InlineParams params, llvm::InlineContext context) {
  const SearchLookup& lookup = searchLookup();
  if (lookup.active && !lookup.problem.empty()) {
    reportError(module, "--mlgo-search: " + lookup.problem);
    return new llvm::DefaultInlineAdvisor(module, functions, params, context);
  }
  if (!lookup.active && loadsLazily() && moduleAnalyses)
    return createLazyAdvisor(module, params);
  static const ProcessPolicy none;
  const ProcessPolicy& loaded = lookup.active ? none : processPolicy();
  if (!lookup.active && !loaded.policy)
    return refuse(module, functions, params, context, loaded.problem);
  // A choice whose alternative for this module keeps LLVM's heuristic (only
  // a pipeline policy's own inliner can be switched off so; chosenPipeline
  // refuses an inliner policy beside one that carries an inliner).
  if (!lookup.active && pipelineRun && !pipelineRun->inlinerPolicyDecides())
    return new llvm::DefaultInlineAdvisor(module, functions, params, context);
  if (!moduleAnalyses)
    return refuse(module, functions, params, context,
                  "no module analyses registered on this thread (a pipeline not built by "
                  "this LLVM's PassBuilder?)");
  std::unique_ptr<AdvisorSession> session = newSession();
  session->policy = lookup.active ? lookup.policy.get() : inlinerOf(loaded);
  AdvisorSession& advisorSession = *session;
  std::unique_ptr<llvm::InlineAdvisor> advisor(
      mlgo::inprocess::createPolicyAdvisor(module, *moduleAnalyses, params, std::move(session)));
  if (advisorSession.mismatch)
    return refuse(module, functions, params, context,
                  mismatchMessage(lookup.active ? std::string("the search cache's choice")
                                                : "policy " + loaded.file,
                                  *advisorSession.mismatch));
  return advisor.release();
}

// Reports a problem found before any module existed, on the first module.
struct ProblemPass : llvm::PassInfoMixin<ProblemPass> {
  std::string problem;
  llvm::PreservedAnalyses run(llvm::Module& module, llvm::ModuleAnalysisManager&) {
    reportError(module, problem);
    return llvm::PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

// The pipeline policy, if any (either variable), or a problem.
const policies::PipelinePolicy* chosenPipeline(std::string& problem) {
  if (loadsLazily())
    return nullptr; // an inliner policy alone
  const ProcessPolicy& separate = pipelinePolicy();
  const ProcessPolicy& main = processPolicy();
  const auto* asMain = dynamic_cast<const policies::PipelinePolicy*>(main.policy.get());
  if (!separate.problem.empty()) {
    problem = separate.problem;
    return nullptr;
  }
  const auto* chosen = separate.policy
                           ? static_cast<const policies::PipelinePolicy*>(separate.policy.get())
                           : asMain;
  if (separate.policy && asMain) {
    problem = "two pipeline policies: " + main.file + " and " + separate.file;
    return nullptr;
  }
  if (separate.policy && std::getenv(policies::kPolicyEnvironment) &&
      static_cast<const policies::PipelinePolicy&>(*separate.policy).inliner()) {
    problem = "two inliner policies: " + main.file + " and the one " + separate.file + " carries";
    return nullptr;
  }
  if (!chosen)
    return nullptr;
  static const mlgo::Status texts = mlgo::inprocess::checkPolicyTexts(*chosen);
  if (!texts) {
    problem = (separate.policy ? separate.file : main.file) + ": " + texts.error().message;
    return nullptr;
  }
  return chosen;
}

// The pipeline's changes on this pass builder; each pipeline built keeps its
// own run (lld builds one per ThinLTO backend thread).
void registerPipeline(llvm::PassBuilder& builder) {
  pipelineRun = nullptr;
  std::string problem;
  const policies::PipelinePolicy* pipeline = chosenPipeline(problem);
  if (!problem.empty()) {
    builder.registerPipelineStartEPCallback(
        [problem](llvm::ModulePassManager& passes, llvm::OptimizationLevel) {
          passes.addPass(ProblemPass{{}, problem});
        });
    return;
  }
  if (!pipeline)
    return;
  static thread_local std::vector<std::unique_ptr<mlgo::inprocess::PipelineRun>> runs;
  runs.push_back(std::make_unique<mlgo::inprocess::PipelineRun>(*pipeline));
  mlgo::inprocess::applyPipeline(builder, *runs.back());
  pipelineRun = runs.back().get();
}

// Whether the inliner is ours: not when the only policy is a pipeline.
bool advisesInlining() {
  if (loadsLazily())
    return true;
  const ProcessPolicy& main = processPolicy();
  if (dynamic_cast<const policies::PipelinePolicy*>(main.policy.get()) ||
      (!main.policy && main.problem.empty() && pipelinePolicy().policy))
    return inlinerOf(main) != nullptr;
  return main.policy || !main.problem.empty() || std::getenv(policies::kPolicyEnvironment) ||
         !pipelinePolicy().policy;
}

void registerCallbacks(llvm::PassBuilder& builder) {
  // Before the pipeline policy's own start: the module as the frontend made it.
  if (const char* file = std::getenv(policies::kUnitBitcodeEnvironment); file && *file)
    builder.registerPipelineStartEPCallback(
        [](llvm::ModulePassManager& passes, llvm::OptimizationLevel) {
          passes.addPass(WriteUnitBitcodePass());
        });
  registerPipeline(builder);
  if (reportsCompile())
    builder.registerOptimizerLastEPCallback([run = pipelineRun](llvm::ModulePassManager& passes,
                                                                llvm::OptimizationLevel,
                                                                llvm::ThinOrFullLTOPhase) {
      passes.addPass(ReportCompilePass{{}, run});
    });
  if (std::getenv(policies::kSearchCommandKeyEnvironment))
    builder.registerPipelineStartEPCallback(
        [](llvm::ModulePassManager& passes, llvm::OptimizationLevel) {
          passes.addPass(SearchLookupPass());
        });
  if (!advisesInlining() && !std::getenv(policies::kSearchCommandKeyEnvironment))
    return;
  builder.registerAnalysisRegistrationCallback([](llvm::ModuleAnalysisManager& analyses) {
    analyses.registerPass([] { return llvm::PluginInlineAdvisorAnalysis(&createAdvisor); });
    moduleAnalyses = &analyses;
  });
}

} // namespace

extern "C" __attribute__((visibility("default"))) LLVM_ATTRIBUTE_WEAK llvm::PassPluginLibraryInfo
llvmGetPassPluginInfo() {
  // The same soname is loaded by every 22.1.x; another LLVM cannot load this
  // file at all (its libLLVM.so.22.1 is missing or clashes), but say so if one does.
  unsigned major = 0, minor = 0, patch = 0;
  LLVMGetVersion(&major, &minor, &patch);
  if (major != LLVM_VERSION_MAJOR || minor != LLVM_VERSION_MINOR) {
    llvm::errs() << "mlgo-inliner: built for LLVM " LLVM_VERSION_STRING " but loaded by LLVM "
                 << major << "." << minor << "." << patch << "; use clang-" << LLVM_VERSION_MAJOR
                 << "\n";
    return {0, "mlgo-inliner", "mismatched LLVM", nullptr};
  }
  return {LLVM_PLUGIN_API_VERSION, "mlgo-inliner", "mlgo-es (LLVM " LLVM_VERSION_STRING ")",
          registerCallbacks};
}
