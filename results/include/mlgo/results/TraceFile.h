// Trace files: what `mlgo-eval --trace out.h5` writes. The trajectories the
// evaluator recorded for one policy over many modules (every decision's
// observation, the compiler's default, the policy's action and its
// log-probability) plus one row per module with its outcome. Behavioural
// cloning and PPO learn from them, vocabularies are built from them, and
// researchers read them with h5py. The schema is in results/README.md
// ("Trace files"); readTrace checks it.
#pragma once

#include "mlgo/policies/TensorSpec.h"
#include "mlgo/policies/Trajectory.h"
#include "mlgo/policies/Vocabulary.h"
#include "mlgo/results/Hdf5File.h"
#include "mlgo/support/Expected.h"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::results {

inline constexpr std::string_view kTraceFormat = "mlgo-trace";
inline constexpr int64_t kTraceVersion = 1;
// A module's status when it compiled (evaluators::jobStatusName of Ok).
inline constexpr std::string_view kTraceStatusOk = "ok";

// Free-form string attributes of a trace (policy description, corpus path,
// compiler identity, …), stored as file attributes. "format" and "version"
// are reserved.
using TraceAttributes = std::map<std::string, std::string, std::less<>>;

// One row of /modules.
struct TraceModule {
  std::string name;
  std::string status;     // evaluators::jobStatusName of the job, e.g. "ok", "timed-out"
  std::string message;    // what went wrong; empty for "ok"
  uint64_t sizeBytes = 0; // code size (ok only, else 0)
  std::optional<uint64_t> baselineBytes;
  double reward = std::numeric_limits<double>::quiet_NaN(); // ok only, else NaN
  uint64_t codeHash = 0;                                    // ok only, else 0
  double seconds = 0;
  // The module's decisions are rows [firstDecision, firstDecision + decisionCount).
  uint64_t firstDecision = 0;
  uint64_t decisionCount = 0;

  bool ok() const { return status == kTraceStatusOk; }
  bool operator==(const TraceModule& other) const;
};

// Writes a trace decision by decision as modules are added, so a trace never
// has to fit in memory and a crashed run leaves every module added before it.
class TraceWriter {
public:
  // Creates (replacing) `path`. `featureSpecs` are the features every
  // trajectory must carry, in order: clang's header, e.g. the first recorded
  // trajectory's featureSpecs.
  static Expected<TraceWriter> create(const std::filesystem::path& path,
                                      std::vector<policies::TensorSpec> featureSpecs,
                                      const TraceAttributes& attributes = {});

  TraceWriter(TraceWriter&&) noexcept = default;
  TraceWriter& operator=(TraceWriter&&) noexcept = default;

  // Records one (policy, module) job: its outcome (`module`; its first
  // decision and decision count are the writer's to fill) and, if it has one,
  // every decision of its trajectory (a failed job's partial trajectory too;
  // readers filter on the module's status). Size, code hash and reward are
  // written for "ok" modules only (0, 0 and NaN otherwise). A trajectory whose
  // feature specs differ from the trace's, or whose arrays disagree in
  // length, is an error naming the module, and nothing of it is written. If
  // HDF5 itself fails midway, the writer closes the file (modules added
  // before stay readable) and refuses further modules.
  Status addModule(const TraceModule& module, const policies::Trajectory* trajectory);

  size_t moduleCount() const { return modules_; }
  uint64_t decisionCount() const { return decisions_; }
  const std::vector<policies::TensorSpec>& featureSpecs() const { return featureSpecs_; }

  // Writes everything added so far to disk; the writer stays open (a copy
  // of the file then is a complete trace).
  Status flush();
  // Flushes and closes the file. Destroying an unclosed writer closes it too,
  // but loses any error.
  Status close();

private:
  TraceWriter(Hdf5File file, std::vector<policies::TensorSpec> featureSpecs, size_t width)
      : file_(std::move(file)), featureSpecs_(std::move(featureSpecs)), width_(width) {}

  Hdf5File file_;
  std::vector<policies::TensorSpec> featureSpecs_;
  size_t width_ = 0; // values per decision: the sum of the specs' element counts
  size_t modules_ = 0;
  uint64_t decisions_ = 0;
};

// A whole trace in memory.
struct Trace {
  int64_t version = kTraceVersion;
  TraceAttributes attributes; // the free-form ones ("format"/"version" excluded)
  std::vector<policies::TensorSpec> featureSpecs;
  size_t width = 0;                      // values per decision
  std::vector<double> observations;      // decisions × width, row-major
  std::vector<int64_t> defaultDecisions; // -1 where the task has no default
  std::vector<int64_t> actions;
  std::vector<double> logProbabilities;
  std::vector<int64_t> decisionModules; // index into `modules`, per decision
  std::vector<TraceModule> modules;

  size_t decisions() const { return actions.size(); }
  const double* row(size_t decision) const { return observations.data() + decision * width; }
};

// Reads and checks a trace. A file that is not a trace (no or another
// "format" attribute), one of a newer version, or one whose datasets are
// missing or disagree in length is an error naming the file (and dataset).
Expected<Trace> readTrace(const std::filesystem::path& path);

// Appends every scalar feature's observed values (one per decision, over all
// modules whatever their status) to `samples`, keyed by feature name; vector
// features (e.g. embeddings) are skipped. Call once per trace to pool traces.
void appendFeatureSamples(const Trace& trace, policies::FeatureSamples& samples);
// The samples of one trace, for policies::buildVocabulary.
policies::FeatureSamples featureSamples(const Trace& trace);

} // namespace mlgo::results
