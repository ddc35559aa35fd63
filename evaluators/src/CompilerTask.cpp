#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/evaluators/Scorer.h"
#include "mlgo/policies/PassPipeline.h"
#include "mlgo/policies/PolicyLocation.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace mlgo::evaluators {

double RelativeReward::operator()(double measured, double baseline) const {
  return 1.0 - (measured + delta) / (baseline + delta);
}

namespace {
constexpr MeasureTraits kMeasures[] = {
    {Measure::TextSize, "text-size", "size", ".text", "bytes", "%.0f", "smaller", "larger", true,
     InProcessRoute::None},
    {Measure::RegAllocScore, "regalloc-score", "score", "score", "score", "%.1f", "better", "worse",
     false, InProcessRoute::EvictionChannel},
    {Measure::IrInstructions, "ir-instructions", "IR instruction count", "IR instr.",
     "instructions", "%.0f", "fewer", "more", false, InProcessRoute::PassPipeline},
    {Measure::LinkedText, "text-linked", "linked size", ".text linked", "bytes", "%.0f", "smaller",
     "larger", true, InProcessRoute::None, /*ofPrograms=*/false, /*ofCodeBase=*/true},
    {Measure::RunCost, "run-cost", "run cost", "run cost", "cycles (estimated)", "%.0f", "cheaper",
     "costlier", false, InProcessRoute::None, /*ofPrograms=*/true},
};
} // namespace

const MeasureTraits& traitsOf(Measure measure) {
  for (const MeasureTraits& traits : kMeasures)
    if (traits.measure == measure)
      return traits;
  return kMeasures[0]; // unreachable: every enumerator has a row
}

std::string MeasureTraits::format(double value) const {
  char text[48];
  std::snprintf(text, sizeof text, valueFormat, value);
  return text;
}

std::string_view measureName(Measure measure) {
  return traitsOf(measure).name;
}

std::string alternatives(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

std::vector<std::string> measureNames() {
  std::vector<std::string> names;
  for (const MeasureTraits& traits : kMeasures)
    names.emplace_back(traits.name);
  return names;
}

Expected<Measure> parseMeasure(std::string_view name) {
  for (const MeasureTraits& traits : kMeasures)
    if (traits.name == name)
      return traits.measure;
  return makeError("unknown measure \"" + std::string(name) + "\" (" +
                   alternatives(measureNames()) + ")");
}

policies::MlpOptions CompilerTask::policyOptions(policies::MlpOptions base) const {
  base.candidateMask = candidateMask;
  if (!defaultDecisionFeature.empty()) {
    if (std::find(base.excludedFeatures.begin(), base.excludedFeatures.end(),
                  defaultDecisionFeature) == base.excludedFeatures.end())
      base.excludedFeatures.push_back(defaultDecisionFeature);
    base.residualFeature = defaultDecisionFeature;
  }
  return base;
}

std::vector<std::string>
CompilerTask::argumentsFor(const std::filesystem::path& channelBase) const {
  static constexpr std::string_view placeholder = "{channel}";
  std::vector<std::string> arguments = interactiveArguments;
  for (std::string& argument : arguments)
    for (size_t at = argument.find(placeholder); at != std::string::npos;
         at = argument.find(placeholder, at))
      argument.replace(at, placeholder.size(), channelBase.string());
  for (const std::string& option : llvmOptions) {
    arguments.push_back("-mllvm");
    arguments.push_back(option);
  }
  return arguments;
}

Status CompilerTask::useIr2VecVocabulary(const std::filesystem::path& vocabulary) {
  if (adviceName != inliningForSize().adviceName)
    return makeError("IR2Vec embeddings are features of the inliner, not of the " + name + " task");
  std::error_code error;
  if (!std::filesystem::is_regular_file(vocabulary, error))
    return makeError("IR2Vec vocabulary " + vocabulary.string() + " is not a file");
  const std::string path = std::filesystem::absolute(vocabulary).string();
  llvmOptions.push_back("-ml-inliner-ir2vec-vocab-file=" + path);
  llvmOptions.push_back("-ir2vec-vocab-path=" + path);
  return Status::ok();
}

CompilerTask CompilerTask::inliningForSize() {
  CompilerTask task;
  task.name = "inlining-size";
  task.summary = "the inliner, .text vs -Oz";
  task.interactiveArguments = {"-mllvm", "-enable-ml-inliner=release",
                               "-mllvm", "-inliner-interactive-channel-base={channel}",
                               "-mllvm", "-inliner-interactive-include-default"};
  task.adviceName = "inlining_decision";
  task.defaultDecisionFeature = "inlining_default";
  task.inProcess = InProcessRoute::InlineAdvisor;
  task.neutralAdvice = 0;
  task.launcherEnvironment = policies::kPolicyEnvironment;
  return task;
}

CompilerTask CompilerTask::regallocEviction() {
  CompilerTask task;
  task.name = "regalloc-eviction";
  task.summary = "the greedy register allocator's evictions, LLVM's RegAllocScore vs the "
                 "corpus's own -O2";
  task.interactiveArguments = {"-mllvm", "-regalloc-enable-advisor=release", "-mllvm",
                               "-regalloc-evict-interactive-channel-base={channel}"};
  task.adviceName = "index_to_evict";
  // Not on clang's channel (no include-default flag for eviction): the
  // in-process worker asks LLVM's default advisor beside the ML one and
  // appends its choice to every observation.
  task.defaultDecisionFeature = "index_to_evict_default";
  // MLEvictAdvisor's candidate 32 (MaxInterferences) is the register being
  // allocated: always valid, and choosing it evicts nothing.
  task.neutralAdvice = 32;
  task.candidateMask = "mask";
  task.actions = 0;
  task.baselineName = "-O2";
  task.measure = Measure::RegAllocScore;
  task.inProcess = InProcessRoute::EvictionChannel;
  task.launcherEnvironment = policies::kEvictionPolicyEnvironment;
  return task;
}

CompilerTask CompilerTask::regallocPriority() {
  CompilerTask task;
  task.name = "regalloc-priority";
  task.summary = "(toy) the greedy register allocator's live-range priorities, two levels, "
                 ".text vs the corpus's own -O2";
  task.interactiveArguments = {"-mllvm", "-regalloc-enable-priority-advisor=release", "-mllvm",
                               "-regalloc-priority-interactive-channel-base={channel}"};
  // A float on clang's channel; the policy's action (0 or 1) is sent as it.
  // LLVM's default priority is not on the channel, so no action is -O2's:
  // the neutral advice (every live range alike) is valid, not neutral.
  task.adviceName = "priority";
  task.neutralAdvice = 0;
  task.baselineName = "-O2";
  // Deployed as eviction is: mlgo-cc runs the compile under mlgo-channel-cc.
  task.launcherEnvironment = policies::kPriorityPolicyEnvironment;
  return task;
}

CompilerTask CompilerTask::passPipeline() {
  CompilerTask task;
  task.name = "pass-pipeline";
  task.summary = "the optimisation pipeline of each module (passes of -Oz skipped, passes added, "
                 "or a replacement), .text vs -Oz";
  // No channel and no per-decision advice: the policy is the pipeline, which
  // the worker applies through PassBuilder's callbacks.
  task.actions = 0;
  task.inProcess = InProcessRoute::PassPipeline;
  task.inProcessOnly = true;
  task.launcherEnvironment = policies::kPipelinePolicyEnvironment;
  return task;
}

std::unique_ptr<policies::Policy> CompilerTask::neutralPolicy() const {
  if (inProcess == InProcessRoute::PassPipeline)
    return std::make_unique<policies::PipelinePolicy>(policies::PassPipeline{});
  return policies::makeConstantPolicy(neutralAdvice);
}

Expected<CompilerTask> CompilerTask::deployedThrough(std::string_view variable) {
  for (const CompilerTask& task : all())
    if (!variable.empty() && task.launcherEnvironment == variable)
      return task;
  return makeError("no task is deployed through " + std::string(variable));
}

const std::vector<CompilerTask>& CompilerTask::all() {
  // The registry: one line per task.
  static const std::vector<CompilerTask> tasks = {inliningForSize(), regallocEviction(),
                                                  regallocPriority(), passPipeline()};
  return tasks;
}

std::vector<std::string> CompilerTask::names() {
  std::vector<std::string> names;
  for (const CompilerTask& task : all())
    names.push_back(task.name);
  return names;
}

Expected<CompilerTask> CompilerTask::named(std::string_view name) {
  for (const CompilerTask& task : all())
    if (task.name == name)
      return task;
  return makeError("unknown task \"" + std::string(name) + "\" (" + alternatives(names()) + ")");
}

const CompilerTask& Scorer::task() const {
  static const CompilerTask inlining = CompilerTask::inliningForSize();
  return inlining;
}

std::string optimisationLevelOf(const corpus::ModuleSpec& module) {
  std::string level;
  for (const std::string& argument : module.storedCommand)
    if (argument.size() >= 3 && argument.starts_with("-O"))
      level = argument;
  return level;
}

std::optional<std::string> optimisationLevelWarning(const corpus::Corpus& corpus,
                                                    const CompilerTask& task) {
  std::map<std::string, size_t> levels;
  for (const corpus::ModuleSpec& module : corpus.modules())
    ++levels[optimisationLevelOf(module)];
  size_t matching = levels.count(task.baselineName) ? levels[task.baselineName] : 0;
  if (matching == corpus.size())
    return std::nullopt;
  std::string built;
  for (const auto& [level, count] : levels)
    if (level != task.baselineName)
      built += (built.empty() ? "" : ", ") + (level.empty() ? std::string("no -O option") : level) +
               " (" + std::to_string(count) + " of " + std::to_string(corpus.size()) + " modules)";
  return "corpus " + corpus.directory().string() + " was built with " + built + ", but the task " +
         task.name + " (--task) compares against " + task.baselineName +
         ": its labels and reports name a baseline these modules were not built for (a recipe "
         "builds its -O2 flavour with --opt-level O2, its -Oz one without)";
}

} // namespace mlgo::evaluators
