#include "mlgo/training/TraceRecording.h"

namespace mlgo::training {

results::TraceModule traceModule(std::string name, const evaluators::JobResult& job,
                                 std::optional<uint64_t> baselineBytes) {
  results::TraceModule row;
  row.name = std::move(name);
  row.status = std::string(evaluators::jobStatusName(job.status));
  row.message = job.message;
  row.sizeBytes = job.sizeBytes;
  row.baselineBytes = baselineBytes;
  row.reward = job.reward;
  row.codeHash = job.codeHash;
  row.seconds = job.seconds;
  return row;
}

results::TraceAttributes taskAttributes(const evaluators::CompilerTask& task) {
  return {{"task", task.name},
          {"default_feature", task.defaultDecisionFeature},
          {"candidate_mask", task.candidateMask}};
}

Status writeTrace(const std::filesystem::path& path, const evaluators::EvaluationResult& result,
                  size_t candidate, const std::vector<const corpus::ModuleSpec*>& modules,
                  const results::TraceAttributes& attributes) {
  const policies::Trajectory* first = nullptr;
  for (size_t m = 0; m < result.moduleCount && !first; ++m)
    if (result.job(candidate, m).trajectory)
      first = &*result.job(candidate, m).trajectory;
  if (!first)
    return makeError(path.string() + ": no module recorded a trajectory (every compile failed "
                                     "or the evaluation did not record trajectories)");
  Expected<results::TraceWriter> writer =
      results::TraceWriter::create(path, first->featureSpecs, attributes);
  if (!writer)
    return writer.error();
  for (size_t m = 0; m < result.moduleCount; ++m) {
    const evaluators::JobResult& job = result.job(candidate, m);
    Status added = writer->addModule(traceModule(modules[m]->name, job, result.baselineBytes[m]),
                                     job.trajectory ? &*job.trajectory : nullptr);
    if (!added)
      return added;
  }
  return writer->close();
}

} // namespace mlgo::training
