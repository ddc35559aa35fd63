// A made-up compiler for the pass-pipeline task's searches: each pipeline's
// measure is a known function of its changes (PipelineSearchTest,
// PipelineEsTest).
#pragma once

#include "mlgo/evaluators/Scorer.h"
#include "mlgo/policies/PassPipeline.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace mlgo::training::fakes {

using policies::PassPipeline;

// 1000 units for -Oz; skipping a "good" pass saves 10, any other skip costs
// 5, adding mergefunc saves 7, other additions cost 1, gvn<no-pre> saves
// 12 and other pass parameters cost 1; a replacement
// measures 990 + its length mod 17; an embedded inliner policy saves
// `inlinerSaving` more. Modules named "broken…" fail every
// non-neutral job.
class PipelineCompiler final : public evaluators::Scorer {
public:
  std::set<std::string> good{"GVNPass", "LICMPass", "SROAPass"};
  bool everythingWorse = false;
  double inlinerSaving = 3;
  // Per module: what skipping LICMPass does there instead (default −10).
  std::map<std::string, double> licm;
  size_t jobs = 0;

  const std::string& compilerIdentity() const override { return identity_; }
  const evaluators::CompilerTask& task() const override { return task_; }

  std::vector<evaluators::BaselineResult>
  baselines(std::span<const corpus::ModuleSpec* const> modules) override {
    std::vector<evaluators::BaselineResult> results(modules.size());
    for (evaluators::BaselineResult& baseline : results) {
      baseline.sizeBytes = 1000;
      baseline.measured = 1000.0;
    }
    return results;
  }

  static double measureOf(const PassPipeline& pipeline, const std::set<std::string>& good,
                          bool worse) {
    if (!pipeline.replacement.empty())
      return 990.0 + static_cast<double>(pipeline.replacement.size() % 17);
    double value = 1000;
    for (const policies::SkippedPass& skip : pipeline.skipped)
      value += (!worse && good.count(skip.passClass)) ? -10 : 5;
    for (const auto& [point, passes] : pipeline.additions)
      value += (!worse && passes == "mergefunc") ? -7 : 1;
    // Pass parameters: GVN without PRE saves 12 (more than any other
    // change), any other parameters cost 1.
    for (const auto& [pass, values] : pipeline.parameters)
      value += (!worse && pass == "gvn" && values == "no-pre") ? -12 : 1;
    return value;
  }

  evaluators::EvaluationResult evaluate(const evaluators::EvaluationRequest& request) override {
    evaluators::EvaluationResult result;
    result.candidateCount = request.candidates.size();
    result.moduleCount = request.modules.size();
    for (size_t m = 0; m < result.moduleCount; ++m) {
      result.baselineBytes.push_back(1000);
      result.baselineMeasures.push_back(1000.0);
    }
    for (const policies::Policy* candidate : request.candidates)
      for (const corpus::ModuleSpec* module : request.modules) {
        ++jobs;
        evaluators::JobResult job;
        const auto* pipeline = dynamic_cast<const policies::PipelinePolicy*>(candidate);
        if (!pipeline || module->name.starts_with("broken")) {
          job.status = evaluators::JobStatus::CompilerFailed;
        } else {
          job.status = evaluators::JobStatus::Ok;
          job.measured = measureOf(pipeline->pipeline(), good, everythingWorse);
          const auto& skipped = pipeline->pipeline().skipped;
          if (licm.count(module->name) &&
              std::find(skipped.begin(), skipped.end(),
                        policies::SkippedPass{"LICMPass", std::nullopt}) != skipped.end())
            *job.measured += licm.at(module->name) + 10;
          if (pipeline->inliner())
            *job.measured -= inlinerSaving;
        }
        result.jobs.push_back(std::move(job));
      }
    return result;
  }

private:
  std::string identity_ = "made-up";
  evaluators::CompilerTask task_ = evaluators::CompilerTask::passPipeline();
};

inline std::vector<corpus::ModuleSpec> modulesNamed(std::vector<std::string> names) {
  std::vector<corpus::ModuleSpec> modules(names.size());
  for (size_t i = 0; i < names.size(); ++i)
    modules[i].name = names[i];
  return modules;
}

inline std::vector<const corpus::ModuleSpec*>
pointers(const std::vector<corpus::ModuleSpec>& modules) {
  std::vector<const corpus::ModuleSpec*> result;
  for (const corpus::ModuleSpec& m : modules)
    result.push_back(&m);
  return result;
}

} // namespace mlgo::training::fakes
