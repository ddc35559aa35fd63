// Command-line options shared by the tools that compile under policies:
// one place that maps flags onto EvaluatorOptions.
#pragma once

#include "FilterOptions.h"
#include "mlgo/evaluators/BaselineCache.h"
#include "mlgo/evaluators/Evaluator.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace mlgo::apps {

struct EvaluatorArgs {
  evaluators::EvaluatorOptions defaults;
  std::string clang = defaults.clang;
  size_t workers = defaults.workers;
  double timeoutSeconds = defaults.compileTimeout.count();
  std::string scratch = defaults.scratchDirectory.string();
  std::string baselineCache = evaluators::defaultBaselineCacheDirectory().string();
  bool noBaselineCache = false;
  FilterArgs filters;

  void addTo(CLI::App& app) {
    app.add_option("--clang", clang, "clang-22 executable")->capture_default_str();
    app.add_option("-j,--workers", workers, "Concurrent compilations")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--timeout", timeoutSeconds, "Per-compilation deadline in seconds")
        ->capture_default_str();
    app.add_option("--scratch", scratch, "Directory for FIFOs and objects of running jobs")
        ->capture_default_str();
    app.add_option("--baseline-cache", baselineCache, "On-disk cache of -Oz sizes")
        ->capture_default_str();
    app.add_flag("--no-baseline-cache", noBaselineCache, "Compile every baseline afresh");
    filters.addTo(app);
  }

  Expected<evaluators::EvaluatorOptions> toOptions() const {
    evaluators::EvaluatorOptions options;
    options.clang = clang;
    options.workers = workers;
    options.compileTimeout = std::chrono::duration<double>(timeoutSeconds);
    options.scratchDirectory = scratch;
    if (!noBaselineCache)
      options.baselineCacheDirectory = baselineCache;
    Expected<corpus::CommandLineFilters> parsedFilters = filters.toFilters();
    if (!parsedFilters)
      return parsedFilters.error();
    options.filters = parsedFilters.take();
    if (Status valid = options.validate(); !valid)
      return valid.error();
    return options;
  }
};

} // namespace mlgo::apps
