// Rank 0's backend in an MPI job: every rank's compile slots as one pool,
// rank 0's own local backend included. A job takes a free slot when the
// evaluator's thread for it asks (dynamic load balancing: a slot is taken
// again as soon as its job is done, so slow modules never hold up the rest),
// on the module's home rank when that has one free: the rank that compiled
// the module first keeps its decision-sequence cache for it.
//
// What crosses the network per job: its module (name, bitcode path on the
// shared file system, cc1 arguments), the policy reference, the mode and the
// random key; per rank and evaluation, the candidate family (ES) or each
// policy file once (PPO: one per iteration); back: the JobResult without
// objects (size, code hash, status, decisions, trajectory when asked).
#pragma once

#include "mlgo/evaluators/Backend.h"
#include "mlgo/evaluators/Cluster.h"
#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/evaluators/Evaluator.h"

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace mlgo::evaluators {

namespace cluster {
struct Result;
}

class RemoteBackend final : public Backend {
public:
  // Sends every other rank the options and task, and waits until each says
  // it is ready (or why it is not: the error names the rank and host).
  static Expected<std::unique_ptr<RemoteBackend>> create(std::shared_ptr<Cluster> cluster,
                                                         const EvaluatorOptions& options,
                                                         const CompilerTask& task,
                                                         std::unique_ptr<Backend> local);
  ~RemoteBackend() override;

  BackendKind kind() const override { return BackendKind::Remote; }
  bool needsSerializedPolicy() const override { return true; }
  std::optional<JobResult> compile(const JobSpec& job, const SerializedPolicy* serialized) override;
  BackendStatistics statistics() const override;

  // Compile slots over all ranks: the evaluator runs this many jobs at once.
  size_t slots() const;

private:
  struct Rank {
    std::string host;
    size_t slots = 0;
    size_t busy = 0;
    size_t jobs = 0;
    uint64_t familySent = 0;       // the family this rank holds
    uint64_t policyGeneration = 0; // the generation of the policies it holds
    std::set<uint64_t> policiesSent;
    BackendStatistics counters; // the rank's, as its last result said
  };
  struct Waiting {
    bool done = false;
    JobResult result;
  };

  RemoteBackend(std::shared_ptr<Cluster> cluster, std::unique_ptr<Backend> local,
                size_t localSlots);
  void receive(int from, std::string message);
  void received(int from, cluster::Result result);
  // Blocks until a slot is free; the module's home rank if it has one.
  int acquire(const std::string& moduleKey);
  void release(int rank);
  // Posts the family or policy the job needs (when the rank lacks it) and
  // the job; returns the job's id. Called with mutex_ held.
  uint64_t post(int rank, const JobSpec& job, const SerializedPolicy* serialized);

  std::shared_ptr<Cluster> cluster_;
  std::unique_ptr<Backend> local_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Rank> ranks_;
  size_t ready_ = 0;
  std::string setupError_;
  std::unordered_map<std::string, int> home_;
  std::map<uint64_t, Waiting> waiting_;
  uint64_t nextJob_ = 1;
};

} // namespace mlgo::evaluators
