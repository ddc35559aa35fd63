// A stand-in compiler for measuring how the evaluator and the MPI exchange
// scale beyond this machine: a job sleeps for its module's compile time
// (taken from a real corpus, read from MLGO_STANDIN_COMPILER) and answers a
// made-up size that depends only on the module and the policy, so runs stay
// deterministic and comparable. It uses no CPU: 32 ranks of it fit on two
// cores. Never the default; selected by the environment variable only.
#pragma once

#include "mlgo/evaluators/Backend.h"

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

namespace mlgo::evaluators {

class StandInBackend final : public Backend {
public:
  // The variable's value: a file of "SECONDS<TAB>MODULE" lines; modules it
  // does not name take the median. Null when the variable is unset.
  static Expected<std::unique_ptr<StandInBackend>> fromEnvironment();

  BackendKind kind() const override { return BackendKind::InProcess; }
  bool needsSerializedPolicy() const override { return true; }
  std::optional<JobResult> compile(const JobSpec& job, const SerializedPolicy* serialized) override;
  BackendStatistics statistics() const override;

private:
  explicit StandInBackend(std::map<std::string, double> seconds);
  std::map<std::string, double> seconds_;
  double median_ = 0.1;
  std::atomic<size_t> jobs_{0};
};

} // namespace mlgo::evaluators
