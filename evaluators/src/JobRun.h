// One job's clock and result, as both backends keep them: started now, due
// at the compile timeout; finish() stamps the status, the message (prefixed
// with the module) and the seconds.
#pragma once

#include "mlgo/evaluators/Job.h"
#include "mlgo/evaluators/Process.h"

#include <chrono>
#include <string>

namespace mlgo::evaluators {

struct JobRun {
  JobRun(const corpus::ModuleSpec& module, std::chrono::duration<double> timeout)
      : module(module), start(Clock::now()),
        deadline(start + std::chrono::duration_cast<Clock::duration>(timeout)) {}

  JobResult finish(JobStatus status, std::string message) {
    result.status = status;
    if (!message.empty())
      result.message = "module \"" + module.name + "\": " + message;
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return std::move(result);
  }

  const corpus::ModuleSpec& module;
  const Clock::time_point start;
  const Clock::time_point deadline;
  JobResult result;
};

} // namespace mlgo::evaluators
