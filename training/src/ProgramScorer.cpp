#include "mlgo/training/ProgramScorer.h"

#include "mlgo/policies/PolicyFile.h"
#include "mlgo/support/Files.h"
#include "mlgo/support/Sha256.h"

#include <chrono>
#include <cstdio>

namespace mlgo::training {

namespace {

evaluators::JobResult failedJob(evaluators::JobStatus status, std::string message) {
  evaluators::JobResult job;
  job.status = status;
  job.message = std::move(message);
  return job;
}

} // namespace

ProgramRunCostScorer::ProgramRunCostScorer(evaluators::CompilerTask task,
                                           std::filesystem::path candidateDirectory,
                                           std::string level, MeasureProgram measure)
    : task_(std::move(task)), candidateDirectory_(std::move(candidateDirectory)),
      level_(std::move(level)), measure_(std::move(measure)) {
  task_.measure = evaluators::Measure::RunCost;
  identity_ = "clang-22 through mlgo-cc; run cost under cachegrind (task " + task_.name + ")";
}

Expected<ProgramRunCostScorer>
ProgramRunCostScorer::deployed(evaluators::CompilerTask task, deploy::RunCostOptions options,
                               std::filesystem::path candidateDirectory) {
  if (task.launcherEnvironment.empty())
    return makeError("task " + task.name + ": mlgo-cc cannot deploy its policies");
  if (!options.cachegrind)
    return makeError("the run-cost measure needs cachegrind's counts");
  MLGO_TRY(options.validate());
  const std::string level = options.optLevel;
  return ProgramRunCostScorer(std::move(task), std::move(candidateDirectory), level,
                              [options](const std::string& recipe, const std::string& programLevel,
                                        const deploy::DeployedPolicies& policies) {
                                deploy::RunCostOptions at = options;
                                at.optLevel = programLevel;
                                return deploy::measureRunCost(recipe, policies, at);
                              });
}

const Expected<deploy::RunCost>& ProgramRunCostScorer::plain(const std::string& program) {
  auto found = plain_.find(program);
  if (found == plain_.end()) {
    auto [recipe, level] = deploy::programRecipeAndLevel(program, level_);
    ++measured_;
    found = plain_.emplace(program, measure_(recipe, level, {})).first;
  }
  return found->second;
}

std::vector<evaluators::BaselineResult>
ProgramRunCostScorer::baselines(std::span<const corpus::ModuleSpec* const> modules) {
  std::vector<evaluators::BaselineResult> results;
  for (const corpus::ModuleSpec* module : modules) {
    evaluators::BaselineResult result;
    if (const Expected<deploy::RunCost>& run = plain(module->name); run && run->counts)
      result.measured = run->cost;
    else
      result.message =
          module->name + ": " + (run ? std::string("no cachegrind counts") : run.error().message);
    results.push_back(std::move(result));
  }
  return results;
}

evaluators::JobResult ProgramRunCostScorer::job(const policies::Policy& candidate,
                                                const std::string& program) {
  const auto started = std::chrono::steady_clock::now();
  const Expected<deploy::RunCost>& base = plain(program);
  if (!base || !base->counts)
    return failedJob(evaluators::JobStatus::BaselineUnavailable,
                     program + ": the plain build's run failed" +
                         (base ? std::string() : ": " + base.error().message));
  // The candidate as a file named by its contents: the same candidate is the
  // same file, so its build is reused (measureRunCost caches by contents).
  Expected<std::string> json = policies::policyToJson(candidate);
  if (!json)
    return failedJob(evaluators::JobStatus::SetupFailed, program + ": " + json.error().message);
  const std::filesystem::path file =
      candidateDirectory_ / ("candidate-" + sha256Hex(*json).substr(0, 16) + ".json");
  if (!std::filesystem::exists(file))
    if (Status written = writeFileAtomically(file, *json); !written)
      return failedJob(evaluators::JobStatus::SetupFailed,
                       program + ": " + written.error().message);
  auto [recipe, level] = deploy::programRecipeAndLevel(program, level_);
  ++measured_;
  Expected<deploy::RunCost> run =
      measure_(recipe, level, {{{task_.launcherEnvironment, file.string()}}});
  if (!run)
    return failedJob(evaluators::JobStatus::CompilerFailed, program + ": " + run.error().message);
  if (!run->counts)
    return failedJob(evaluators::JobStatus::BadObject, program + ": no cachegrind counts");
  if (run->output != base->output)
    return failedJob(evaluators::JobStatus::BadObject,
                     program + ": its output differs from the plain build's (" +
                         run->build.string() + ")");
  evaluators::JobResult result;
  result.status = evaluators::JobStatus::Ok;
  result.measured = run->cost;
  result.reward = task_.reward(run->cost, base->cost);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

evaluators::EvaluationResult
ProgramRunCostScorer::evaluate(const evaluators::EvaluationRequest& request) {
  const auto started = std::chrono::steady_clock::now();
  evaluators::EvaluationResult result;
  result.candidateCount = request.candidates.size();
  result.moduleCount = request.modules.size();
  result.measure = task_.measure;
  result.reward = task_.reward;
  for (const evaluators::BaselineResult& baseline : baselines(request.modules)) {
    result.baselineBytes.push_back(std::nullopt);
    result.baselineMeasures.push_back(baseline.measured);
  }
  std::error_code error;
  std::filesystem::create_directories(candidateDirectory_, error);
  for (size_t c = 0; c < request.candidates.size(); ++c)
    for (size_t m = 0; m < request.modules.size(); ++m) {
      if (request.showProgress)
        std::fprintf(stderr, "run cost: candidate %zu of %zu, %s\n", c + 1,
                     request.candidates.size(), request.modules[m]->name.c_str());
      result.jobs.push_back(job(*request.candidates[c], request.modules[m]->name));
    }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

std::vector<corpus::ModuleSpec> programModules(const std::vector<std::string>& programs) {
  std::vector<corpus::ModuleSpec> modules(programs.size());
  for (size_t i = 0; i < programs.size(); ++i)
    modules[i].name = programs[i];
  return modules;
}

} // namespace mlgo::training
