// mlgo-cc / mlgo-c++: clang-22 with a trained inlining policy
// (mlgo::deploy::planLaunch says what it adds; --mlgo-help).
#include "mlgo/deploy/BuildSearch.h"
#include "mlgo/deploy/Launcher.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

int main(int argc, char** argv) {
  std::vector<std::string> arguments(argv + 1, argv + argc);
  std::error_code error;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", error).string();
  mlgo::Expected<mlgo::deploy::LaunchPlan> plan = mlgo::deploy::planLaunch(
      argv[0], self, arguments, [](const char* name) { return std::getenv(name); },
      mlgo::deploy::parentExecutable());
  if (!plan) {
    std::cerr << std::filesystem::path(argv[0]).filename().string()
              << ": error: " << plan.error().message << "\n";
    return 1;
  }
  if (plan->options.help) {
    std::cout << mlgo::deploy::launcherHelp(argv[0]);
    return 0;
  }
  if (plan->options.cacheStats || plan->options.cacheClear)
    return mlgo::deploy::runCacheCommand(*plan, [](const char* name) { return std::getenv(name); });
  if (plan->search) {
    // The search itself runs in its own program, which loads the evaluator.
    mlgo::Expected<std::string> program =
        mlgo::deploy::locateSearchProgram(self, [](const char* name) { return std::getenv(name); });
    if (!program) {
      std::cerr << "mlgo-cc: error: " << program.error().message << "\n";
      return 1;
    }
    return mlgo::deploy::runSearchLaunch(*plan, mlgo::deploy::searchProgram(*program));
  }
  return mlgo::deploy::runLaunch(*plan);
}
