// Messages between the ranks of an MPI job, as byte strings. One thread (the
// loop) makes every MPI call after initialisation (MPI_THREAD_SERIALIZED):
// other threads post messages into an outbox and get incoming ones through a
// callback on the loop's thread. Sends are non-blocking (two ranks sending
// each other large messages at once never deadlock), and an idle loop sleeps
// instead of spinning in MPI_Recv, so a rank that only forwards jobs leaves
// its cores to the compilers. Messages from one rank to another arrive in the
// order posted (MPI's non-overtaking rule; one tag, one communicator).
#pragma once

#include "mlgo/support/Expected.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace mlgo::evaluators {

struct LaunchEnvironment {
  bool launched = false; // started by an MPI launcher
  int size = 1;          // ranks, as the launcher's environment says
};
// Whether (and as how many ranks) this process was started by mpirun/srun.
LaunchEnvironment launchEnvironment();

class Transport {
public:
  using Deliver = std::function<void(int from, std::string message)>;

  // MPI_Init_thread; fails if MPI is missing from the build or refuses.
  static Expected<std::unique_ptr<Transport>> initialise();
  ~Transport(); // stops the loop (flushing the outbox) and finalises MPI

  int rank() const { return rank_; }
  int size() const { return size_; }
  int localSize() const { return localSize_; }
  const std::string& host() const { return host_; }

  // Any thread: queue `message` for rank `to`.
  void post(int to, std::string message);
  // Runs the loop on a thread of its own / on the calling thread, until
  // stop(); `deliver` is called on the loop's thread.
  void start(Deliver deliver);
  void run(Deliver deliver);
  // Ends the loop once everything posted has been sent.
  void stop();
  // Any thread: ends the whole MPI job at once (MPI_Abort, made on the loop's
  // thread: MPI_THREAD_SERIALIZED), e.g. when a rank has stopped answering.
  void abort(int exitCode);

  uint64_t bytesSent() const { return bytesSent_; }
  uint64_t bytesReceived() const { return bytesReceived_; }
  uint64_t messagesSent() const { return messagesSent_; }

  struct Mpi; // the MPI handles (Transport.cpp)

private:
  Transport() = default;
  void loop(const Deliver& deliver);
  // One pass: post sends, receive at most one message, retire finished sends.
  // Returns whether anything happened.
  bool pump(const Deliver& deliver);

  int rank_ = 0, size_ = 1, localSize_ = 1;
  std::string host_;
  std::unique_ptr<Mpi> mpi_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::pair<int, std::string>> outbox_;
  bool stopping_ = false;
  std::atomic<int> abortCode_{-1}; // >= 0: abort() was asked
  std::thread thread_;
  std::atomic<uint64_t> bytesSent_{0}, bytesReceived_{0}, messagesSent_{0};
};

} // namespace mlgo::evaluators
