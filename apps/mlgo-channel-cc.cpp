// mlgo-channel-cc: runs a compiler command with a task's policy answering
// clang's interactive channel (mlgo-cc --mlgo-eviction-policy runs this:
// the launcher itself must not load the evaluator's libraries).
//   mlgo-channel-cc --task TASK --policy FILE -- COMPILER ARGS…
//   mlgo-channel-cc --through VARIABLE --policy FILE -- COMPILER ARGS…
// (--through: the task mlgo-cc deploys through that environment variable,
// CompilerTask::launcherEnvironment).
#include "mlgo/evaluators/ChannelCompile.h"
#include "mlgo/policies/PolicyFile.h"
#include "mlgo/policies/PolicyLocation.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace {

int usage() {
  std::cerr << "usage: mlgo-channel-cc (--task TASK | --through VARIABLE) --policy FILE -- "
               "COMPILER ARGUMENTS…\n";
  return 2;
}

int fail(const std::string& message) {
  std::cerr << "mlgo-channel-cc: error: " << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> arguments(argv + 1, argv + argc);
  std::string task, through, policy;
  size_t i = 0;
  for (; i < arguments.size() && arguments[i] != "--"; ++i) {
    if (i + 1 >= arguments.size())
      return usage();
    if (arguments[i] == "--task")
      task = arguments[++i];
    else if (arguments[i] == "--through")
      through = arguments[++i];
    else if (arguments[i] == "--policy")
      policy = arguments[++i];
    else
      return usage();
  }
  if (task.empty() == through.empty() || policy.empty() || i + 1 >= arguments.size())
    return usage();
  mlgo::Expected<mlgo::evaluators::CompilerTask> compilerTask =
      task.empty() ? mlgo::evaluators::CompilerTask::deployedThrough(through)
                   : mlgo::evaluators::CompilerTask::named(task);
  if (!compilerTask)
    return fail(compilerTask.error().message);
  mlgo::Expected<std::filesystem::path> file = mlgo::policies::policyFileFor(policy);
  if (!file)
    return fail("--policy " + policy + ": " + file.error().message);
  mlgo::Expected<std::unique_ptr<mlgo::policies::Policy>> loaded =
      mlgo::policies::loadPolicy(*file);
  if (!loaded)
    return fail(loaded.error().message);
  const char* temporary = std::getenv("TMPDIR");
  mlgo::Expected<int> status = mlgo::evaluators::runCompilerWithChannel(
      *compilerTask, **loaded, arguments[i + 1],
      std::vector<std::string>(arguments.begin() + static_cast<std::ptrdiff_t>(i) + 2,
                               arguments.end()),
      temporary && *temporary ? temporary : "/tmp");
  if (!status)
    return fail(status.error().message);
  return *status;
}
