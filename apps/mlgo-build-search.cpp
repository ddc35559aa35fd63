// mlgo-build-search PROGRAM ARGS…: what mlgo-cc --mlgo-search runs (the
// launcher execs it with its own name and arguments). One translation unit's
// build-time search (deploy/BuildSearch.h) on one in-process worker, so that
// `make -jN` uses about N cores.
#include "mlgo/deploy/BuildSearch.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/training/UnitSearch.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: mlgo-build-search PROGRAM ARGS… (run by mlgo-cc --mlgo-search)\n";
    return 2;
  }
  std::vector<std::string> arguments(argv + 2, argv + argc);
  std::error_code error;
  const std::string launcher =
      std::filesystem::path(argv[0]).parent_path() / std::filesystem::path(argv[1]).filename();
  mlgo::Expected<mlgo::deploy::LaunchPlan> plan = mlgo::deploy::planLaunch(
      argv[1], launcher, arguments, [](const char* name) { return std::getenv(name); },
      mlgo::deploy::parentExecutable());
  if (!plan) {
    std::cerr << std::filesystem::path(argv[1]).filename().string()
              << ": error: " << plan.error().message << "\n";
    return 1;
  }
  if (!plan->search)
    return mlgo::deploy::runLaunch(*plan);
  auto searcher = [&](const mlgo::deploy::UnitSearchRequest& request)
      -> mlgo::Expected<mlgo::deploy::UnitSearchOutcome> {
    mlgo::evaluators::EvaluatorOptions options;
    options.workers = 1; // the build's -j spreads units over cores
    options.incremental = true;
    options.incrementalVerify = request.verify;
    options.replayVerify = request.verify;
    mlgo::Expected<std::unique_ptr<mlgo::evaluators::Evaluator>> evaluator =
        mlgo::evaluators::Evaluator::create(options,
                                            mlgo::evaluators::CompilerTask::inliningForSize());
    if (!evaluator)
      return evaluator.error();
    return mlgo::training::searchTranslationUnit(**evaluator, request);
  };
  return mlgo::deploy::runSearchLaunch(*plan, searcher);
}
