#include "mlgo/evaluators/CompilerTask.h"

namespace mlgo::evaluators {

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
  task.defaultDecisionFeature = "inlining_default";
  return task;
}

} // namespace mlgo::evaluators
