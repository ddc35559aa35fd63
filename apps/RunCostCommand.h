// mlgo-eval run-cost (and report --measure run-cost): a policy's run cost
// on benchmark programs against the plain build (docs/run-cost.md).
#pragma once

#include "mlgo/deploy/RunCost.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace mlgo::apps {

struct RunCostArgs {
  std::string policy; // a policy file or shipped name; heuristic/neutral: plain
  std::vector<std::string>
      programs;      // benchmark recipes (NAME or NAME-O2); default: --split's --set
  std::string split; // a split file naming benchmark recipes
  std::string set = "test";
  std::string task;           // how the policy is deployed, and the -O level; "": the inliner's
  std::string pipelinePolicy; // also deploy this pass-pipeline policy
  std::string optLevel;       // default: the task's baseline level
  std::string workload = "full";
  size_t wallRuns = 5;
  bool noCachegrind = false;
  size_t cachegrindRuns = 1;
  bool verifyBuilds = false;
  std::string workDir;    // default: $MLGO_BUILD_DIR/run-cost or build/run-cost
  std::string repository; // default: the source tree this was built from
  std::string launcher;   // default: the mlgo-cc built beside this
  std::string markdown;
  bool verbose = false;
};

CLI::App* defineRunCostCommand(CLI::App& app, RunCostArgs& args);
// Where benchmark programs are built and measured unless told otherwise
// (mlgo-eval run-cost, es-train --programs): this source tree's recipes,
// the mlgo-cc built beside the tool, $MLGO_BUILD_DIR/run-cost or
// build/run-cost (so the tools share their plain builds). Empty arguments
// take those defaults.
deploy::RunCostOptions runCostLocations(const std::string& workDir = "",
                                        const std::string& repository = "",
                                        const std::string& launcher = "");
int runRunCost(const RunCostArgs& args);

} // namespace mlgo::apps
