// Trajectory replay: answering a compilation without compiling.
//
// The compiler is deterministic and a policy sees nothing but the features,
// and the features of decision k+1 are a function of the module and the
// decisions 1..k. So the trajectories already compiled for a module form a
// tree (a trie keyed by decision): each node is a decision prefix, and holds
// either the feature row the compiler shows next, or — when the compilation
// ended there — its outcome (code size and code hash). To replay a job, the
// candidate's policy is run down the tree: at each node it decides on the
// stored row, with the job's own random stream (so sampling replays exactly
// too: the k-th draw of the stream is the same whether the compiler or the
// replay asks); reaching an outcome means the compilation would have made
// exactly these decisions and produced exactly that object. Leaving the tree
// (a decision never taken there before) means the job must be compiled; its
// trajectory then extends the tree.
//
// Compact: a row is stored once per prefix (prefixes are shared), as 32-bit
// integers when its values are (the inliner's features are), else as
// doubles. Bounded: when the store passes its byte budget, the modules used
// least recently are forgotten whole (replay is then only less frequent,
// never different). Safe to use from several threads.
#pragma once

#include "mlgo/evaluators/Job.h"
#include "mlgo/policies/Policy.h"
#include "mlgo/policies/TensorSpec.h"
#include "mlgo/policies/Trajectory.h"
#include "mlgo/support/Expected.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace mlgo::evaluators {

struct ReplayStatistics {
  size_t modules = 0;      // with a stored tree
  size_t nodes = 0;        // decision prefixes stored
  size_t trajectories = 0; // distinct complete trajectories (outcomes)
  size_t bytes = 0;        // memory the trees take (estimated from their sizes)
  size_t evictedModules = 0;
};

class ReplayStore {
public:
  // `memoryBytes`: the budget; `defaultFeature`: the feature carrying the
  // compiler's own decision (stored per node, so a replayed trajectory can
  // report it; rows recorded without it do not serve jobs that need it).
  ReplayStore(size_t memoryBytes, std::string defaultFeature);
  ~ReplayStore();
  ReplayStore(const ReplayStore&) = delete;
  ReplayStore& operator=(const ReplayStore&) = delete;

  // The job's result if `policy`, deciding in `mode` with the stream of
  // `rngKey`, follows a stored trajectory of `module` to its end: status Ok,
  // the stored size and code hash, the decision count, and a trajectory with
  // the policy's actions and log-probabilities (and with `withTrajectory`
  // the stored features and defaults). nullopt: compile it.
  std::optional<JobResult> replay(const std::string& module, const policies::Policy& policy,
                                  policies::DecisionMode mode, uint64_t rngKey,
                                  bool withTrajectory);

  // Adds a compiled job's complete trajectory and outcome. `fullCompile`:
  // the compiler ran to the end (not a decision-cache hit), so its time
  // counts towards the module's mean compile time. An error when the
  // trajectory contradicts what is stored (the compiler showed other
  // features after the same decisions, or ended elsewhere): replay would be
  // wrong for this module, which is forgotten.
  // `measured`: the outcome in the task's measure (JobResult::measured).
  Status learn(const std::string& module, const policies::Trajectory& trajectory,
               uint64_t sizeBytes, uint64_t codeHash, double seconds, bool fullCompile,
               std::optional<double> measured = std::nullopt);

  // Mean time a full compile of the module took (0 if none was seen).
  double meanCompileSeconds(const std::string& module) const;

  ReplayStatistics statistics() const;
  size_t memoryBudget() const { return budget_; }

private:
  struct ModuleTree;
  std::shared_ptr<ModuleTree> find(const std::string& module) const;
  void evictBeyondBudget(const std::string& keep);

  size_t budget_;
  std::string defaultFeature_;
  mutable std::mutex mutex_; // the map and the eviction order
  std::map<std::string, std::shared_ptr<ModuleTree>> modules_;
  std::atomic<size_t> bytes_{0};
  std::atomic<uint64_t> clock_{0};
  size_t evicted_ = 0;
};

} // namespace mlgo::evaluators
