// Cluster's insides, shared by Cluster.cpp (join, serve), RemoteBackend.cpp
// (rank 0's side) and Evaluator.cpp.
#pragma once

#include "Transport.h"
#include "mlgo/evaluators/Cluster.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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

  // Rank 0: ends the MPI job when another rank has sent nothing (ranks send
  // a heartbeat every second while they serve) for `deadline`: a stopped,
  // hung or cut-off rank would otherwise leave rank 0 waiting for ever. The
  // first call starts the watch (every rank counts as heard from then); a
  // later one only changes the deadline.
  void watchRanks(std::chrono::duration<double> deadline);
  void noteHost(int rank, const std::string& host);
  // Before the job ends normally (the ranks stop their heartbeats).
  void stopWatching();
  ~Impl() { stopWatching(); }

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
  void watch();

  mutable std::mutex mutex_;
  Transport::Deliver receiver_;
  std::vector<size_t> jobsPerRank_;
  // The watch: when each rank was last heard from, and its host.
  std::vector<std::chrono::steady_clock::time_point> lastHeard_;
  std::vector<std::string> hosts_;
  std::chrono::duration<double> deadline_{0};
  bool watching_ = false;
  std::condition_variable watchChanged_;
  std::thread watchdog_;
};

} // namespace mlgo::evaluators
