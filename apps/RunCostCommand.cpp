#include "RunCostCommand.h"

#include "mlgo/deploy/RunCost.h"
#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/policies/PolicyLocation.h"
#include "mlgo/support/Files.h"
#include "mlgo/training/CodeBaseReport.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace mlgo::apps {

namespace fs = std::filesystem;

namespace {
std::string deployableTasks();
}

deploy::RunCostOptions runCostLocations(const std::string& workDir, const std::string& repository,
                                        const std::string& launcher) {
  deploy::RunCostOptions options;
  options.repository = repository.empty() ? fs::path(MLGO_SOURCE_DIR) : fs::path(repository);
  const char* buildDir = std::getenv("MLGO_BUILD_DIR");
  options.workRoot = fs::absolute(!workDir.empty() ? fs::path(workDir)
                                  : buildDir       ? fs::path(buildDir) / "run-cost"
                                                   : fs::path("build/run-cost"));
  options.launcher = launcher.empty() ? std::string(MLGO_LAUNCHER) : launcher;
  return options;
}

CLI::App* defineRunCostCommand(CLI::App& app, RunCostArgs& args) {
  CLI::App* command = app.add_subcommand(
      "run-cost",
      "Run cost of a policy on benchmark programs (recipes that declare one): each program "
      "built from source through mlgo-cc with the policy and plainly, run on its workload "
      "under cachegrind (a cycle estimate from the counts) and natively (wall time, median "
      "and interval), outputs compared; same as report --measure run-cost");
  command
      ->add_option("policy", args.policy,
                   "Policy file or shipped name deployed by mlgo-cc; heuristic or neutral: "
                   "the plain build alone")
      ->required();
  command->add_option("programs", args.programs,
                      "Benchmark recipes (NAME, or NAME-O2 for another -O level); default: "
                      "--split's --set");
  command->add_option("--split", args.split, "Split file naming benchmark recipes");
  command->add_option("--set", args.set, "Which set of --split")->capture_default_str();
  command
      ->add_option("--task", args.task,
                   "How the policy is deployed and the baseline's -O level: " + deployableTasks() +
                       "; default: the inliner's task")
      ->capture_default_str();
  command->add_option("--pipeline-policy", args.pipelinePolicy,
                      "Also deploy this pass-pipeline policy (with an inliner policy)");
  command->add_option("--opt-level", args.optLevel, "Oz | Os | O1 | O2 | O3; default: the task's");
  command->add_option("--workload", args.workload, "tiny (tests) | full")->capture_default_str();
  command->add_option("--wall-runs", args.wallRuns, "Native runs timed per build (0: none)")
      ->capture_default_str();
  command->add_flag("--no-cachegrind", args.noCachegrind, "Wall time only (no counts, no cost)");
  command
      ->add_option("--cachegrind-runs", args.cachegrindRuns,
                   "Runs under cachegrind per build; more than 1 reports the costs' spread")
      ->capture_default_str();
  command->add_flag("--verify-builds", args.verifyBuilds,
                    "Make every cached build again and fail unless its programs are the cached "
                    "ones byte for byte");
  command->add_option("--work-dir", args.workDir,
                      "Builds, workloads and runs (kept: a second call reuses the builds); "
                      "default: $MLGO_BUILD_DIR/run-cost or build/run-cost");
  command->add_option("--repository", args.repository,
                      "The mlgo-es source tree (its corpus/recipes); default: " MLGO_SOURCE_DIR);
  command->add_option("--launcher", args.launcher, "mlgo-cc; default: " MLGO_LAUNCHER);
  command->add_option("--markdown", args.markdown, "Also write the table to this file");
  command->add_flag("-v,--verbose", args.verbose, "Say what runs");
  return command;
}

namespace {

int fail(const Error& error) {
  std::fprintf(stderr, "mlgo-eval run-cost: error: %s\n", error.message.c_str());
  return 1;
}

Expected<std::vector<std::string>> programsOf(const RunCostArgs& args) {
  if (!args.programs.empty())
    return args.programs;
  if (args.split.empty())
    return makeError("name benchmark programs or give --split FILE");
  MLGO_ASSIGN_OR_RETURN(training::CodeBaseSplit split, training::CodeBaseSplit::read(args.split));
  return split.set(args.set);
}

Expected<deploy::DeployedPolicies> deployed(const RunCostArgs& args,
                                            const evaluators::CompilerTask& task) {
  deploy::DeployedPolicies deployed;
  const bool plain = args.policy == "heuristic" || args.policy == "neutral";
  if (!plain) {
    if (task.launcherEnvironment.empty())
      return makeError("--task " + task.name + ": mlgo-cc cannot deploy this task's policies");
    deployed.policies.emplace_back(task.launcherEnvironment, args.policy);
  }
  if (!args.pipelinePolicy.empty()) {
    if (!plain && task.launcherEnvironment == policies::kPipelinePolicyEnvironment)
      return makeError("--pipeline-policy beside a pass-pipeline policy");
    deployed.policies.emplace_back(policies::kPipelinePolicyEnvironment, args.pipelinePolicy);
  }
  return deployed;
}

// "inlining-size (MLGO_POLICY, -Oz), …": how each task's policies deploy.
std::string deployableTasks() {
  std::string text;
  for (const evaluators::CompilerTask& task : evaluators::CompilerTask::all())
    if (!task.launcherEnvironment.empty())
      text += (text.empty() ? "" : ", ") + task.name + " (" + task.launcherEnvironment + ", " +
              task.baselineName + ")";
  return text;
}

std::string percent(double value, double baseline) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.3f %%", 100.0 * (value - baseline) / baseline);
  return text;
}

std::string wallText(const deploy::WallTime& wall) {
  if (wall.seconds.empty())
    return "–";
  char text[96];
  std::snprintf(text, sizeof text, "%.3f s [%.3f, %.3f]", wall.median, wall.low, wall.high);
  return text;
}

// One table row; the totals are summed by the caller.
std::string row(const std::string& program, const deploy::RunCost& base,
                const deploy::RunCost& policy) {
  char text[512];
  const bool same = base.output == policy.output;
  if (base.counts && policy.counts) {
    std::snprintf(
        text, sizeof text, "| %s | %.0f | %.0f | %s | %s | %s | %s | %s |\n", program.c_str(),
        base.cost, policy.cost, percent(policy.cost, base.cost).c_str(),
        percent(static_cast<double>(policy.counts->ir), static_cast<double>(base.counts->ir))
            .c_str(),
        wallText(base.wall).c_str(), wallText(policy.wall).c_str(),
        same ? "same" : "**DIFFERENT**");
  } else {
    std::snprintf(text, sizeof text, "| %s | – | – | – | – | %s | %s | %s |\n", program.c_str(),
                  wallText(base.wall).c_str(), wallText(policy.wall).c_str(),
                  same ? "same" : "**DIFFERENT**");
  }
  return text;
}

} // namespace

int runRunCost(const RunCostArgs& args) {
  Expected<evaluators::CompilerTask> task =
      args.task.empty()
          ? Expected<evaluators::CompilerTask>(evaluators::CompilerTask::inliningForSize())
          : evaluators::CompilerTask::named(args.task);
  if (!task)
    return fail(makeError("--task: " + task.error().message));
  Expected<std::vector<std::string>> programs = programsOf(args);
  if (!programs)
    return fail(programs.error());
  Expected<deploy::DeployedPolicies> policies = deployed(args, *task);
  if (!policies)
    return fail(policies.error());

  deploy::RunCostOptions options = runCostLocations(args.workDir, args.repository, args.launcher);
  options.workload = args.workload;
  options.wallRuns = args.wallRuns;
  options.cachegrind = !args.noCachegrind;
  options.cachegrindRuns = args.cachegrindRuns;
  options.verifyBuilds = args.verifyBuilds;
  options.verbose = args.verbose;
  const std::string level =
      !args.optLevel.empty() ? args.optLevel : task->baselineName.substr(1); // "-Oz" → "Oz"

  std::string table = "Run cost of " + policies->describe() + " against the plain build (" +
                      args.workload +
                      " workload; cost: cachegrind's Ir + 10·L1 misses + 100·LL misses; wall: "
                      "median [interval])\n\n"
                      "| program | plain cost | policy cost | vs plain | instructions vs plain | "
                      "plain wall | policy wall | output |\n"
                      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n";
  double baseTotal = 0, policyTotal = 0, spread = 0;
  bool differs = false;
  for (const std::string& name : *programs) {
    auto [recipe, programLevel] = deploy::programRecipeAndLevel(name, level);
    options.optLevel = programLevel;
    std::fprintf(stderr, "%s (-%s): plain build\n", recipe.c_str(), programLevel.c_str());
    Expected<deploy::RunCost> base = deploy::measureRunCost(recipe, {}, options);
    if (!base)
      return fail(base.error());
    deploy::RunCost policy = *base;
    if (!policies->plain()) {
      std::fprintf(stderr, "%s (-%s): %s\n", recipe.c_str(), programLevel.c_str(),
                   policies->describe().c_str());
      Expected<deploy::RunCost> measured = deploy::measureRunCost(recipe, *policies, options);
      if (!measured)
        return fail(measured.error());
      policy = measured.take();
    }
    table += row(name, *base, policy);
    spread = std::max({spread, base->costSpread, policy.costSpread});
    baseTotal += base->cost;
    policyTotal += policy.cost;
    differs |= base->output != policy.output;
  }
  if (options.cachegrind) {
    char total[160];
    std::snprintf(total, sizeof total, "| **total** | %.0f | %.0f | **%s** | | | | |\n", baseTotal,
                  policyTotal, percent(policyTotal, baseTotal).c_str());
    table += total;
    if (options.cachegrindRuns > 1) {
      char line[160];
      std::snprintf(line, sizeof line,
                    "\n%zu cachegrind runs per build; the largest spread of a cost between them: "
                    "%.2g %%\n",
                    options.cachegrindRuns, 100 * spread);
      table += line;
    }
  }
  std::fputs(table.c_str(), stdout);
  if (!args.markdown.empty())
    if (Status written = writeFileAtomically(args.markdown, table); !written)
      return fail(written.error());
  if (differs)
    return fail(makeError("a program's output differs from its plain build's (see the table)"));
  return 0;
}

} // namespace mlgo::apps
