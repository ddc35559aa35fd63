#include "StandInBackend.h"

#include "JobRun.h"
#include "mlgo/support/Random.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace mlgo::evaluators {

namespace {

uint64_t hashBytes(std::string_view bytes, uint64_t seed) {
  uint64_t h = seed ^ 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes)
    h = (h ^ c) * 0x100000001b3ULL;
  return mix64(h);
}

} // namespace

StandInBackend::StandInBackend(std::map<std::string, double> seconds)
    : seconds_(std::move(seconds)) {
  std::vector<double> values;
  for (const auto& [module, s] : seconds_)
    values.push_back(s);
  if (!values.empty()) {
    std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
    median_ = values[values.size() / 2];
  }
}

Expected<std::unique_ptr<StandInBackend>> StandInBackend::fromEnvironment() {
  const char* file = std::getenv("MLGO_STANDIN_COMPILER");
  if (!file || !*file)
    return std::unique_ptr<StandInBackend>();
  std::ifstream in(file);
  if (!in)
    return makeError("MLGO_STANDIN_COMPILER: cannot read " + std::string(file));
  std::map<std::string, double> seconds;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    size_t tab = line.find('\t');
    char* end = nullptr;
    double s = tab == std::string::npos ? -1 : std::strtod(line.c_str(), &end);
    if (line.empty())
      continue;
    if (s < 0 || end != line.c_str() + tab)
      return makeError(std::string(file) + ":" + std::to_string(number) +
                       ": expected SECONDS<TAB>MODULE");
    seconds[line.substr(tab + 1)] = s;
  }
  return std::unique_ptr<StandInBackend>(new StandInBackend(std::move(seconds)));
}

std::optional<JobResult> StandInBackend::compile(const JobSpec& job,
                                                 const SerializedPolicy* serialized) {
  JobRun run(*job.module, std::chrono::seconds(3600));
  auto known = seconds_.find(job.module->name);
  const double seconds = known != seconds_.end() ? known->second : median_;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  ++jobs_;
  // -Oz: 1 to 65 KiB by module; a policy moves it by up to ±2 %.
  const uint64_t baseline = 1024 + hashBytes(job.module->name, 1) % (64 * 1024);
  uint64_t size = baseline;
  if (job.policy && serialized) {
    const uint64_t h = hashBytes(serialized->json, hashBytes(job.module->name, job.rngKey));
    size = baseline * (10000 + h % 401 - 200) / 10000;
  }
  run.result.sizeBytes = size;
  run.result.codeHash = hashBytes(job.module->name, size);
  return run.finish(JobStatus::Ok, "");
}

BackendStatistics StandInBackend::statistics() const {
  BackendStatistics s;
  s.jobs = jobs_;
  return s;
}

} // namespace mlgo::evaluators
