// The MPI job around a tool (evaluators/Cluster.h). Every tool that compiles
// opens one first thing in main: started by mpirun/srun as several ranks,
// rank 0 goes on as the tool (its evaluator then spreads jobs over every
// rank) while the other ranks only serve compile jobs and leave main with
// their exit code. Alone, nothing changes.
#pragma once

#include "mlgo/evaluators/Cluster.h"
#include "mlgo/training/CandidateFamilies.h"

#include <cstdio>
#include <memory>
#include <optional>

namespace mlgo::apps {

// The job rank 0 is in, for EvaluatorArgs::toOptions; null when alone.
inline std::shared_ptr<evaluators::Cluster>& joinedCluster() {
  static std::shared_ptr<evaluators::Cluster> cluster;
  return cluster;
}

class ClusterSession {
public:
  explicit ClusterSession(const char* program) {
    Expected<std::shared_ptr<evaluators::Cluster>> joined = evaluators::Cluster::joinIfLaunched();
    if (!joined) {
      std::fprintf(stderr, "%s: error: %s\n", program, joined.error().message.c_str());
      exitCode_ = 1;
      return;
    }
    if (*joined && (*joined)->rank() != 0) {
      exitCode_ = (*joined)->serve(training::candidateFamilyDecoders());
      return; // the cluster ends (MPI_Finalize) here, with *joined
    }
    joinedCluster() = joined.take();
  }
  // Rank 0: tells the other ranks to stop (once the evaluator is gone).
  ~ClusterSession() { joinedCluster().reset(); }

  // Set when main must return now: a serving rank's end, or a failed join.
  std::optional<int> exitCode() const { return exitCode_; }

private:
  std::optional<int> exitCode_;
};

// After a run on several ranks: where the jobs went and what crossed the
// network (rank 0's view).
inline void printClusterTotals() {
  const std::shared_ptr<evaluators::Cluster>& cluster = joinedCluster();
  if (!cluster)
    return;
  evaluators::ClusterStatistics s = cluster->statistics();
  std::printf("cluster: %d MPI ranks; jobs per rank:", cluster->size());
  for (size_t jobs : s.jobsPerRank)
    std::printf(" %zu", jobs);
  std::printf("; rank 0 sent %.2f MB in %llu messages, received %.2f MB\n",
              static_cast<double>(s.bytesSent) / 1e6,
              static_cast<unsigned long long>(s.messagesSent),
              static_cast<double>(s.bytesReceived) / 1e6);
}

} // namespace mlgo::apps
