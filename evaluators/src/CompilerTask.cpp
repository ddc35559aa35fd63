#include "mlgo/evaluators/CompilerTask.h"

namespace mlgo::evaluators {

double RelativeReward::operator()(uint64_t measured, uint64_t baseline) const {
  return 1.0 - (static_cast<double>(measured) + delta) / (static_cast<double>(baseline) + delta);
}

std::vector<std::string>
CompilerTask::argumentsFor(const std::filesystem::path& channelBase) const {
  static constexpr std::string_view placeholder = "{channel}";
  std::vector<std::string> arguments = interactiveArguments;
  for (std::string& argument : arguments)
    for (size_t at = argument.find(placeholder); at != std::string::npos;
         at = argument.find(placeholder, at))
      argument.replace(at, placeholder.size(), channelBase.string());
  return arguments;
}

CompilerTask CompilerTask::inliningForSize() {
  CompilerTask task;
  task.name = "inlining-size";
  task.interactiveArguments = {"-mllvm", "-enable-ml-inliner=release",
                               "-mllvm", "-inliner-interactive-channel-base={channel}",
                               "-mllvm", "-inliner-interactive-include-default"};
  task.adviceName = "inlining_decision";
  task.defaultDecisionFeature = "inlining_default";
  return task;
}

} // namespace mlgo::evaluators
