// Cluster's insides, shared by Cluster.cpp (join, serve), RemoteBackend.cpp
// (rank 0's side) and Evaluator.cpp.
#pragma once

#include "Transport.h"
#include "mlgo/evaluators/Cluster.h"

#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace mlgo::evaluators {

class Cluster::Impl {
public:
  std::unique_ptr<Transport> transport;

  // Rank 0: where incoming messages go (the remote backend while it lives).
  void setReceiver(Transport::Deliver receiver) {
    std::lock_guard lock(mutex_);
    receiver_ = std::move(receiver);
  }
  void receive(int from, std::string message);

  // Rank 0: the jobs each rank compiled, for statistics().
  void countJobs(const std::vector<size_t>& perRank) {
    std::lock_guard lock(mutex_);
    jobsPerRank_ = perRank;
  }
  std::vector<size_t> jobsPerRank() const {
    std::lock_guard lock(mutex_);
    return jobsPerRank_;
  }

private:
  mutable std::mutex mutex_;
  Transport::Deliver receiver_;
  std::vector<size_t> jobsPerRank_;
};

} // namespace mlgo::evaluators
